package vendorssh_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchdriver/vendorssh"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// leaves is the tests' SONiC MCLAG pair as the NetworkDevice declares it, seen from leaf1.
var leaves = fabric.MCLAGDomain{Pair: "leaves", Domain: 10, Peer: "leaf2",
	SourceAddress: "192.168.255.1", PeerAddress: "192.168.255.2", PeerLink: "PortChannel1"}

// mclagSwitch is an emulated SONiC switch with the peer link PortChannel1 (Ethernet60) made by
// the operator, outside the range.
func mclagSwitch(t *testing.T) *vendortest.Server {
	srv := vendortest.Start(t, "sonic", "Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12", "Ethernet60")
	srv.Config.AddSONiCPortChannel("PortChannel1", "Ethernet60")
	return srv
}

// mclagPass is one reconcile of bonds on a switch whose endpoint declares domain d (nil: none).
func mclagPass(t *testing.T, srv *vendortest.Server, d *fabric.MCLAGDomain, want fabric.State, rec fabric.Record) (fabric.State, error) {
	t.Helper()
	ep := sonicEndpoint(srv, &sonicRange)
	ep.MCLAG = d
	sess, err := sshcli.Driver{Set: vendorssh.SONiC(), CommandTimeout: 10 * time.Second}.Connect(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	ctx := context.Background()
	names := slices.Concat(rec.LAGs, rec.Ports, slices.Sorted(func(yield func(string) bool) {
		for n := range want.LAGs {
			if !yield(n) {
				return
			}
		}
	}))
	have, err := sess.Read(ctx, slices.Compact(slices.Sorted(slices.Values(names))))
	if err != nil {
		return fabric.State{}, err
	}
	return have, sess.Apply(ctx, fabric.Diff(want, have, rec, 1))
}

func mclagBond(host string, fast bool, members ...string) fabric.LAG {
	n := fabric.LAGName(host, "control")
	return fabric.LAG{Name: n, Members: members, LACP: true, FastRate: fast, MLAG: leaves.MLAG(),
		Port: fabric.Port{Name: n, Mode: fabric.ModeAccess, VLAN: 1001}}
}

// SONiC MCLAG end to end: the declared domain is sent once with the bonds' port-channels as its
// members, read back as the pair's halves so a second pass sends nothing; a domain changed by
// hand is set back without touching the members; a bond that stops being an MLAG half leaves the
// domain; a bond removed leaves it before its port-channel goes; the domain stays.
func TestSONiCMCLAGEndToEnd(t *testing.T) {
	srv := mclagSwitch(t)
	a, b := mclagBond("host-a", true, "Ethernet0"), mclagBond("host-b", false, "Ethernet4", "Ethernet8")
	if channelOf(a.Name) == channelOf(b.Name) {
		t.Fatal("the test's two bonds share a port-channel number; pick other names")
	}
	want := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}}, LAGs: map[string]fabric.LAG{a.Name: a, b.Name: b}}
	if _, err := mclagPass(t, srv, &leaves, want, fabric.Record{}); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	sent := srv.Commands()
	domainLine := "sudo config mclag add 10 192.168.255.1 192.168.255.2 PortChannel1"
	var domains []string
	for _, l := range sent {
		if strings.HasPrefix(l, "sudo config mclag add ") {
			domains = append(domains, l)
		}
	}
	if !slices.Equal(domains, []string{domainLine}) {
		t.Errorf("first pass sent the domain as %q, want once %q", domains, domainLine)
	}
	for _, l := range []fabric.LAG{a, b} {
		add := "sudo config mclag member add 10 " + channelOf(l.Name)
		i, made := slices.Index(sent, add), slices.Index(sent, "sudo config portchannel add "+channelOf(l.Name)+" --fast-rate "+map[bool]string{true: "true", false: "false"}[l.FastRate])
		if i < 0 || made < 0 || i < made || i < slices.Index(sent, domainLine) {
			t.Errorf("first pass %q: want %q after the port-channel and the domain are made", sent, add)
		}
	}
	d, ok := srv.Config.SONiCMCLAG()
	if !ok || d != (vendortest.SONiCMCLAGDomain{ID: 10, SourceIP: "192.168.255.1", PeerIP: "192.168.255.2", PeerLink: "PortChannel1"}) {
		t.Fatalf("the switch's MCLAG domain is %+v (present %v), want domain 10 as declared", d, ok)
	}
	for _, l := range []fabric.LAG{a, b} {
		if p, _ := srv.Config.Port(channelOf(l.Name)); p.MLAG != 10 {
			t.Errorf("%s is in MCLAG domain %d, want 10", channelOf(l.Name), p.MLAG)
		}
	}

	rec := fabric.RecordOf(want)
	have, err := mclagPass(t, srv, &leaves, want, rec)
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
	}

	// By hand: the domain pointed at another peer. The members stay; the domain is set back.
	srv.Config.SetSONiCMCLAG(vendortest.SONiCMCLAGDomain{ID: 10, SourceIP: "192.168.255.1", PeerIP: "192.168.255.9", PeerLink: "PortChannel1"})
	if _, err := mclagPass(t, srv, &leaves, want, rec); err != nil {
		t.Fatalf("repair: %v", err)
	}
	if got := srv.Commands(); !slices.Equal(got, []string{domainLine, "sudo config save -y"}) {
		t.Errorf("repairing the domain sent %q, want %q and a save", got, domainLine)
	}
	if _, err := mclagPass(t, srv, &leaves, want, rec); err != nil {
		t.Fatal(err)
	}
	if got := srv.Commands(); len(got) != 0 {
		t.Errorf("the pass after the repair sent %q, want nothing", got)
	}

	// b stops being an MLAG half (its cards moved to one switch); a is removed.
	single := b
	single.MLAG = nil
	after := fabric.State{VLANs: want.VLANs, LAGs: map[string]fabric.LAG{b.Name: single}}
	if _, err := mclagPass(t, srv, &leaves, after, rec); err != nil {
		t.Fatalf("leaving: %v", err)
	}
	sent = srv.Commands()
	if !slices.Contains(sent, "sudo config mclag member del 10 "+channelOf(b.Name)) || slices.ContainsFunc(sent, func(l string) bool { return strings.Contains(l, "portchannel del "+channelOf(b.Name)) }) {
		t.Errorf("a bond no longer an MLAG half: sent %q, want it out of the domain, its port-channel kept", sent)
	}
	del, gone := slices.Index(sent, "sudo config mclag member del 10 "+channelOf(a.Name)), slices.Index(sent, "sudo config portchannel del "+channelOf(a.Name))
	if del < 0 || gone < del {
		t.Errorf("removing an MLAG bond sent %q, want it out of the domain before its port-channel is deleted", sent)
	}
	if _, ok := srv.Config.Port(channelOf(a.Name)); ok {
		t.Errorf("%s is still on the switch after its bond left", channelOf(a.Name))
	}
	if p, _ := srv.Config.Port(channelOf(b.Name)); p.MLAG != 0 {
		t.Errorf("%s is still in MCLAG domain %d", channelOf(b.Name), p.MLAG)
	}
	if _, ok := srv.Config.SONiCMCLAG(); !ok {
		t.Error("the pair's MCLAG domain was removed with the bonds; it is the pair's and stays")
	}
	have, err = mclagPass(t, srv, &leaves, after, fabric.RecordOf(after))
	if sent := srv.Commands(); err != nil || len(sent) != 0 || !fabric.SameLAG(have.LAGs[b.Name], single) {
		t.Fatalf("after leaving: error %v, sent %q, %s reads %s; want nothing sent and the bond as asked", err, sent, b.Name, have.LAGs[b.Name].Describe())
	}
}

