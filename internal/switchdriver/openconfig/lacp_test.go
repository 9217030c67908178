package openconfig_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/openconfig/ygot/ygot"

	"github.com/metalwire/metalwire/internal/switchdriver/openconfig"
	"github.com/metalwire/metalwire/internal/switchtest/gnmitest"
	"github.com/metalwire/metalwire/internal/switchtest/gnmitest/oc"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// ocRange is the aggregates the tests' switch gives metalwire, named as EOS names them.
var ocRange = fabric.Aggregates{First: 1, Last: 999, Prefix: "Port-Channel"}

func lagEndpoint(tg *gnmitest.Target, agg *fabric.Aggregates) fabric.Endpoint {
	ep := endpoint(tg)
	ep.Aggregates = agg
	ep.IdleVLAN = 1
	return ep
}

func lagSession(t *testing.T, tg *gnmitest.Target, agg *fabric.Aggregates) fabric.Session {
	t.Helper()
	sess, err := openconfig.New().Connect(context.Background(), lagEndpoint(tg, agg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// lagPass is one reconcile of bonds and ports: read what the fabric names, diff, one Set.
func lagPass(t *testing.T, tg *gnmitest.Target, want fabric.State, rec fabric.Record) (fabric.State, error) {
	t.Helper()
	sess := lagSession(t, tg, &ocRange)
	ctx := context.Background()
	names := slices.Concat(rec.Ports, rec.LAGs, slices.Collect(maps.Keys(want.Ports)), slices.Collect(maps.Keys(want.LAGs)))
	have, err := sess.Read(ctx, slices.Compact(slices.Sorted(slices.Values(names))))
	if err != nil {
		return fabric.State{}, err
	}
	return have, sess.Apply(ctx, fabric.Diff(want, have, rec, 1))
}

func aggOf(lag string) string {
	a, _ := ocRange.AggregateOf(lag)
	return a
}

func ifLeaf(tg *gnmitest.Target, iface, path string) string {
	return tg.Leaf("/interfaces/interface[name=" + iface + "]/" + path)
}

// Bonds over gNMI end to end, against a target that checks every Set against the OpenConfig
// schema (openconfig-interfaces, -if-aggregate, -vlan and openconfig-lacp's config): one Set makes
// them, Get reads them back as asked, a second pass sends none, a hand edit is repaired, and
// leaving removes the aggregates and puts the members back as idle access ports, without
// touching the operator's aggregate outside the range.
func TestLAGRoundTrip(t *testing.T) {
	tg := gnmitest.Start(t, "Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4", "Ethernet5", "Ethernet6")
	tg.Edit(func(root *oc.Device) {
		pc := root.GetOrCreateInterfaces().GetOrCreateInterface("Port-Channel2000")
		pc.GetOrCreateConfig().Name = ygot.String("Port-Channel2000")
		pc.GetOrCreateConfig().Type = oc.IETFInterfaces_InterfaceType_ieee8023adLag
		pc.GetOrCreateAggregation().GetOrCreateConfig().LagType = oc.OpenconfigIfAggregate_AggregationType_LACP
		root.GetOrCreateInterfaces().GetOrCreateInterface("Ethernet6").GetOrCreateEthernet().GetOrCreateConfig().AggregateId = ygot.String("Port-Channel2000")
		// Ethernet1 is an idle access port: it leaves its VLAN when it joins a bond.
		sv := root.GetOrCreateInterfaces().GetOrCreateInterface("Ethernet1").GetOrCreateEthernet().GetOrCreateSwitchedVlan().GetOrCreateConfig()
		sv.InterfaceMode, sv.AccessVlan = oc.OpenconfigVlan_VlanModeType_ACCESS, &oc.OpenconfigInterfaces_Interfaces_Interface_Ethernet_SwitchedVlan_Config_AccessVlan_Union_Uint16{Uint16: 1}
	})
	fast, static := fabric.LAGName("host-a", "control"), fabric.LAGName("host-b", "storage")
	if aggOf(fast) == aggOf(static) {
		t.Fatal("the test's two bonds share an aggregate; pick other names")
	}
	want := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}, {ID: 1002}},
		LAGs: map[string]fabric.LAG{
			fast: {Name: fast, Members: []string{"Ethernet1", "Ethernet2"}, LACP: true, FastRate: true,
				Port: fabric.Port{Name: fast, Mode: fabric.ModeAccess, VLAN: 1001}},
			static: {Name: static, Members: []string{"Ethernet3", "Ethernet4"},
				Port: fabric.Port{Name: static, Mode: fabric.ModeTrunk, VLAN: 1001, Trunk: []int{1002}, Down: true}},
		},
		Ports: map[string]fabric.Port{"Ethernet5": {Name: "Ethernet5", Mode: fabric.ModeAccess, VLAN: 1002}}}

	if _, err := lagPass(t, tg, want, fabric.Record{}); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	if tg.Sets() != 1 {
		t.Fatalf("%d Sets, want the batch in one", tg.Sets())
	}
	for _, c := range []struct{ what, got, want string }{
		{"fast type", ifLeaf(tg, aggOf(fast), "config/type"), "ieee8023adLag"},
		{"fast lag-type", ifLeaf(tg, aggOf(fast), "aggregation/config/lag-type"), "LACP"},
		{"fast access VLAN", ifLeaf(tg, aggOf(fast), "aggregation/switched-vlan/config/access-vlan"), "1001"},
		{"fast interval", tg.Leaf("/lacp/interfaces/interface[name=" + aggOf(fast) + "]/config/interval"), "FAST"},
		{"fast mode", tg.Leaf("/lacp/interfaces/interface[name=" + aggOf(fast) + "]/config/lacp-mode"), "ACTIVE"},
		{"Ethernet1 aggregate", ifLeaf(tg, "Ethernet1", "ethernet/config/aggregate-id"), aggOf(fast)},
		{"Ethernet2 aggregate", ifLeaf(tg, "Ethernet2", "ethernet/config/aggregate-id"), aggOf(fast)},
		{"Ethernet1 VLANs", ifLeaf(tg, "Ethernet1", "ethernet/switched-vlan/config/interface-mode"), ""},
		{"static lag-type", ifLeaf(tg, aggOf(static), "aggregation/config/lag-type"), "STATIC"},
		{"static native", ifLeaf(tg, aggOf(static), "aggregation/switched-vlan/config/native-vlan"), "1001"},
		{"static trunk", ifLeaf(tg, aggOf(static), "aggregation/switched-vlan/config/trunk-vlans"), "[1002]"},
		{"static enabled", ifLeaf(tg, aggOf(static), "config/enabled"), "false"},
		{"static LACP", tg.Leaf("/lacp/interfaces/interface[name=" + aggOf(static) + "]/config/interval"), ""},
		{"Ethernet4 aggregate", ifLeaf(tg, "Ethernet4", "ethernet/config/aggregate-id"), aggOf(static)},
	} {
		if c.got != c.want {
			t.Errorf("%s: target shows %q, want %q", c.what, c.got, c.want)
		}
	}

	have, err := lagPass(t, tg, want, fabric.RecordOf(want))
	if err != nil || tg.Sets() != 1 {
		t.Fatalf("second pass: %v, %d Sets in all, want no new one", err, tg.Sets())
	}
	for n, l := range want.LAGs {
		if !fabric.SameLAG(have.LAGs[n], l) {
			t.Errorf("bond %s reads back as %s, want %s", n, have.LAGs[n].Describe(), l.Describe())
		}
	}

	// By hand: the fast bond's LACP slowed down, a member of the static one taken out.
	tg.Edit(func(root *oc.Device) {
		root.GetOrCreateLacp().GetOrCreateInterfaces().GetOrCreateInterface(aggOf(fast)).GetOrCreateConfig().Interval = oc.MetalwireLacp_Lacp_Interfaces_Interface_Config_Interval_SLOW
		root.GetOrCreateInterfaces().GetOrCreateInterface("Ethernet4").GetOrCreateEthernet().GetOrCreateConfig().AggregateId = nil
	})
	if _, err := lagPass(t, tg, want, fabric.RecordOf(want)); err != nil || tg.Sets() != 2 {
		t.Fatalf("repair: %v, %d Sets in all, want one more", err, tg.Sets())
	}
	if got := tg.Leaf("/lacp/interfaces/interface[name=" + aggOf(fast) + "]/config/interval"); got != "FAST" {
		t.Errorf("repaired interval %q, want FAST", got)
	}
	if got := ifLeaf(tg, "Ethernet4", "ethernet/config/aggregate-id"); got != aggOf(static) {
		t.Errorf("repaired Ethernet4 aggregate %q, want %s", got, aggOf(static))
	}

	if _, err := lagPass(t, tg, fabric.State{}, fabric.RecordOf(want)); err != nil {
		t.Fatalf("leaving: %v", err)
	}
	for _, a := range []string{aggOf(fast), aggOf(static)} {
		if got := ifLeaf(tg, a, "config/name"); got != "" {
			t.Errorf("aggregate %s still on the target after its bond left", a)
		}
		if got := tg.Leaf("/lacp/interfaces/interface[name=" + a + "]/config/name"); got != "" {
			t.Errorf("LACP of %s still on the target after its bond left", a)
		}
	}
	for _, p := range []string{"Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4"} {
		if id, m, v, en := ifLeaf(tg, p, "ethernet/config/aggregate-id"), ifLeaf(tg, p, "ethernet/switched-vlan/config/interface-mode"),
			ifLeaf(tg, p, "ethernet/switched-vlan/config/access-vlan"), ifLeaf(tg, p, "config/enabled"); id != "" || m != "ACCESS" || v != "1" || en != "true" {
			t.Errorf("%s after leaving: aggregate %q, %s %s, enabled %s; want an idle access port of VLAN 1, up", p, id, m, v, en)
		}
	}
	if got := ifLeaf(tg, "Ethernet6", "ethernet/config/aggregate-id"); got != "Port-Channel2000" || ifLeaf(tg, "Port-Channel2000", "config/name") == "" {
		t.Errorf("the operator's Port-Channel2000, outside the range, was touched (Ethernet6 in %q)", got)
	}
	sets := tg.Sets()
	have, err = lagPass(t, tg, fabric.State{}, fabric.RecordOf(want))
	if err != nil || len(have.LAGs) != 0 || tg.Sets() != sets {
		t.Fatalf("after leaving: bonds %v, error %v, %d Sets (was %d); want none", have.LAGs, err, tg.Sets(), sets)
	}
}

