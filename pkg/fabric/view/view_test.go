package view

import (
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/testneeds"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fixedFabric is two switches, three hosts: h1 and h2 in cluster a (control on VLAN 1000,
// storage on a trunk), h2's control port drifted; h3 idle; leaf2 unreachable.
func fixedFabric() View {
	devices := []netv1.NetworkDevice{{
		ObjectMeta: metav1.ObjectMeta{Name: "rack1"},
		Spec: netv1.NetworkDeviceSpec{Switches: []netv1.Switch{
			{Name: "leaf1", NetworkOS: netv1.NetworkOSOpenvSwitch, Address: "192.0.2.1"},
			{Name: "leaf2", NetworkOS: netv1.NetworkOSOpenvSwitchSSH, Address: "192.0.2.2"},
		}},
		Status: netv1.NetworkDeviceStatus{Switches: []netv1.SwitchStatus{
			{Name: "leaf1", Reachable: true, Ports: []netv1.ConfiguredPort{
				{Name: "p1", Mode: netv1.PortModeAccess, VLAN: 1000},
				{Name: "p2", Mode: netv1.PortModeAccess, VLAN: 1000},
			}, Drifted: []netv1.DriftedPort{{Port: "p2", Set: "access vlan 1000", Found: "access vlan 7"}}},
			{Name: "leaf2", Reachable: false, LastError: "cannot reach 192.0.2.2:22: connection refused", Ports: []netv1.ConfiguredPort{
				{Name: "q1", Mode: netv1.PortModeTrunk, Trunk: []int32{1050}},
			}},
		}},
	}}
	card := func(name, sw, port string) netv1.HostNIC {
		return netv1.HostNIC{Name: name, NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: sw, Port: intstr.FromString(port)}}}
	}
	nics := []netv1.NIC{
		{Spec: netv1.NICSpec{Node: "h1", NetworkDeviceRef: "rack1", NICs: []netv1.HostNIC{card("eno1", "leaf1", "p1"), card("eno2", "leaf2", "q1")}},
			Status: netv1.NICStatus{ClusterNetwork: "a", NICs: []*netv1.NICAssignment{
				{Network: "control", VLANID: 1000}, {Network: "storage", VLANID: 1050, PortMode: netv1.PortModeTrunk}}}},
		{Spec: netv1.NICSpec{Node: "h2", NetworkDeviceRef: "rack1", NICs: []netv1.HostNIC{card("eno1", "leaf1", "p2")}},
			Status: netv1.NICStatus{ClusterNetwork: "a", NICs: []*netv1.NICAssignment{{Network: "control", VLANID: 1000}}}},
		{Spec: netv1.NICSpec{Node: "h3", NetworkDeviceRef: "rack1", NICs: []netv1.HostNIC{card("eno1", "leaf1", "p3")}}},
	}
	clusters := []netv1.ClusterNetwork{{
		ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Status: netv1.ClusterNetworkStatus{
			Networks: []netv1.NetworkStatus{{Name: "control", VLANID: 1000}, {Name: "storage", VLANID: 1050}},
			States: map[string]netv1.HostNetworkState{
				"h1": {NIC: "h1", State: netv1.HostReady}, "h2": {NIC: "h2", State: netv1.HostReady},
			},
		},
	}}
	return Build(devices, nics, clusters)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs from the golden file:\n%s", name, got)
	}
}

func TestTable(t *testing.T) { golden(t, "fabric.txt", fixedFabric().Table()) }

func TestDOT(t *testing.T) { golden(t, "fabric.dot", fixedFabric().DOT()) }

// Graphviz draws the graph: the SVG is XML and names every host and switch.
func TestSVGNamesEveryHost(t *testing.T) {
	if _, err := exec.LookPath("dot"); err != nil {
		testneeds.Missing(t, "this test needs Graphviz's dot (make test-deps installs graphviz)")
	}
	svg, err := SVG(context.Background(), fixedFabric().DOT())
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	dec := xml.NewDecoder(strings.NewReader(string(svg)))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not XML: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			texts = append(texts, strings.TrimSpace(string(cd)))
		}
	}
	all := strings.Join(texts, "\n")
	for _, name := range []string{"h1", "h2", "h3", "leaf1", "leaf2", "DRIFTED: set access vlan 1000, found access vlan 7", "FAILED"} {
		if !strings.Contains(all, name) {
			t.Errorf("the SVG does not show %q", name)
		}
	}
}

