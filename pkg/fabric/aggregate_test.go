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

// A bond on a switch that numbers its bonds needs the switch's range; a static bond is refused
// where the OS makes LACP bonds only; the others pass.
func TestBondRefusal(t *testing.T) {
	agg := &Aggregates{First: 1000, Last: 1999}
	cases := []struct {
		os     string
		agg    *Aggregates
		static bool
		want   string
	}{
		{"sonic", nil, false, "set spec.switches[leaf1].aggregates"},
		{"openconfig", nil, false, "set spec.switches[leaf1].aggregates"},
		{"sonic", agg, true, "set lag.mode lacp"},
		{"sonic", agg, false, ""},
		{"openconfig", &Aggregates{First: 1, Last: 9, Prefix: "ae"}, true, ""},
		{"eos", nil, true, ""},
	}
	for _, c := range cases {
		err := BondRefusal("bm0", "control", "leaf1", c.os, c.agg, c.static)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s (range %v, static %v): %v, want none", c.os, c.agg, c.static, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "host bm0: network control")):
			t.Errorf("%s (range %v, static %v): %v, want it to name the host, network and %q", c.os, c.agg, c.static, err, c.want)
		}
	}
}
