package openvswitch

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/metalwire/metalwire/pkg/fabric"
)

func TestDesiredRows(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    fabric.Change
		want vlanConfig
	}{
		{"access", fabric.Change{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p", VLAN: 10}},
			vlanConfig{Tag: ptr(10), VLANMode: ptr("access")}},
		{"trunk", fabric.Change{Op: fabric.OpTrunkPort, Port: fabric.Port{Name: "p", Trunk: []int{20, 10, 20}}},
			vlanConfig{Trunks: []int{10, 20}, VLANMode: ptr("trunk")}},
		{"trunk with a native VLAN", fabric.Change{Op: fabric.OpTrunkPort, Port: fabric.Port{Name: "p", VLAN: 5, Trunk: []int{10}}},
			vlanConfig{Tag: ptr(5), Trunks: []int{10}, VLANMode: ptr("native-untagged")}},
		{"reset to the idle VLAN", fabric.Change{Op: fabric.OpResetPort, Port: fabric.Port{Name: "p", VLAN: 1}},
			vlanConfig{Tag: ptr(1)}},
		{"reset with idle VLAN 0 clears all", fabric.Change{Op: fabric.OpResetPort, Port: fabric.Port{Name: "p"}},
			vlanConfig{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := desired(tc.c); !got.equal(tc.want) {
				t.Fatalf("desired = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestObservedPorts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tag    int
		trunks []int
		mode   string
		want   fabric.Port
	}{
		{"tag only reads as access", 7, nil, "", fabric.Port{Name: "p", Mode: fabric.ModeAccess, VLAN: 7}},
		{"access", 7, nil, "access", fabric.Port{Name: "p", Mode: fabric.ModeAccess, VLAN: 7}},
		{"trunks only reads as trunk", 0, []int{3, 2}, "", fabric.Port{Name: "p", Mode: fabric.ModeTrunk, Trunk: []int{2, 3}}},
		{"native-untagged", 4, []int{2}, "native-untagged", fabric.Port{Name: "p", Mode: fabric.ModeTrunk, VLAN: 4, Trunk: []int{2}}},
		{"nothing set: no mode", 0, nil, "", fabric.Port{Name: "p"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PortFromColumns("p", tc.tag, tc.trunks, tc.mode); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCheckRefusesBeforeSending(t *testing.T) {
	for _, tc := range []struct {
		c           fabric.Change
		unsupported bool
	}{
		{c: fabric.Change{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p", VLAN: 4095}}},
		{c: fabric.Change{Op: fabric.OpAccessPort, Port: fabric.Port{VLAN: 5}}},
		{c: fabric.Change{Op: fabric.OpTrunkPort, Port: fabric.Port{Name: "p"}}},
		{c: fabric.Change{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 0}}},
		{c: fabric.Change{Op: fabric.OpEnsureLAG, LAG: fabric.LAG{Name: "bond0"}}},
		{c: fabric.Change{Op: fabric.OpEnsureLAG, LAG: fabric.LAG{Name: "bond0", Members: []string{"p1", "p2"}, MLAG: &fabric.MLAG{Pair: "p", Domain: 1, Peer: "leaf2"}}}, unsupported: true},
		{c: fabric.Change{Op: fabric.OpRemoveACL, ACL: fabric.ACL{Name: "a"}}},                                                 // no cookie: never guess whose flows to delete
		{c: fabric.Change{Op: fabric.OpRemoveACL, ACL: fabric.ACL{Name: "acl0000000001", Cookie: fabric.ACLCookie("h", "n")}}}, // name and cookie disagree
		{c: fabric.Change{Op: fabric.OpEnsureACL, ACL: fabric.ACL{Name: fabric.ACLName("h", "n"), Cookie: fabric.ACLCookie("h", "n"), Port: "p",
			Rules: []fabric.ACLRule{{Direction: "inbound", Protocol: "ssh", Action: "deny"}}}}},
		{c: fabric.Change{Op: fabric.OpEnsureACL, ACL: fabric.ACL{Name: fabric.ACLName("h", "n"), Cookie: fabric.ACLCookie("h", "n")}}}, // bound to no port
	} {
		err := check(0, tc.c)
		if err == nil || errors.Is(err, fabric.ErrUnsupported) != tc.unsupported {
			t.Errorf("check(%s) = %v, want an error (unsupported: %v)", tc.c, err, tc.unsupported)
		}
	}
	if err := check(0, fabric.Change{Op: fabric.OpResetPort, Port: fabric.Port{Name: "p"}}); err != nil {
		t.Errorf("reset with idle VLAN 0: %v", err)
	}
}

func TestOpenFlowRemote(t *testing.T) {
	for _, tc := range []struct {
		ep      fabric.Endpoint
		ovsdb   string
		want    string
		wantErr string
	}{
		{ep: fabric.Endpoint{Bridge: "br0", OpenFlowRemote: "tcp:192.0.2.10:6653"}, ovsdb: "tcp:192.0.2.10:6640", want: "tcp:192.0.2.10:6653"},
		{ep: fabric.Endpoint{Bridge: "br0"}, ovsdb: "unix:/var/run/openvswitch/db.sock", want: "unix:/var/run/openvswitch/br0.mgmt"},
		{ep: fabric.Endpoint{Switch: "leaf1", Bridge: "br0"}, ovsdb: "tcp:192.0.2.10:6640", wantErr: "switch leaf1: access lists and port state are written through the bridge's OpenFlow endpoint"},
		{ep: fabric.Endpoint{Switch: "leaf1"}, ovsdb: "unix:/var/run/openvswitch/db.sock", wantErr: "set the switch's bridge"},
	} {
		got, err := OpenFlowRemote(tc.ep, tc.ovsdb)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("OpenFlowRemote(%+v, %q) = %q, %v; want an error with %q", tc.ep, tc.ovsdb, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("OpenFlowRemote(%+v, %q) = %q, %v; want %q", tc.ep, tc.ovsdb, got, err, tc.want)
		}
	}
}

func TestRemote(t *testing.T) {
	tlsCreds := fabric.Credentials{CertPEM: []byte("x")}
	for _, tc := range []struct {
		ep      fabric.Endpoint
		want    string
		wantErr string
	}{
		{ep: fabric.Endpoint{Address: "192.0.2.10"}, want: "tcp:192.0.2.10:6640"},
		{ep: fabric.Endpoint{Address: "leaf1.example", Port: 6641}, want: "tcp:leaf1.example:6641"},
		{ep: fabric.Endpoint{Address: "2001:db8::1"}, want: "tcp:[2001:db8::1]:6640"},
		{ep: fabric.Endpoint{Address: "192.0.2.10", Credentials: tlsCreds}, want: "ssl:192.0.2.10:6640"},
		{ep: fabric.Endpoint{Address: "unix:/run/openvswitch/db.sock"}, want: "unix:/run/openvswitch/db.sock"},
		{ep: fabric.Endpoint{Address: "leaf1:6640"}, wantErr: "write the port in port"},
		{ep: fabric.Endpoint{}, wantErr: "address is empty"},
	} {
		got, err := Remote(tc.ep)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Remote(%+v) = %q, %v; want an error with %q", tc.ep, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Remote(%+v) = %q, %v; want %q", tc.ep, got, err, tc.want)
		}
	}
}