// What bonds over gNMI refuse, before any Set: a bond without a declared range, an MLAG half,
// a member in an aggregate the range does not own, and an aggregate of the range that carries
// none of the bond's members.
func TestLAGRefusals(t *testing.T) {
	a := fabric.LAGName("host-a", "control")
	bond := func(members ...string) fabric.LAG {
		return fabric.LAG{Name: a, Members: members, LACP: true, Port: fabric.Port{Name: a, Mode: fabric.ModeAccess, VLAN: 1001}}
	}
	mlag := bond("Ethernet1")
	mlag.MLAG = &fabric.MLAG{Pair: "leaves", Domain: 10, Peer: "leaf2"}
	cases := []struct {
		name    string
		agg     *fabric.Aggregates
		byHand  func(root *oc.Device)
		lag     fabric.LAG
		want    []string
		notSupp bool
	}{
		{"no range", nil, nil, bond("Ethernet1"), []string{"spec.switches[leaf1].aggregates"}, false},
		{"no prefix", &fabric.Aggregates{First: 1, Last: 9}, nil, bond("Ethernet1"), []string{"spec.switches[leaf1].aggregates.prefix"}, false},
		{"mlag", &ocRange, nil, mlag, []string{"networkOS openconfig", "multi-chassis"}, true},
		{"member of the operator's", &ocRange, func(root *oc.Device) {
			root.GetOrCreateInterfaces().GetOrCreateInterface("ae7").GetOrCreateConfig().Type = oc.IETFInterfaces_InterfaceType_ieee8023adLag
			root.GetOrCreateInterfaces().GetOrCreateInterface("Ethernet2").GetOrCreateEthernet().GetOrCreateConfig().AggregateId = ygot.String("ae7")
		}, bond("Ethernet1", "Ethernet2"), []string{"member Ethernet2 is in aggregate ae7", "takes no port from an aggregate it does not own"}, false},
		{"taken by hand", &ocRange, func(root *oc.Device) {
			pc := aggOf(a)
			root.GetOrCreateInterfaces().GetOrCreateInterface(pc).GetOrCreateConfig().Type = oc.IETFInterfaces_InterfaceType_ieee8023adLag
			root.GetOrCreateInterfaces().GetOrCreateInterface("Ethernet3").GetOrCreateEthernet().GetOrCreateConfig().AggregateId = ygot.String(pc)
		}, bond("Ethernet1"), []string{aggOf(a), "carries Ethernet3 and none of the bond's members", "nothing was changed"}, false},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := gnmitest.Start(t, "Ethernet1", "Ethernet2", "Ethernet3")
			if c.byHand != nil {
				tg.Edit(c.byHand)
			}
			sess := lagSession(t, tg, c.agg)
			err := sess.Apply(ctx, fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}}, {Op: fabric.OpEnsureLAG, LAG: c.lag}})
			if err == nil || errors.Is(err, fabric.ErrUnsupported) != c.notSupp {
				t.Fatalf("got %v, want a refusal (unsupported: %v)", err, c.notSupp)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q does not say %q", err, w)
				}
			}
			t.Logf("as a user sees it: %v", err)
			if tg.Sets() != 0 {
				t.Errorf("a refused batch sent a Set")
			}
		})
	}
}
