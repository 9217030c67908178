package vendorssh_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// lagOSes render bonds; the others refuse them (TestLAGRefused).
var lagOSes = []string{"eos", "nxos", "cumulus", "dellos10", "junos"}

// lagMLAG are the lagOSes that render an MLAG half.
var lagMLAG = []string{"eos", "nxos", "cumulus"}

// lagExtra are two more front-panel ports of each OS that renders bonds; lagFail a line of the
// first bond's that the switch is made to refuse.
var (
	lagExtra = map[string][2]string{"eos": {"Ethernet7", "Ethernet8"}, "nxos": {"Ethernet1/7", "Ethernet1/8"}, "cumulus": {"swp7", "swp8"}, "dellos10": {"ethernet1/1/7", "ethernet1/1/8"}, "junos": {"ge-0/0/7", "ge-0/0/8"}}
	lagFail  = map[string]string{"eos": "channel-group 1 mode active", "nxos": "channel-group 1 mode active", "dellos10": "channel-group 1 mode active",
		"junos":   "set interfaces ge-0/0/0 ether-options 802.3ad ae0",
		"cumulus": "nv set interface " + fabric.LAGName("host-a", "control") + " bond lacp-rate fast"}
)

// inBond says whether the switch has a port in a bond (a port-channel, an NVUE bond).
func inBond(p vendortest.PortConfig) bool { return p.Channel != 0 || p.Bond != "" }

// isBond says whether an interface of the switch is a bond.
func isBond(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), "port-channel") || strings.HasPrefix(name, "lag")
}

// bonds: an LACP bond (fast rate) of two ports in an access VLAN, and a static one on a trunk,
// an MLAG half where the OS renders one.
func bonds(os string, v vendor, extra [2]string) map[string]fabric.LAG {
	lacp := fabric.LAGName("host-a", "control")
	static := fabric.LAGName("host-b", "storage")
	var mlag *fabric.MLAG
	if slices.Contains(lagMLAG, os) {
		mlag = &fabric.MLAG{Pair: "leaves", Domain: 7, Peer: "leaf2"}
	}
	return map[string]fabric.LAG{
		lacp: {Name: lacp, Members: []string{v.ports[0], v.ports[1]}, LACP: true, FastRate: true,
			Port: fabric.Port{Name: lacp, Mode: fabric.ModeAccess, VLAN: 1001}},
		static: {Name: static, Members: []string{extra[0], extra[1]}, MLAG: mlag,
			Port: fabric.Port{Name: static, Mode: fabric.ModeTrunk, VLAN: 1001, Trunk: []int{1002}}},
	}
}

// lagPass is one reconcile of bonds and ports: read what the fabric names, diff, apply.
func lagPass(t *testing.T, set sshcli.CommandSet, srv *vendortest.Server, want fabric.State, rec fabric.Record) (fabric.State, error) {
	t.Helper()
	ctx := context.Background()
	sess, err := sshcli.Driver{Set: set, CommandTimeout: 10 * time.Second}.Connect(ctx, endpoint(srv))
	if err != nil {
		return fabric.State{}, err
	}
	defer func() { _ = sess.Close() }()
	names := slices.Concat(rec.Ports, rec.LAGs, slices.Collect(maps.Keys(want.Ports)), slices.Collect(maps.Keys(want.LAGs)))
	have, err := sess.Read(ctx, slices.Compact(slices.Sorted(slices.Values(names))))
	if err != nil {
		return fabric.State{}, err
	}
	return have, sess.Apply(ctx, fabric.Diff(want, have, rec, 1))
}

