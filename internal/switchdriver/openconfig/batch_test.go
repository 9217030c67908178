package openconfig_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/metalwire/metalwire/internal/switchtest/gnmitest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// A batch with a bond and an access list goes as one Set that the target checks against the
// whole schema (openconfig-if-aggregate, openconfig-lacp and openconfig-acl at once); both read
// back as asked, so the next pass sends nothing, and leaving removes both in one more Set.
func TestBondAndListInOneSet(t *testing.T) {
	tg := gnmitest.Start(t, "Ethernet1", "Ethernet2", "Ethernet3")
	bond := fabric.LAGName("host-a", "control")
	acl := hostList("Ethernet3")
	want := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}, {ID: 1002}},
		LAGs: map[string]fabric.LAG{bond: {Name: bond, Members: []string{"Ethernet1", "Ethernet2"}, LACP: true,
			Port: fabric.Port{Name: bond, Mode: fabric.ModeAccess, VLAN: 1001}}},
		Ports: map[string]fabric.Port{"Ethernet3": {Name: "Ethernet3", Mode: fabric.ModeAccess, VLAN: 1002}},
		ACLs:  map[string]fabric.ACL{acl.Name: acl}}
	pass := func(want fabric.State, rec fabric.Record) fabric.State {
		t.Helper()
		sess := lagSession(t, tg, &ocRange)
		ctx := context.Background()
		names := slices.Concat([]string{"Ethernet1", "Ethernet2", "Ethernet3"}, rec.LAGs, rec.ACLs,
			slices.Collect(maps.Keys(want.LAGs)), slices.Collect(maps.Keys(want.ACLs)))
		have, err := sess.Read(ctx, slices.Compact(slices.Sorted(slices.Values(names))))
		if err != nil {
			t.Fatal(err)
		}
		if err := sess.Apply(ctx, fabric.Diff(want, have, rec, 1)); err != nil {
			t.Fatal(err)
		}
		return have
	}
	pass(want, fabric.Record{})
	if tg.Sets() != 1 {
		t.Fatalf("%d Sets, want the bond and the list in one", tg.Sets())
	}
	for _, c := range []struct{ what, got, want string }{
		{"bond lag-type", ifLeaf(tg, aggOf(bond), "aggregation/config/lag-type"), "LACP"},
		{"bond LACP interval", tg.Leaf("/lacp/interfaces/interface[name=" + aggOf(bond) + "]/config/interval"), "SLOW"},
		{"Ethernet2 aggregate", ifLeaf(tg, "Ethernet2", "ethernet/config/aggregate-id"), aggOf(bond)},
		{"list bound", bound(tg, "Ethernet3", "ingress", acl.Name+"-in", "ACL_IPV4"), acl.Name + "-in"},
	} {
		if c.got != c.want {
			t.Errorf("%s: target shows %q, want %q", c.what, c.got, c.want)
		}
	}
	have := pass(want, fabric.RecordOf(want))
	if tg.Sets() != 1 {
		t.Fatalf("second pass sent a Set (%d in all): the bond or the list did not read back as asked", tg.Sets())
	}
	if !fabric.SameLAG(have.LAGs[bond], want.LAGs[bond]) {
		t.Errorf("bond reads back as %s", have.LAGs[bond].Describe())
	}
	pass(fabric.State{}, fabric.RecordOf(want))
	if tg.Sets() != 2 {
		t.Fatalf("leaving: %d Sets in all, want one more", tg.Sets())
	}
	if got := ifLeaf(tg, aggOf(bond), "config/type"); got != "" {
		t.Errorf("the bond's aggregate is still there (%q)", got)
	}
	if got := bound(tg, "Ethernet3", "ingress", acl.Name+"-in", "ACL_IPV4"); got != "" {
		t.Errorf("the list is still bound")
	}
}