// A bond's member ports are the ports the cards are cabled to: each card shows the bond and
// what it carries, not idle.
func TestBondMembersShowTheirBond(t *testing.T) {
	devices := []netv1.NetworkDevice{{
		ObjectMeta: metav1.ObjectMeta{Name: "rack1"},
		Spec:       netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{Name: "leaf1", NetworkOS: netv1.NetworkOSOpenvSwitch}}},
		Status: netv1.NetworkDeviceStatus{Switches: []netv1.SwitchStatus{{Name: "leaf1", Reachable: true, Ports: []netv1.ConfiguredPort{
			{Name: "lag0123456789", Mode: netv1.PortModeTrunk, Trunk: []int32{1000, 1050},
				LAG: &netv1.ConfiguredLAG{Members: []string{"p1", "p2"}, Mode: netv1.LAGLACP}},
		}}}},
	}}
	card := func(name, port string) netv1.HostNIC {
		return netv1.HostNIC{Name: name, NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString(port)}}}
	}
	nics := []netv1.NIC{{Spec: netv1.NICSpec{Node: "h1", NetworkDeviceRef: "rack1", NICs: []netv1.HostNIC{card("eno1", "p1"), card("eno2", "p2")}}}}
	v := Build(devices, nics, nil)
	for _, l := range v.Links {
		if l.VLANs != "bond lag0123456789 lacp, tagged 1000,1050" || l.State != "ok" {
			t.Errorf("card %s: %q (%s), want the bond and its VLANs", l.Card, l.VLANs, l.State)
		}
	}
}

// A shut port and a port's access lists show beside its VLANs; here from a record written
// before the lists were recorded per switch, on their port (ports[].acls).
func TestShutPortsAndListsShow(t *testing.T) {
	devices := []netv1.NetworkDevice{{
		ObjectMeta: metav1.ObjectMeta{Name: "rack1"},
		Spec:       netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{Name: "leaf1", NetworkOS: netv1.NetworkOSOpenvSwitch}}},
		Status: netv1.NetworkDeviceStatus{Switches: []netv1.SwitchStatus{{Name: "leaf1", Reachable: true, Ports: []netv1.ConfiguredPort{
			{Name: "p1", Mode: netv1.PortModeAccess, VLAN: 1001, Down: true, ACLs: []netv1.ConfiguredACL{{Name: "acl0123456789", Rules: 2, Default: netv1.ACLDeny}}},
		}}}},
	}}
	nics := []netv1.NIC{{Spec: netv1.NICSpec{Node: "h1", NetworkDeviceRef: "rack1", NICs: []netv1.HostNIC{
		{Name: "eno1", NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString("p1")}}},
	}}}}
	v := Build(devices, nics, nil)
	if len(v.Links) != 1 || v.Links[0].VLANs != "vlan 1001, shut, acl acl0123456789 (2 rules, then deny)" {
		t.Errorf("links %+v: want the port's VLAN, shut, and its list", v.Links)
	}
}

// The record as the controller writes it leaves every default out; the view reads the defaults
// back: a port without mode is an access port, a bond without mode is LACP, a list without
// default ends in allow. The lists are the switch's (status.switches[].acls), each shown on the
// port of the card whose NIC status names it.
func TestCompactRecordReadsAsItsDefaults(t *testing.T) {
	devices := []netv1.NetworkDevice{{
		ObjectMeta: metav1.ObjectMeta{Name: "rack1"},
		Spec:       netv1.NetworkDeviceSpec{Switches: []netv1.Switch{{Name: "leaf1", NetworkOS: netv1.NetworkOSOpenvSwitch}}},
		Status: netv1.NetworkDeviceStatus{Switches: []netv1.SwitchStatus{{Name: "leaf1", Reachable: true, Ports: []netv1.ConfiguredPort{
			{Name: "p1", VLAN: 1001},
			{Name: "lag0123456789", VLAN: 1000, LAG: &netv1.ConfiguredLAG{Members: []string{"p2", "p3"}}},
		}, ACLs: []netv1.ConfiguredACLs{{Rules: 1, Names: []string{"acl0123456789", "acl9876543210"}}}}}},
	}}
	card := func(name, port string) netv1.HostNIC {
		return netv1.HostNIC{Name: name, NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: "leaf1", Port: intstr.FromString(port)}}}
	}
	nics := []netv1.NIC{
		{Spec: netv1.NICSpec{Node: "h1", NetworkDeviceRef: "rack1", NICs: []netv1.HostNIC{card("eno1", "p1")}},
			Status: netv1.NICStatus{NICs: []*netv1.NICAssignment{{Network: "control", VLANID: 1001, ACLs: []netv1.CardACL{{Name: "acl0123456789"}}}}}},
		{Spec: netv1.NICSpec{Node: "h2", NetworkDeviceRef: "rack1", NICs: []netv1.HostNIC{card("eno1", "p2"), card("eno2", "p3")}}},
	}
	want := map[string]string{
		"h1/eno1": "access: vlan 1001, acl acl0123456789 (1 rules, then allow)",
		"h2/eno1": "access: bond lag0123456789 lacp, vlan 1000",
		"h2/eno2": "access: bond lag0123456789 lacp, vlan 1000",
	}
	v := Build(devices, nics, nil)
	if len(v.Links) != len(want) {
		t.Fatalf("links %+v: want one per card", v.Links)
	}
	for _, l := range v.Links {
		if got := l.Mode + ": " + l.VLANs; got != want[l.Host+"/"+l.Card] {
			t.Errorf("card %s/%s shows %q, want %q", l.Host, l.Card, got, want[l.Host+"/"+l.Card])
		}
	}
}
