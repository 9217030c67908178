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

// Bonds claim their switch's numbers in order: the first has its number, a later bond of another
// name on it is refused naming both hosts, the switch and the remedy; the same bond claiming again
// is no collision; a switch without a range, or another switch, is not involved.
func TestAggregateBook(t *testing.T) {
	one := Aggregates{First: 7, Last: 7, Prefix: "PortChannel"} // every bond lands on 7
	book := NewAggregateBook(map[string]Aggregates{"leaf1": one, "leaf2": one})
	bm0 := AggregateHolder{Switch: "leaf1", Bond: LAGName("bm0", "control"), Host: "bm0", Network: "control"}
	bm1 := AggregateHolder{Switch: "leaf1", Bond: LAGName("bm1", "control"), Host: "bm1", Network: "control"}
	if err := book.Claim(bm0); err != nil {
		t.Fatalf("the first bond was refused: %v", err)
	}
	if err := book.Claim(bm0); err != nil {
		t.Errorf("the same bond claiming again was refused: %v", err)
	}
	err := book.Claim(bm1)
	if err == nil {
		t.Fatal("a second bond on aggregate 7 was taken")
	}
	for _, want := range []string{"host bm1: network control's bond (" + bm1.Bond + ") on switch leaf1 would be aggregate PortChannel7",
		"which host bm0's bond for network control (" + bm0.Bond + ") has", "spec.switches[leaf1].aggregates 7-7", "wider range"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if err := book.Check(bm1); err == nil {
		t.Error("Check took the refused bond after all")
	}
	for _, free := range []AggregateHolder{
		{Switch: "leaf2", Bond: bm1.Bond, Host: "bm1", Network: "control"}, // another switch
		{Switch: "leaf3", Bond: bm1.Bond, Host: "bm1", Network: "control"}, // no range: named by the switch
	} {
		if err := book.Claim(free); err != nil {
			t.Errorf("bond on %s refused: %v", free.Switch, err)
		}
	}

	// A bond the switch still carries for a host that left holds its number until it is removed;
	// its host, once known, is named instead.
	book = NewAggregateBook(map[string]Aggregates{"leaf1": one})
	if err := book.Claim(AggregateHolder{Switch: "leaf1", Bond: bm0.Bond}); err != nil {
		t.Fatal(err)
	}
	if err := book.Claim(bm1); err == nil || !strings.Contains(err.Error(), "bond "+bm0.Bond+", which switch leaf1 still carries for a host that left") {
		t.Errorf("a bond the switch carries: %v", err)
	}
	if err := book.Claim(bm0); err != nil {
		t.Fatal(err)
	}
	if err := book.Check(bm1); err == nil || !strings.Contains(err.Error(), "which host bm0's bond") {
		t.Errorf("the carried bond's host is not named: %v", err)
	}
}
