package generate_test

import (
	"net/netip"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/pkg/generate"
)

func TestAllocateKeepsHeldAddressesAndSkipsTaken(t *testing.T) {
	g := NewWithT(t)
	f := readSeed(t)
	held := generate.State{
		"net0": {"nodepool1-node-0": netip.MustParseAddr("192.168.0.10"), "gone": netip.MustParseAddr("192.168.0.11")},
		"net1": {"someone": netip.MustParseAddr("192.168.1.10")},
	}
	next, changes, err := f.Allocate(held)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(next["net0"]).To(HaveKeyWithValue("nodepool1-node-0", netip.MustParseAddr("192.168.0.10")), "kept")
	g.Expect(next["net0"]).To(HaveKeyWithValue("controllers-node-0", netip.MustParseAddr("192.168.0.12")), "lowest free")
	g.Expect(next["net1"]).To(HaveKeyWithValue("controllers-node-0", netip.MustParseAddr("192.168.1.11")))
	g.Expect(next["net1"]).To(HaveKeyWithValue("nodepool1-node-0", netip.MustParseAddr("192.168.1.12")))
	g.Expect(changes).To(HaveLen(3))
	g.Expect(held["net0"]).To(HaveLen(2), "the state given is not modified")
}

func TestReleaseThenANewNodeReusesTheAddress(t *testing.T) {
	g := NewWithT(t)
	f := readSeed(t)
	state, _, err := f.Allocate(generate.State{})
	g.Expect(err).NotTo(HaveOccurred())
	freed, changes := state.Release("controllers-node-0")
	g.Expect(changes).To(ConsistOf(
		generate.Change{Network: "net0", Node: "controllers-node-0", Address: netip.MustParseAddr("192.168.0.10"), Freed: true},
		generate.Change{Network: "net1", Node: "controllers-node-0", Address: netip.MustParseAddr("192.168.1.10"), Freed: true}))
	g.Expect(freed.Addresses("controllers-node-0")).To(BeEmpty())

	data, err := readFile("testdata/seed.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	renamed, err := generate.Parse([]byte(strings.ReplaceAll(data, "node-0:\n      em0: \"00:c8:7c:e6:f0:2e\"", "node-7:\n      em0: \"00:c8:7c:e6:f0:2e\"")))
	g.Expect(err).NotTo(HaveOccurred())
	again, _, err := renamed.Allocate(freed)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Addresses("controllers-node-7")).To(Equal(map[string]netip.Addr{
		"net0": netip.MustParseAddr("192.168.0.10"), "net1": netip.MustParseAddr("192.168.1.10")}))
}

func TestAllocateNeverGivesAnAddressTwice(t *testing.T) {
	g := NewWithT(t)
	var b strings.Builder
	b.WriteString(validNetworks)
	b.WriteString("nodepools:\n  big:\n    replicas: 2\n    networkConfig:\n      - {type: interface, name: em0, addresses: [{ip_netmask: {{ ip['net0'] }}}]}\n    macMapping:\n")
	b.WriteString("      a: {em0: \"52:54:00:00:00:01\"}\n      b: {em0: \"52:54:00:00:00:02\"}\n")
	f, err := generate.Parse([]byte(b.String()))
	g.Expect(err).NotTo(HaveOccurred())
	state, _, err := f.Allocate(generate.State{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(state["net0"]).To(Equal(map[string]netip.Addr{"big-a": netip.MustParseAddr("192.168.0.10"), "big-b": netip.MustParseAddr("192.168.0.11")}))
}
