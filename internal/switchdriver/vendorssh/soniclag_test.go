package vendorssh_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchdriver/vendorssh"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// sonicRange is the port-channel numbers the tests' SONiC switch gives metalwire (no prefix:
// SONiC's is PortChannel, whatever the NetworkDevice says).
var sonicRange = fabric.Aggregates{First: 100, Last: 199}

func sonicEndpoint(srv *vendortest.Server, agg *fabric.Aggregates) fabric.Endpoint {
	ep := endpoint(srv)
	ep.Aggregates = agg
	ep.IdleVLAN = 1
	return ep
}

// sonicSession opens a session to the emulated SONiC switch with the range agg.
func sonicSession(t *testing.T, srv *vendortest.Server, agg *fabric.Aggregates) fabric.Session {
	t.Helper()
	sess, err := sshcli.Driver{Set: vendorssh.SONiC(), CommandTimeout: 10 * time.Second}.Connect(context.Background(), sonicEndpoint(srv, agg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// sonicPass is one reconcile of bonds and ports, as the fabric controller runs it.
func sonicPass(t *testing.T, srv *vendortest.Server, want fabric.State, rec fabric.Record) (fabric.State, error) {
	t.Helper()
	sess := sonicSession(t, srv, &sonicRange)
	ctx := context.Background()
	names := slices.Concat(rec.Ports, rec.LAGs, slices.Collect(maps.Keys(want.Ports)), slices.Collect(maps.Keys(want.LAGs)))
	have, err := sess.Read(ctx, slices.Compact(slices.Sorted(slices.Values(names))))
	if err != nil {
		return fabric.State{}, err
	}
	return have, sess.Apply(ctx, fabric.Diff(want, have, rec, 1))
}

// channelOf is the port-channel a bond of that name gets in sonicRange.
func channelOf(lag string) string {
	name, _ := fabric.Aggregates{First: sonicRange.First, Last: sonicRange.Last, Prefix: "PortChannel"}.AggregateOf(lag)
	return name
}

// Bonds on SONiC end to end: port-channels numbered in the declared range, read back as asked,
// a second pass sends nothing, a hand edit is repaired, a refused line fails the batch with
// SONiC's words, leaving puts the members back as idle access ports with the port-channels gone,
// and the operator's port-channel outside the range is never touched.
func TestSONiCLAGEndToEnd(t *testing.T) {
	srv := vendortest.Start(t, "sonic", "Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12", "Ethernet16", "Ethernet20")
	srv.Config.AddSONiCPortChannel("PortChannel7", "Ethernet20")
	fast, slow := fabric.LAGName("host-a", "control"), fabric.LAGName("host-b", "storage")
	if channelOf(fast) == channelOf(slow) {
		t.Fatal("the test's two bonds share a port-channel number; pick other names")
	}
	want := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}, {ID: 1002}},
		LAGs: map[string]fabric.LAG{
			fast: {Name: fast, Members: []string{"Ethernet0", "Ethernet4"}, LACP: true, FastRate: true,
				Port: fabric.Port{Name: fast, Mode: fabric.ModeAccess, VLAN: 1001}},
			slow: {Name: slow, Members: []string{"Ethernet12", "Ethernet16"}, LACP: true,
				Port: fabric.Port{Name: slow, Mode: fabric.ModeTrunk, VLAN: 1001, Trunk: []int{1002}}},
		},
		Ports: map[string]fabric.Port{"Ethernet8": {Name: "Ethernet8", Mode: fabric.ModeAccess, VLAN: 1002}}}

	refused := "sudo config portchannel member add " + channelOf(fast) + " Ethernet4"
	srv.FailOn(refused)
	_, err := sonicPass(t, srv, want, fabric.Record{})
	var cmdErr *sshcli.CommandError
	if !errors.As(err, &cmdErr) || cmdErr.Command != refused || !strings.Contains(cmdErr.Output, "Error: ") {
		t.Fatalf("refused line: %v, want a CommandError naming %q with SONiC's message", err, refused)
	}
	t.Logf("as a user sees it: %v", err)

	if _, err := sonicPass(t, srv, want, fabric.Record{}); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	srv.Commands()
	have, err := sonicPass(t, srv, want, fabric.RecordOf(want))
	if err != nil {
		t.Fatalf("second pass: %v", err)
	}
	if got := srv.Commands(); len(got) != 0 {
		t.Fatalf("second pass sent %q, want nothing", got)
	}
	for n, l := range want.LAGs {
		if !fabric.SameLAG(have.LAGs[n], l) {
			t.Errorf("bond %s reads back as %s, want %s", n, have.LAGs[n].Describe(), l.Describe())
		}
		pc, ok := srv.Config.Port(channelOf(n))
		if !ok {
			t.Fatalf("bond %s: no %s on the switch", n, channelOf(n))
		}
		if pc.LACPFast != l.FastRate {
			t.Errorf("%s fast rate %v, want %v", channelOf(n), pc.LACPFast, l.FastRate)
		}
		for _, m := range l.Members {
			if p, _ := srv.Config.Port(m); p.ChannelMode == "" || "PortChannel"+strconv.Itoa(p.Channel) != channelOf(n) {
				t.Errorf("member %s is not in %s: %+v", m, channelOf(n), p)
			}
		}
	}
	if p, _ := srv.Config.Port(channelOf(slow)); p.Access != 1001 || !slices.Equal(p.Allowed, []int{1002}) {
		t.Errorf("%s carries untagged %d, tagged %v; want 1001 and [1002]", channelOf(slow), p.Access, p.Allowed)
	}

	// By hand: the fast bond's port-channel shut, a member of the slow one taken out.
	srv.Config.SetShutdown(channelOf(fast), true)
	srv.Config.LeaveSONiCPortChannel("Ethernet16")
	if _, err := sonicPass(t, srv, want, fabric.RecordOf(want)); err != nil {
		t.Fatalf("repair: %v", err)
	}
	wantRepair := []string{"sudo config portchannel member add " + channelOf(slow) + " Ethernet16", "sudo config interface startup " + channelOf(fast), "sudo config save -y"}
	if got := srv.Commands(); !sameSet(got, wantRepair) {
		t.Errorf("repair sent %q, want %q", got, wantRepair)
	}

	if _, err := sonicPass(t, srv, fabric.State{}, fabric.RecordOf(want)); err != nil {
		t.Fatalf("leaving: %v", err)
	}
	for _, n := range srv.Config.PortNames() {
		if strings.HasPrefix(n, "PortChannel") && n != "PortChannel7" {
			t.Errorf("%s is still on the switch after its bond left", n)
		}
	}
	for _, n := range []string{"Ethernet0", "Ethernet4", "Ethernet12", "Ethernet16"} {
		if p, _ := srv.Config.Port(n); p.ChannelMode != "" || p.Access != 1 || len(p.Allowed) != 0 || p.Shutdown {
			t.Errorf("%s after its bond left: %+v, want an idle access port of VLAN 1, up", n, p)
		}
	}
	if p, _ := srv.Config.Port("Ethernet20"); p.ChannelMode == "" || p.Channel != 7 {
		t.Errorf("the operator's PortChannel7 lost Ethernet20: %+v", p)
	}
	if _, ok := srv.Config.Port("PortChannel7"); !ok {
		t.Error("the operator's PortChannel7, outside the range, is gone")
	}
	srv.Commands()
	have, err = sonicPass(t, srv, fabric.State{}, fabric.RecordOf(want))
	if sent := srv.Commands(); err != nil || len(have.LAGs) != 0 || len(sent) != 0 {
		t.Fatalf("after leaving: bonds %v, error %v, sent %q; want none", have.LAGs, err, sent)
	}
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// The exact lines of each SONiC bond operation: a new LACP bond, one that loses a member, one
// whose rate changes (SONiC fixes it when the port-channel is made: made again), a trunk bond
// shut, and remove-lag; each read back as asked.
func TestSONiCLAGCommands(t *testing.T) {
	lag := fabric.LAGName("host-a", "control")
	lacp := fabric.LAG{Name: lag, Members: []string{"Ethernet0", "Ethernet4"}, LACP: true, FastRate: true,
		Port: fabric.Port{Name: lag, Mode: fabric.ModeAccess, VLAN: 1001}}
	shrunk := lacp
	shrunk.Members = []string{"Ethernet4"}
	slowTrunk := lacp
	slowTrunk.FastRate = false
	slowTrunk.Members = []string{"Ethernet0", "Ethernet4", "Ethernet8"}
	slowTrunk.Port = fabric.Port{Name: lag, Mode: fabric.ModeTrunk, VLAN: 1002, Trunk: []int{1001}, Down: true}
	remove := lacp
	remove.Port = fabric.Port{Name: lag, Mode: fabric.ModeAccess, VLAN: 1}
	setup := fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}}, {Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1002}}}
	cases := []struct {
		op     string
		before *fabric.LAG
		change fabric.Change
	}{
		{"ensure-lag-lacp", nil, fabric.Change{Op: fabric.OpEnsureLAG, LAG: lacp}},
		{"ensure-lag-shrink", &lacp, fabric.Change{Op: fabric.OpEnsureLAG, LAG: shrunk}},
		{"ensure-lag-rate-trunk-down", &lacp, fabric.Change{Op: fabric.OpEnsureLAG, LAG: slowTrunk}},
		{"remove-lag", &lacp, fabric.Change{Op: fabric.OpRemoveLAG, LAG: remove}},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			srv := vendortest.Start(t, "sonic", "Ethernet0", "Ethernet4", "Ethernet8")
			sess := sonicSession(t, srv, &sonicRange)
			b := setup
			if c.before != nil {
				b = append(slices.Clone(setup), fabric.Change{Op: fabric.OpEnsureLAG, LAG: *c.before})
			}
			if err := sess.Apply(ctx, b); err != nil {
				t.Fatal(err)
			}
			srv.Commands()
			if err := sess.Apply(ctx, fabric.Batch{c.change}); err != nil {
				t.Fatal(err)
			}
			golden(t, "sonic/"+c.op+".golden", srv.Commands())
			have, err := sess.Read(ctx, []string{lag, "Ethernet0", "Ethernet4", "Ethernet8"})
			if err != nil {
				t.Fatal(err)
			}
			if c.change.Op == fabric.OpEnsureLAG && !fabric.SameLAG(have.LAGs[lag], c.change.LAG) {
				t.Errorf("reads back as %s, want %s", have.LAGs[lag].Describe(), c.change.LAG.Describe())
			}
			if c.change.Op == fabric.OpRemoveLAG {
				if l, ok := have.LAGs[lag]; ok {
					t.Errorf("the bond is still read back: %s", l.Describe())
				}
				for _, m := range lacp.Members {
					if p := have.Ports[m]; p.Mode != fabric.ModeAccess || p.VLAN != 1 || p.Down {
						t.Errorf("%s after remove-lag: %+v, want access VLAN 1, up", m, p)
					}
				}
			}
		})
	}
}

