package fabric

import (
	"strings"
	"testing"
)

// A bond's aggregate is numbered from its name within the declared range, the same every time,
// and the range recognises its own names only.
func TestAggregateOf(t *testing.T) {
	a := Aggregates{First: 1000, Last: 1099, Prefix: "PortChannel"}
	seen := map[int]bool{}
	for _, host := range []string{"bm0", "bm1", "bm2", "bm3", "bm4", "bm5", "bm6", "bm7"} {
		lag := LAGName(host, "control")
		name, n := a.AggregateOf(lag)
		if again, _ := a.AggregateOf(lag); again != name {
			t.Fatalf("bond %s numbered %s, then %s", lag, name, again)
		}
		if n < 1000 || n > 1099 || name != "PortChannel"+strings.TrimPrefix(name, "PortChannel") || !a.Owns(name) {
			t.Errorf("bond %s got %s (%d), outside PortChannel1000-1099", lag, name, n)
		}
		seen[n] = true
	}
	if len(seen) < 6 {
		t.Errorf("8 bonds took only %d numbers of 100: the names do not spread", len(seen))
	}
	for _, other := range []string{"PortChannel999", "PortChannel1100", "PortChannel01000", "Port-Channel1000", "PortChannel", "Ethernet1000"} {
		if a.Owns(other) {
			t.Errorf("the range 1000-1099 claims %s, which is not in it", other)
		}
	}
	one := Aggregates{First: 5, Last: 5, Prefix: "ae"}
	if name, n := one.AggregateOf("lag0123456789"); name != "ae5" || n != 5 {
		t.Errorf("a range of one number gave %s", name)
	}
}

func TestCheckAggregates(t *testing.T) {
	if err := CheckAggregates("leaf1", "sonic", nil); err == nil || !strings.Contains(err.Error(), "spec.switches[leaf1].aggregates") {
		t.Errorf("no range: %v, want the field named", err)
	}
	if err := CheckAggregates("leaf1", "openconfig", &Aggregates{First: 9, Last: 3, Prefix: "ae"}); err == nil || !strings.Contains(err.Error(), "9-3") {
		t.Errorf("a range upside down: %v", err)
	}
	if err := CheckAggregates("leaf1", "openconfig", &Aggregates{First: 1, Last: 3}); err == nil || !strings.Contains(err.Error(), "aggregates.prefix") {
		t.Errorf("no prefix: %v", err)
	}
	if err := CheckAggregates("leaf1", "sonic", &Aggregates{First: 1, Last: 3, Prefix: "PortChannel"}); err != nil {
		t.Errorf("a good range: %v", err)
	}
}