// What SONiC's MCLAG refuses: an MLAG half on a switch with no declared domain (the driver,
// before anything is sent, naming mlagPairs[].sonic); a half of another pair than the switch's;
// and a domain of the operator's on the switch (SONiC itself: one domain per switch), which
// fails the batch with SONiC's words and leaves the operator's domain as it was.
func TestSONiCMCLAGRefused(t *testing.T) {
	bond := mclagBond("host-a", true, "Ethernet0")
	batch := fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}}, {Op: fabric.OpEnsureLAG, LAG: bond}}
	other := leaves
	other.Pair, other.Domain = "spines", 20
	for _, c := range []struct {
		name   string
		domain *fabric.MCLAGDomain
		want   []string
	}{
		{"no domain declared", nil, []string{"switch leaf1 is half of MLAG pair leaves", "set the NetworkDevice's mlagPairs[leaves].sonic"}},
		{"another pair", &other, []string{"pair spines's (domain 20", "not pair leaves's (domain 10", "one MCLAG domain"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := mclagSwitch(t)
			ep := sonicEndpoint(srv, &sonicRange)
			ep.MCLAG = c.domain
			sess, err := sshcli.Driver{Set: vendorssh.SONiC(), CommandTimeout: 10 * time.Second}.Connect(context.Background(), ep)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sess.Close() })
			err = sess.Apply(context.Background(), batch)
			if err == nil {
				t.Fatal("applied, want a refusal")
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
		})
	}

	t.Run("the operator's domain", func(t *testing.T) {
		srv := mclagSwitch(t)
		mine := vendortest.SONiCMCLAGDomain{ID: 7, SourceIP: "10.9.9.1", PeerIP: "10.9.9.2", PeerLink: "PortChannel1"}
		srv.Config.SetSONiCMCLAG(mine)
		_, err := mclagPass(t, srv, &leaves, fabric.State{VLANs: []fabric.VLAN{{ID: 1001}}, LAGs: map[string]fabric.LAG{bond.Name: bond}}, fabric.Record{})
		var cmdErr *sshcli.CommandError
		if !errors.As(err, &cmdErr) || !strings.HasPrefix(cmdErr.Command, "sudo config mclag add 10 ") || !strings.Contains(cmdErr.Output, "only one mclag Domain can be configured") {
			t.Fatalf("got %v, want SONiC's refusal of a second domain naming the command", err)
		}
		t.Logf("as a user sees it: %v", err)
		if d, _ := srv.Config.SONiCMCLAG(); d != mine {
			t.Errorf("the operator's domain became %+v", d)
		}
	})
}

