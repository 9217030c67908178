package vendorssh_test

import (
	"slices"
	"testing"

	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// shut reports which ports the switch has shut.
func shut(srv *vendortest.Server, ports ...string) []bool {
	out := make([]bool, len(ports))
	for i, n := range ports {
		p, _ := srv.Config.Port(n)
		out[i] = p.Shutdown
	}
	return out
}

// A network's portStatus down on every OS: the access port and the trunk asked down end shut on
// the switch and read back down, the other port stays up; a second pass sends nothing; a port
// shut or opened by hand is put back; asked up again they are opened; shut again and then left,
// the reset brings them up.
func TestPortStateEndToEnd(t *testing.T) {
	for name, v := range vendors() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if !v.set.PortState {
				t.Fatalf("networkOS %s does not say it sets port state", name)
			}
			srv := vendortest.Start(t, name, v.ports[0], v.ports[1], v.ports[2])
			down := desired(v)
			for _, i := range []int{0, 2} {
				p := down.Ports[v.ports[i]]
				p.Down = true
				down.Ports[v.ports[i]] = p
			}
			if err := pass(t, v.set, srv, down, fabric.Record{}); err != nil {
				t.Fatalf("shutting: %v", err)
			}
			golden(t, name+"/shutdown.golden", srv.Commands())
			if got := shut(srv, v.ports[:]...); !slices.Equal(got, []bool{true, false, true}) {
				t.Errorf("ports shut on the switch: %v, want [true false true]", got)
			}
			checkSwitch(t, v, srv, down, nil)
			st := read(t, v.set, srv, v.ports[:])
			for n, p := range down.Ports {
				if !fabric.SamePort(st.Ports[n], p) || st.Ports[n].Down != p.Down {
					t.Errorf("port %s reads back %s, want %s", n, st.Ports[n].Describe(), p.Describe())
				}
			}
			if err := pass(t, v.set, srv, down, fabric.RecordOf(down)); err != nil {
				t.Fatalf("second pass: %v", err)
			}
			if got := srv.Commands(); len(got) != 0 {
				t.Fatalf("second pass sent %q, want nothing", got)
			}

			// Someone shuts the port that should be up, and opens one that should be down: the
			// next pass puts both back.
			srv.Config.SetShutdown(v.ports[1], true)
			srv.Config.SetShutdown(v.ports[0], false)
			if err := pass(t, v.set, srv, down, fabric.RecordOf(down)); err != nil {
				t.Fatalf("pass after the hand edit: %v", err)
			}
			if got := shut(srv, v.ports[:]...); !slices.Equal(got, []bool{true, false, true}) {
				t.Errorf("ports shut after the pass that repairs a hand edit: %v, want [true false true]", got)
			}
			srv.Commands()

			up := desired(v)
			if err := pass(t, v.set, srv, up, fabric.RecordOf(down)); err != nil {
				t.Fatalf("opening: %v", err)
			}
			golden(t, name+"/no-shutdown.golden", srv.Commands())
			if got := shut(srv, v.ports[:]...); slices.Contains(got, true) {
				t.Errorf("ports shut after portStatus up: %v", got)
			}

			if err := pass(t, v.set, srv, down, fabric.RecordOf(up)); err != nil {
				t.Fatalf("shutting again: %v", err)
			}
			if err := pass(t, v.set, srv, fabric.State{}, fabric.RecordOf(down)); err != nil {
				t.Fatalf("leaving: %v", err)
			}
			if got := shut(srv, v.ports[:]...); slices.Contains(got, true) {
				t.Errorf("ports shut after the host left: %v, want every reset port up", got)
			}
			checkSwitch(t, v, srv, fabric.State{}, v.ports[:])
			for n, p := range read(t, v.set, srv, v.ports[:]).Ports {
				if p.Down {
					t.Errorf("port %s reads back down after the reset", n)
				}
			}
		})
	}
}

// A bond's portStatus down shuts the bond (port-channel, ae, NVUE bond), not its members; it
// reads back down, a second pass sends nothing, and asked up it is opened.
func TestLAGPortState(t *testing.T) {
	for _, name := range lagOSes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := vendors()[name]
			extra := lagExtra[name]
			srv := vendortest.Start(t, name, v.ports[0], v.ports[1], v.ports[2], extra[0], extra[1])
			lags := bonds(name, v, extra)
			lacp := fabric.LAGName("host-a", "control")
			l := lags[lacp]
			l.Port.Down = true
			lags[lacp] = l
			want := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}, {ID: 1002}}, LAGs: lags, Ports: map[string]fabric.Port{}}
			if _, err := lagPass(t, v.set, srv, want, fabric.Record{}); err != nil {
				t.Fatalf("first pass: %v", err)
			}
			golden(t, name+"/lag-shutdown.golden", srv.Commands())
			have, err := lagPass(t, v.set, srv, want, fabric.RecordOf(want))
			if err != nil {
				t.Fatalf("second pass: %v", err)
			}
			if got := srv.Commands(); len(got) != 0 {
				t.Fatalf("second pass sent %q, want nothing", got)
			}
			got := have.LAGs[lacp]
			if !got.Port.Down || !fabric.SameLAG(got, l) {
				t.Errorf("bond reads back %s down=%v, want %s down", got.Describe(), got.Port.Down, l.Describe())
			}
			if s := shut(srv, got.Port.Name, l.Members[0], l.Members[1]); !slices.Equal(s, []bool{true, false, false}) {
				t.Errorf("bond %s and members %v shut: %v, want the bond only", got.Port.Name, l.Members, s)
			}
			if other := have.LAGs[fabric.LAGName("host-b", "storage")]; other.Port.Down {
				t.Errorf("the other bond reads back down")
			}

			l.Port.Down = false
			lags[lacp] = l
			if _, err := lagPass(t, v.set, srv, want, fabric.RecordOf(want)); err != nil {
				t.Fatalf("opening: %v", err)
			}
			if s := shut(srv, got.Port.Name); s[0] {
				t.Errorf("bond %s still shut after portStatus up", got.Port.Name)
			}
		})
	}
}
