package migrate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/pkg/migrate"
)

// The seed's two PacketMachineTemplates (one block, no ---) become each a Metal3DataTemplate
// with a VLAN sub-interface of bond0 and an IPPool of its range; every field is accounted for.
func TestPacketMachineTemplatesBecomeHostNetworkData(t *testing.T) {
	g := NewWithT(t)
	in, err := os.ReadFile(filepath.Join("..", "..", "test", "fixtures", "seeds", "004-02-packetmachinetemplate-multi.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	res, err := migrate.Migrate(in)
	g.Expect(err).NotTo(HaveOccurred())
	var objects []string
	for _, d := range res.Documents {
		objects = append(objects, d.Object)
	}
	g.Expect(objects).To(Equal([]string{
		"Metal3DataTemplate/example-packet-machine-template", "IPPool/example-packet-machine-template-1000",
		"Metal3DataTemplate/example-packet-machine-template-1", "IPPool/example-packet-machine-template-1-1001",
	}))
	out := string(res.Output())
	for _, want := range []string{"id: bond0.1000\n", "vlanID: 1000\n", "vlanLink: bond0\n", "ipAddressFromIPPool: example-packet-machine-template-1000\n",
		"start: 10.60.10.2\n", "end: 10.60.10.254\n", "gateway: 10.60.10.1\n", "network: 10.60.0.0\n", "prefix: 16\n", "vlanID: 1001\n"} {
		g.Expect(out).To(ContainSubstring(want))
	}
	var notes []string
	for _, n := range res.Changes() {
		notes = append(notes, n.String())
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{
		"spec.template.spec.ports[0]: port bond0 (bonded true, layer2 false) is the hybrid-bonded network type",
		"spec.template.spec.ports[0].ip_addresses[0]: VXLAN 1000 became VLAN sub-interface bond0.1000",
		"spec.template.spec.routes: became the routes",
		"spec.template.spec.plan: dropped",
	} {
		g.Expect(all).To(ContainSubstring(want))
	}
	g.Expect(res.MustChange()).To(BeEmpty())
}
