package render_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/schematest"
	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

// TestGoldenOSNetConfigValidates checks every golden os-net-config file, as written on disk,
// with os-net-config's own schema and mapping rules.
func TestGoldenOSNetConfigValidates(t *testing.T) {
	configs, _ := filepath.Glob("testdata/golden/*/os-net-config.yaml")
	if len(configs) == 0 {
		t.Fatal("no golden os-net-config.yaml")
	}
	for _, path := range configs {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			g := NewWithT(t)
			doc, err := os.ReadFile(path)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(osnetconfig.Validate(doc)).To(Succeed())
			mapping, err := os.ReadFile(filepath.Join(filepath.Dir(path), "os-net-config-mapping.yaml"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(osnetconfig.ValidateMapping(mapping)).To(Succeed())
		})
	}
}

// netplanGolden is the part of a netplan document the assertions compare with what netplan wrote.
type netplanGolden struct {
	Network struct {
		Ethernets map[string]netplanGoldenDev `json:"ethernets"`
		Bonds     map[string]netplanGoldenDev `json:"bonds"`
		Bridges   map[string]netplanGoldenDev `json:"bridges"`
		VLANs     map[string]netplanGoldenDev `json:"vlans"`
	} `json:"network"`
}

type netplanGoldenDev struct {
	Addresses  []string `json:"addresses"`
	Interfaces []string `json:"interfaces"`
	ID         int      `json:"id"`
	Link       string   `json:"link"`
	SetName    string   `json:"set-name"`
	Match      struct {
		MAC string `json:"macaddress"`
	} `json:"match"`
	Parameters struct {
		Mode string `json:"mode"`
	} `json:"parameters"`
}

// TestGoldenNetplanAcceptedByNetplan has netplan itself generate every golden netplan file and
// checks that the systemd-networkd configuration it writes has each device the document names:
// ethernets matched by MAC, bonds with their mode and members, VLANs with their id on their
// parent, and every address on its device.
func TestGoldenNetplanAcceptedByNetplan(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*/netplan.yaml")
	if len(files) == 0 {
		t.Fatal("no golden netplan.yaml")
	}
	for _, path := range files {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			g := NewWithT(t)
			doc, err := os.ReadFile(path)
			g.Expect(err).NotTo(HaveOccurred())
			var np netplanGolden
			g.Expect(yaml.Unmarshal(doc, &np)).To(Succeed())
			nd, err := schematest.NetplanGenerate(t, doc)
			g.Expect(err).NotTo(HaveOccurred(), "netplan refuses %s", path)
			expectNetplanApplied(g, np, nd)
		})
	}
}

func expectNetplanApplied(g Gomega, np netplanGolden, nd schematest.Networkd) {
	net := func(name string) schematest.Unit {
		u, ok := nd.Network(name)
		g.Expect(ok).To(BeTrue(), "netplan wrote no .network for %s; it wrote %v", name, keys(nd))
		return u
	}
	expectAddresses := func(name string, d netplanGoldenDev) {
		if len(d.Addresses) > 0 {
			g.Expect(net(name)["Network"]["Address"]).To(ConsistOf(d.Addresses), "addresses of %s", name)
		}
	}
	for name, d := range np.Network.Ethernets {
		u := net(name)
		// netplan matches the NIC's permanent (burned-in) MAC, so a bond taking it over later
		// does not break the match.
		g.Expect(strings.ToLower(u.Get("Match", "PermanentMACAddress"))).To(Equal(strings.ToLower(d.Match.MAC)), "%s is matched by its MAC", name)
		if d.SetName != "" {
			link, ok := nd["10-netplan-"+name+".link"]
			g.Expect(ok).To(BeTrue(), "netplan wrote no .link renaming %s", name)
			g.Expect(link.Get("Link", "Name")).To(Equal(d.SetName))
		}
		expectAddresses(name, d)
	}
	for name, d := range np.Network.Bonds {
		dev, ok := nd.NetDev(name)
		g.Expect(ok).To(BeTrue(), "netplan wrote no .netdev for bond %s", name)
		g.Expect(dev.Get("NetDev", "Kind")).To(Equal("bond"))
		g.Expect(dev.Get("Bond", "Mode")).To(Equal(d.Parameters.Mode))
		for _, m := range d.Interfaces {
			g.Expect(net(m).Get("Network", "Bond")).To(Equal(name), "%s is a member of bond %s", m, name)
		}
		expectAddresses(name, d)
	}
	for name, d := range np.Network.Bridges {
		dev, ok := nd.NetDev(name)
		g.Expect(ok).To(BeTrue(), "netplan wrote no .netdev for bridge %s", name)
		g.Expect(dev.Get("NetDev", "Kind")).To(Equal("bridge"))
		for _, m := range d.Interfaces {
			g.Expect(net(m).Get("Network", "Bridge")).To(Equal(name), "%s is a port of bridge %s", m, name)
		}
		expectAddresses(name, d)
	}
	for name, d := range np.Network.VLANs {
		dev, ok := nd.NetDev(name)
		g.Expect(ok).To(BeTrue(), "netplan wrote no .netdev for VLAN %s", name)
		g.Expect(dev.Get("NetDev", "Kind")).To(Equal("vlan"))
		g.Expect(dev.Get("VLAN", "Id")).To(Equal(strconv.Itoa(d.ID)))
		g.Expect(net(d.Link)["Network"]["VLAN"]).To(ContainElement(name), "VLAN %s is on %s", name, d.Link)
		expectAddresses(name, d)
	}
}

func keys(nd schematest.Networkd) []string {
	out := make([]string, 0, len(nd))
	for k := range nd {
		out = append(out, k)
	}
	return out
}
