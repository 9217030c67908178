package generate_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/internal/schematest"
	"github.com/metalwire/metalwire/pkg/generate"
	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

// The netplan phase 1 writes for the seed's nodes (the converter's own tests are in
// pkg/render/osnetconfig).
func TestNetplanOfTheSeedIsAcceptedByNetplan(t *testing.T) {
	g := NewWithT(t)
	res, err := readSeed(t).Generate(generate.State{}, seedOptions)
	g.Expect(err).NotTo(HaveOccurred())
	for _, n := range res.Nodes {
		plan, err := osnetconfig.Netplan(n.Interfaces, n.Node.Mapping)
		g.Expect(err).NotTo(HaveOccurred())
		files, err := schematest.NetplanFiles(t, plan)
		g.Expect(err).NotTo(HaveOccurred(), "netplan generate refused the file:\n%s", plan)
		g.Expect(files).To(HaveKeyWithValue("10-netplan-br-ctlplane.network", And(
			ContainSubstring("Address="+n.Addresses["net0"].String()+"/24"),
			ContainSubstring("Gateway=192.168.0.1"), ContainSubstring("DNS=8.8.8.8"))))
		g.Expect(files).To(HaveKeyWithValue("10-netplan-em0.network", And(
			ContainSubstring("PermanentMACAddress="+n.Node.Mapping["em0"]), ContainSubstring("Address="+n.Addresses["net1"].String()+"/24"))))
		g.Expect(files).To(HaveKeyWithValue("netplan-ovs-bond1.service", ContainSubstring("add-bond br-ctlplane bond1 em")))
		g.Expect(files).To(HaveKeyWithValue("netplan-ovs-br-ctlplane.service", ContainSubstring("add-br br-ctlplane")))
	}
}