// The exact lines of each SONiC MCLAG bond operation: a new MLAG bond (its port-channel, the
// domain, the member), one whose rate changes (out of the domain, made again, back in), and
// remove-lag (out of the domain first); each read back as asked.
func TestSONiCMCLAGCommands(t *testing.T) {
	bond := mclagBond("host-a", true, "Ethernet0", "Ethernet4")
	slow := bond
	slow.FastRate = false
	remove := bond
	remove.Port = fabric.Port{Name: bond.Name, Mode: fabric.ModeAccess, VLAN: 1}
	setup := fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}}}
	ctx := context.Background()
	for _, c := range []struct {
		op     string
		before bool
		change fabric.Change
	}{
		{"ensure-lag-mclag", false, fabric.Change{Op: fabric.OpEnsureLAG, LAG: bond}},
		{"ensure-lag-mclag-rate", true, fabric.Change{Op: fabric.OpEnsureLAG, LAG: slow}},
		{"remove-lag-mclag", true, fabric.Change{Op: fabric.OpRemoveLAG, LAG: remove}},
	} {
		t.Run(c.op, func(t *testing.T) {
			srv := mclagSwitch(t)
			ep := sonicEndpoint(srv, &sonicRange)
			ep.MCLAG = &leaves
			sess, err := sshcli.Driver{Set: vendorssh.SONiC(), CommandTimeout: 10 * time.Second}.Connect(ctx, ep)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sess.Close() })
			b := setup
			if c.before {
				b = append(slices.Clone(setup), fabric.Change{Op: fabric.OpEnsureLAG, LAG: bond})
			}
			if err := sess.Apply(ctx, b); err != nil {
				t.Fatal(err)
			}
			if _, err := sess.Read(ctx, []string{bond.Name}); err != nil {
				t.Fatal(err)
			}
			srv.Commands()
			if err := sess.Apply(ctx, fabric.Batch{c.change}); err != nil {
				t.Fatal(err)
			}
			golden(t, "sonic/"+c.op+".golden", srv.Commands())
			have, err := sess.Read(ctx, []string{bond.Name, "Ethernet0", "Ethernet4"})
			if err != nil {
				t.Fatal(err)
			}
			if c.change.Op == fabric.OpEnsureLAG && !fabric.SameLAG(have.LAGs[bond.Name], c.change.LAG) {
				t.Errorf("reads back as %s, want %s", have.LAGs[bond.Name].Describe(), c.change.LAG.Describe())
			}
			if l, ok := have.LAGs[bond.Name]; c.change.Op == fabric.OpRemoveLAG && ok {
				t.Errorf("the bond is still read back: %s", l.Describe())
			}
		})
	}
}