// What SONiC's bonds refuse, before anything is sent: a static bond (SONiC's port-channels run
// LACP), an MLAG half on a switch with no declared MCLAG domain, a bond on a switch without a declared range, two bonds whose names
// land on one number, and a port-channel of the range that carries another bond's members.
func TestSONiCLAGRefused(t *testing.T) {
	a, b := fabric.LAGName("host-a", "control"), fabric.LAGName("host-b", "control")
	bond := func(name string, members ...string) fabric.LAG {
		return fabric.LAG{Name: name, Members: members, LACP: true, Port: fabric.Port{Name: name, Mode: fabric.ModeAccess, VLAN: 1001}}
	}
	static := bond(a, "Ethernet0")
	static.LACP = false
	mlag := bond(a, "Ethernet0")
	mlag.MLAG = &fabric.MLAG{Pair: "leaves", Domain: 10, Peer: "leaf2"}
	one := &fabric.Aggregates{First: 300, Last: 300}
	cases := []struct {
		name    string
		agg     *fabric.Aggregates
		byHand  []string // a port-channel made by hand, then its members
		batch   fabric.Batch
		want    []string
		notSupp bool
	}{
		{"static", &sonicRange, nil, fabric.Batch{{Op: fabric.OpEnsureLAG, LAG: static}}, []string{"networkOS sonic", "LACP only", "lag.mode lacp"}, true},
		{"mlag without a declared domain", &sonicRange, nil, fabric.Batch{{Op: fabric.OpEnsureLAG, LAG: mlag}}, []string{"MLAG pair leaves", "mlagPairs[leaves].sonic"}, false},
		{"no range", nil, nil, fabric.Batch{{Op: fabric.OpEnsureLAG, LAG: bond(a, "Ethernet0")}}, []string{"spec.switches[leaf1].aggregates"}, false},
		{"two on one number", one, nil, fabric.Batch{{Op: fabric.OpEnsureLAG, LAG: bond(a, "Ethernet0")}, {Op: fabric.OpEnsureLAG, LAG: bond(b, "Ethernet4")}},
			[]string{"bonds " + a + " and " + b + " both number PortChannel300", "another range lands them apart"}, false},
		{"taken by hand", one, []string{"PortChannel300", "Ethernet8"}, fabric.Batch{{Op: fabric.OpEnsureLAG, LAG: bond(a, "Ethernet0")}},
			[]string{"PortChannel300", "carries Ethernet8 and none of the bond's members", "nothing was changed"}, false},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := vendortest.Start(t, "sonic", "Ethernet0", "Ethernet4", "Ethernet8")
			if c.byHand != nil {
				srv.Config.AddSONiCPortChannel(c.byHand[0], c.byHand[1:]...)
			}
			sess := sonicSession(t, srv, c.agg)
			names := []string{a, b}
			have, err := sess.Read(ctx, names)
			if err != nil {
				t.Fatal(err)
			}
			batch := append(fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}}}, c.batch...)
			err = sess.Apply(ctx, batch)
			if err == nil || errors.Is(err, fabric.ErrUnsupported) != c.notSupp {
				t.Fatalf("got %v, want a refusal (unsupported: %v)", err, c.notSupp)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q does not say %q", err, w)
				}
			}
			t.Logf("as a user sees it: %v", err)
			if got := srv.Commands(); len(got) != 0 {
				t.Errorf("a refused batch sent %q", got)
			}
			if c.byHand != nil {
				if _, ok := have.LAGs[a]; !ok {
					t.Error("the port-channel by hand in the range is not read as the bond's number holder")
				}
				if p, _ := srv.Config.Port(c.byHand[1]); p.ChannelMode == "" || p.Channel != 300 {
					t.Errorf("the port-channel made by hand lost %s: %+v", c.byHand[1], p)
				}
			}
		})
	}
}
