package openconfig_test

import (
	"context"
	"strings"
	"testing"

	"github.com/metalwire/metalwire/internal/switchdriver/openconfig"
	"github.com/metalwire/metalwire/internal/switchtest/gnmitest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

func endpoint(tg *gnmitest.Target) fabric.Endpoint {
	return fabric.Endpoint{Switch: "leaf1", Address: tg.Host, Port: tg.Port, Credentials: fabric.Credentials{
		Username: tg.Username, Password: tg.Password, CAPEM: tg.CAPEM, CertPEM: tg.ClientCertPEM, KeyPEM: tg.ClientKeyPEM}}
}

// pass is one reconcile: connect, read, diff, one Set.
func pass(t *testing.T, tg *gnmitest.Target, want fabric.State, rec fabric.Record) error {
	t.Helper()
	ctx := context.Background()
	sess, err := openconfig.New().Connect(ctx, endpoint(tg))
	if err != nil {
		return err
	}
	defer func() { _ = sess.Close() }()
	names := []string{"Ethernet1", "Ethernet2", "Ethernet3"}
	have, err := sess.Read(ctx, names)
	if err != nil {
		return err
	}
	return sess.Apply(ctx, fabric.Diff(want, have, rec, 1))
}

func switched(tg *gnmitest.Target, port, leaf string) string {
	return tg.Leaf("/interfaces/interface[name=" + port + "]/ethernet/switched-vlan/config/" + leaf)
}

func vlan(tg *gnmitest.Target, id string) string {
	return tg.Leaf("/network-instances/network-instance[name=default]/vlans/vlan[vlan-id=" + id + "]/config/name")
}

// Set then Get round trip through a target that checks every Set against the OpenConfig schema:
// the ports and VLANs end as asked in one Set; a second pass sends none; leaving puts the ports
// back in the idle VLAN and removes the VLANs; a Set the schema refuses fails the batch with the
// target's message and changes nothing.
func TestSetGetRoundTrip(t *testing.T) {
	tg := gnmitest.Start(t, "Ethernet1", "Ethernet2", "Ethernet3")
	want := fabric.State{
		VLANs: []fabric.VLAN{{ID: 1001}, {ID: 1002}},
		Ports: map[string]fabric.Port{
			"Ethernet1": {Name: "Ethernet1", Mode: fabric.ModeAccess, VLAN: 1001},
			"Ethernet2": {Name: "Ethernet2", Mode: fabric.ModeTrunk, Trunk: []int{1001, 1002}},
			"Ethernet3": {Name: "Ethernet3", Mode: fabric.ModeTrunk, VLAN: 1001, Trunk: []int{1002}},
		},
	}
	if err := pass(t, tg, want, fabric.Record{}); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	if tg.Sets() != 1 {
		t.Fatalf("%d Sets, want the batch in one", tg.Sets())
	}
	for _, c := range []struct{ got, want string }{
		{switched(tg, "Ethernet1", "interface-mode"), "ACCESS"},
		{switched(tg, "Ethernet1", "access-vlan"), "1001"},
		{switched(tg, "Ethernet2", "interface-mode"), "TRUNK"},
		{switched(tg, "Ethernet2", "trunk-vlans"), "[1001 1002]"},
		{switched(tg, "Ethernet3", "native-vlan"), "1001"},
		{switched(tg, "Ethernet3", "trunk-vlans"), "[1002]"},
		{vlan(tg, "1001"), "vlan1001"},
		{vlan(tg, "1002"), "vlan1002"},
	} {
		if c.got != c.want {
			t.Errorf("target shows %q, want %q", c.got, c.want)
		}
	}

	if err := pass(t, tg, want, fabric.RecordOf(want)); err != nil || tg.Sets() != 1 {
		t.Fatalf("second pass: %v, %d Sets in all, want no new one", err, tg.Sets())
	}

	if err := pass(t, tg, fabric.State{}, fabric.RecordOf(want)); err != nil {
		t.Fatalf("leaving: %v", err)
	}
	for _, p := range []string{"Ethernet1", "Ethernet2", "Ethernet3"} {
		if m, v, tr := switched(tg, p, "interface-mode"), switched(tg, p, "access-vlan"), switched(tg, p, "trunk-vlans"); m != "ACCESS" || v != "1" || tr != "" {
			t.Errorf("%s after leaving: %s %s trunk %q, want ACCESS 1", p, m, v, tr)
		}
	}
	if vlan(tg, "1001") != "" || vlan(tg, "1002") != "" {
		t.Errorf("VLANs 1001 and 1002 still on the target")
	}

	// VLAN 4095 passes the driver (the switch's schema is the check) and the target refuses it.
	sets := tg.Sets()
	bad := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}}, Ports: map[string]fabric.Port{
		"Ethernet1": {Name: "Ethernet1", Mode: fabric.ModeAccess, VLAN: 1001},
		"Ethernet2": {Name: "Ethernet2", Mode: fabric.ModeTrunk, Trunk: []int{1001, 4095}},
	}}
	err := pass(t, tg, bad, fabric.Record{})
	if err == nil || !strings.Contains(err.Error(), "4095") || !strings.Contains(err.Error(), "nothing changed") {
		t.Fatalf("a Set the schema refuses: %v, want the target's message", err)
	}
	t.Logf("as a user sees it: %v", err)
	if tg.Sets() != sets || switched(tg, "Ethernet1", "access-vlan") != "1" || vlan(tg, "1001") != "" {
		t.Fatalf("a refused Set changed the target")
	}
}