// Bonds end to end against the emulated switch (an MLAG half among them where the OS has one):
// applied, read back as asked, a second pass
// sends nothing, a refused line fails the batch with the switch's words, and leaving puts the
// members back as idle access ports with the port-channel gone.
func TestLAGEndToEnd(t *testing.T) {
	for _, name := range lagOSes {
		t.Run(name, func(t *testing.T) {
			v := vendors()[name]
			extra := lagExtra[name]
			srv := vendortest.Start(t, name, v.ports[0], v.ports[1], v.ports[2], extra[0], extra[1])
			want := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}, {ID: 1002}}, LAGs: bonds(name, v, extra),
				Ports: map[string]fabric.Port{v.ports[2]: {Name: v.ports[2], Mode: fabric.ModeAccess, VLAN: 1002}}}

			srv.FailOn(lagFail[name])
			_, err := lagPass(t, v.set, srv, want, fabric.Record{})
			var cmdErr *sshcli.CommandError
			if !errors.As(err, &cmdErr) || cmdErr.Command != lagFail[name] {
				t.Fatalf("refused line: %v, want a CommandError naming it", err)
			}
			t.Logf("as a user sees it: %v", err)

			if _, err := lagPass(t, v.set, srv, want, fabric.Record{}); err != nil {
				t.Fatalf("first pass: %v", err)
			}
			srv.Commands()
			have, err := lagPass(t, v.set, srv, want, fabric.RecordOf(want))
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
				for _, m := range l.Members {
					if p, _ := srv.Config.Port(m); !inBond(p) {
						t.Errorf("member %s is in no bond on the switch", m)
					}
				}
			}

			if _, err := lagPass(t, v.set, srv, fabric.State{}, fabric.RecordOf(want)); err != nil {
				t.Fatalf("leaving: %v", err)
			}
			for _, n := range srv.Config.PortNames() {
				if isBond(n) {
					t.Errorf("%s is still on the switch after its bond left", n)
				}
			}
			checkSwitch(t, v, srv, fabric.State{}, []string{v.ports[0], v.ports[1], v.ports[2], extra[0], extra[1]})
			for _, n := range []string{v.ports[0], v.ports[1], extra[0], extra[1]} {
				if p, _ := srv.Config.Port(n); inBond(p) {
					t.Errorf("%s still in a bond after its bond left: %+v", n, p)
				}
			}
			srv.Commands()
			have, err = lagPass(t, v.set, srv, fabric.State{}, fabric.RecordOf(want))
			if sent := srv.Commands(); err != nil || len(have.LAGs) != 0 || len(sent) != 0 {
				t.Fatalf("after leaving: bonds %v, error %v, sent %q; want none", have.LAGs, err, sent)
			}
		})
	}
}

// The exact lines of each bond operation: ensure-lag with LACP, static, an MLAG half, a bond
// that loses a member, and remove-lag.
func TestLAGCommands(t *testing.T) {
	for _, name := range lagOSes {
		t.Run(name, func(t *testing.T) {
			v := vendors()[name]
			p0, p1, p2 := v.ports[0], v.ports[1], v.ports[2]
			lag := fabric.LAGName("host-a", "control")
			lacp := fabric.LAG{Name: lag, Members: []string{p0, p1}, LACP: true, FastRate: true,
				Port: fabric.Port{Name: lag, Mode: fabric.ModeAccess, VLAN: 1001}}
			static := fabric.LAG{Name: lag, Members: []string{p1, p2},
				Port: fabric.Port{Name: lag, Mode: fabric.ModeTrunk, VLAN: 1001, Trunk: []int{1002}}}
			mlag := lacp
			mlag.FastRate = false
			mlag.MLAG = &fabric.MLAG{Pair: "leaves", Domain: 10, Peer: "leaf2"}
			shrunk := lacp
			shrunk.Members = []string{p1}
			remove := lacp
			remove.Port = fabric.Port{Name: lag, Mode: fabric.ModeAccess, VLAN: 1}
			setup := fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}}, {Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1002}}}
			cases := []struct {
				op     string
				before *fabric.LAG
				change fabric.Change
			}{
				{"ensure-lag-lacp", nil, fabric.Change{Op: fabric.OpEnsureLAG, LAG: lacp}},
				{"ensure-lag-static", nil, fabric.Change{Op: fabric.OpEnsureLAG, LAG: static}},
				{"ensure-lag-mlag", nil, fabric.Change{Op: fabric.OpEnsureLAG, LAG: mlag}},
				{"ensure-lag-shrink", &lacp, fabric.Change{Op: fabric.OpEnsureLAG, LAG: shrunk}},
				{"remove-lag", &lacp, fabric.Change{Op: fabric.OpRemoveLAG, LAG: remove}},
			}
			for _, c := range cases {
				srv := vendortest.Start(t, name, p0, p1, p2)
				b := setup
				if c.before != nil {
					b = append(slices.Clone(setup), fabric.Change{Op: fabric.OpEnsureLAG, LAG: *c.before})
				}
				apply(t, v.set, srv, b)
				srv.Commands()
				if c.change.LAG.MLAG != nil && !slices.Contains(lagMLAG, name) {
					// OS10, Junos: a bond, but no VLT, no MC-LAG; refused before anything is sent.
					err := applyErr(v.set, srv, fabric.Batch{c.change})
					term := map[string]string{"junos": "MC-LAG", "dellos10": "VLT"}[name]
					if !errors.Is(err, fabric.ErrUnsupported) || !strings.Contains(err.Error(), "networkOS "+name) || !strings.Contains(err.Error(), "("+term+")") {
						t.Errorf("an MLAG half on %s: %v, want ErrUnsupported naming the OS and %s", name, err, term)
					}
					t.Logf("as a user sees it: %v", err)
					if got := srv.Commands(); len(got) != 0 {
						t.Errorf("a refused MLAG half sent %q", got)
					}
					continue
				}
				apply(t, v.set, srv, fabric.Batch{c.change})
				golden(t, name+"/"+c.op+".golden", srv.Commands())
				if c.change.Op == fabric.OpEnsureLAG {
					have := read(t, v.set, srv, []string{lag})
					if !fabric.SameLAG(have.LAGs[lag], c.change.LAG) {
						t.Errorf("%s: reads back as %s, want %s", c.op, have.LAGs[lag].Describe(), c.change.LAG.Describe())
					}
				}
			}
		})
	}
}