// A port the switch does not have is refused before anything is sent; wrong credentials and an
// unknown CA fail the connection without showing the password.
func TestRefusals(t *testing.T) {
	tg := gnmitest.Start(t, "Ethernet1")
	ctx := context.Background()
	sess, err := openconfig.New().Connect(ctx, endpoint(tg))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	err = sess.Apply(ctx, fabric.Batch{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "Ethernet9", Mode: fabric.ModeAccess, VLAN: 5}}})
	if err == nil || !strings.Contains(err.Error(), `no interface "Ethernet9"`) || tg.Sets() != 0 {
		t.Fatalf("a missing port: %v", err)
	}
	if info, err := sess.Info(ctx); err != nil || info.Version != "gNMI 0.10.0" {
		t.Fatalf("Info = %+v, %v", info, err)
	}

	ep := endpoint(tg)
	ep.Credentials.Password = "not-it-5c1e"
	if _, err := openconfig.New().Connect(ctx, ep); err == nil || !strings.Contains(err.Error(), "Unauthenticated") || strings.Contains(err.Error(), "5c1e") {
		t.Fatalf("wrong password: %v", err)
	}
	other := gnmitest.Start(t)
	ep = endpoint(tg)
	ep.Credentials.CAPEM = other.CAPEM
	if _, err := openconfig.New().Connect(ctx, ep); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("an unknown CA: %v", err)
	}
}

// portStatus down through gNMI: the ports asked down end with config/enabled false on a target
// that checks the Set against the schema, in the batch's one Set, and read back down; a second
// pass sends no Set; asked up they are enabled again, and a reset (the host leaving) enables a
// port that was down.
func TestPortState(t *testing.T) {
	if !openconfig.New().SetsPortState() || fabric.OSesWithoutPortState[openconfig.NetworkOS] != "" {
		t.Fatalf("the gNMI driver and fabric.OSesWithoutPortState (%q) disagree on port state", fabric.OSesWithoutPortState[openconfig.NetworkOS])
	}
	tg := gnmitest.Start(t, "Ethernet1", "Ethernet2", "Ethernet3")
	enabled := func(port string) string { return tg.Leaf("/interfaces/interface[name=" + port + "]/config/enabled") }
	down := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}, {ID: 1002}}, Ports: map[string]fabric.Port{
		"Ethernet1": {Name: "Ethernet1", Mode: fabric.ModeAccess, VLAN: 1001, Down: true},
		"Ethernet2": {Name: "Ethernet2", Mode: fabric.ModeAccess, VLAN: 1001},
		"Ethernet3": {Name: "Ethernet3", Mode: fabric.ModeTrunk, VLAN: 1001, Trunk: []int{1002}, Down: true},
	}}
	if err := pass(t, tg, down, fabric.Record{}); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	if tg.Sets() != 1 {
		t.Fatalf("%d Sets, want one", tg.Sets())
	}
	for port, want := range map[string]string{"Ethernet1": "false", "Ethernet2": "true", "Ethernet3": "false"} {
		if got := enabled(port); got != want {
			t.Errorf("%s config/enabled %q, want %q", port, got, want)
		}
	}
	ctx := context.Background()
	sess, err := openconfig.New().Connect(ctx, endpoint(tg))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sess.Read(ctx, []string{"Ethernet1", "Ethernet2", "Ethernet3"})
	_ = sess.Close()
	if err != nil {
		t.Fatal(err)
	}
	for n, p := range down.Ports {
		if st.Ports[n].Down != p.Down {
			t.Errorf("%s reads back down=%v, want %v", n, st.Ports[n].Down, p.Down)
		}
	}
	if err := pass(t, tg, down, fabric.RecordOf(down)); err != nil || tg.Sets() != 1 {
		t.Fatalf("second pass: %v, %d Sets in all, want no new one", err, tg.Sets())
	}

	up := fabric.State{VLANs: down.VLANs, Ports: map[string]fabric.Port{}}
	for n, p := range down.Ports {
		p.Down = false
		up.Ports[n] = p
	}
	if err := pass(t, tg, up, fabric.RecordOf(down)); err != nil {
		t.Fatalf("opening: %v", err)
	}
	if got := enabled("Ethernet1"); got != "true" {
		t.Errorf("Ethernet1 config/enabled %q after portStatus up", got)
	}
	if err := pass(t, tg, down, fabric.RecordOf(up)); err != nil {
		t.Fatalf("shutting again: %v", err)
	}
	if err := pass(t, tg, fabric.State{}, fabric.RecordOf(down)); err != nil {
		t.Fatalf("leaving: %v", err)
	}
	for _, n := range []string{"Ethernet1", "Ethernet3"} {
		if got := enabled(n); got != "true" {
			t.Errorf("%s config/enabled %q after the reset, want true", n, got)
		}
	}
}