func applyErr(set sshcli.CommandSet, srv *vendortest.Server, b fabric.Batch) error {
	ctx := context.Background()
	sess, err := sshcli.Driver{Set: set, CommandTimeout: 10 * time.Second}.Connect(ctx, endpoint(srv))
	if err != nil {
		return err
	}
	defer func() { _ = sess.Close() }()
	return sess.Apply(ctx, b)
}

func read(t *testing.T, set sshcli.CommandSet, srv *vendortest.Server, names []string) fabric.State {
	t.Helper()
	ctx := context.Background()
	sess, err := sshcli.Driver{Set: set, CommandTimeout: 10 * time.Second}.Connect(ctx, endpoint(srv))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	st, err := sess.Read(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The OSes whose bonds are not rendered refuse a bond change with ErrUnsupported naming the OS,
// and send no configuration line: the batch's VLAN is not created either.
func TestLAGRefused(t *testing.T) {
	for name, v := range vendors() {
		if slices.Contains(lagOSes, name) || name == "sonic" { // sonic: TestSONiCLAG*
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := vendortest.Start(t, name, v.ports[0], v.ports[1])
			lag := fabric.LAGName("host-a", "control")
			l := fabric.LAG{Name: lag, Members: []string{v.ports[0], v.ports[1]}, LACP: true,
				Port: fabric.Port{Name: lag, Mode: fabric.ModeAccess, VLAN: 1001},
				MLAG: &fabric.MLAG{Pair: "leaves", Domain: 10, Peer: "leaf2"}}
			ctx := context.Background()
			sess, err := sshcli.Driver{Set: v.set, CommandTimeout: 10 * time.Second}.Connect(ctx, endpoint(srv))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sess.Close() }()
			err = sess.Apply(ctx, fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}}, {Op: fabric.OpEnsureLAG, LAG: l}})
			if !errors.Is(err, fabric.ErrUnsupported) || !strings.Contains(err.Error(), "networkOS "+name) {
				t.Fatalf("ensure-lag on %s: %v, want ErrUnsupported naming networkOS %s", name, err, name)
			}
			if want := map[string]string{"junos": "MC-LAG", "dellos10": "VLT"}[name]; !strings.Contains(err.Error(), "("+want+")") {
				t.Errorf("an MLAG half on %s: %v, want the refusal to name %s", name, err, want)
			}
			t.Logf("as a user sees it: %v", err)
			// Without the MLAG half, a plain bond is refused as well.
			l.MLAG = nil
			if err := sess.Apply(ctx, fabric.Batch{{Op: fabric.OpEnsureLAG, LAG: l}}); !errors.Is(err, fabric.ErrUnsupported) || !strings.Contains(err.Error(), "networkOS "+name) {
				t.Errorf("plain ensure-lag on %s: %v, want ErrUnsupported naming the OS", name, err)
			}
			if got := srv.Commands(); len(got) != 0 {
				t.Errorf("a refused batch sent %q", got)
			}
			if slices.Contains(srv.Config.VLANs(), 1001) {
				t.Error("a refused batch created its VLAN")
			}
		})
	}
}
