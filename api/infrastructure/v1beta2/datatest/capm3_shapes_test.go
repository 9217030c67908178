package datatest

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// CAPM3 v1beta2 has no omitempty on NetworkDataIPv6.ipAddressFromIPPool, so a template it
// writes (or a user copies from `kubectl get -o yaml`) carries ipAddressFromIPPool: "" beside
// fromPoolRef. The Go types here drop "" when they send, so these cases are written as YAML,
// the way such a manifest reaches the API server.

// templateWithNetworks is a Metal3DataTemplate whose networkData.networks is networks (YAML,
// indented for that place), on links eno1 and eno2.
func templateWithNetworks(networks string) string {
	return `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {generateName: empty-source-}
spec:
  networkData:
    links:
      ethernets:
      - {type: phy, id: eno1, macAddress: {fromHostInterface: eno1}}
      - {type: phy, id: eno2, macAddress: {fromHostInterface: eno2}}
    networks:
` + networks
}

const inClusterRef4 = `{apiGroup: ipam.cluster.x-k8s.io, kind: InClusterIPPool, name: v4}`
const inClusterRef6 = `{apiGroup: ipam.cluster.x-k8s.io, kind: InClusterIPPool, name: v6}`

func createFromYAML(g Gomega, ns, manifest string) error {
	obj := &unstructured.Unstructured{}
	g.ExpectWithOffset(1, yaml.Unmarshal([]byte(manifest), &obj.Object)).To(Succeed())
	obj.SetNamespace(ns)
	return env.Client.Create(context.Background(), obj, client.FieldValidation("Strict"))
}

func TestEmptyPoolNameIsNoAddressSource(t *testing.T) {
	ns := newNamespace(t)
	accepted := []struct{ name, networks string }{
		{"IPv4: ipAddressFromIPPool \"\" beside fromPoolRef", `
      ipv4:
      - {id: n4, link: eno1, ipAddressFromIPPool: "", fromPoolRef: ` + inClusterRef4 + `}
`},
		{"IPv6: ipAddressFromIPPool \"\" beside fromPoolRef, as CAPM3 writes it", `
      ipv6:
      - {id: n6, link: eno1, ipAddressFromIPPool: "", fromPoolRef: ` + inClusterRef6 + `}
`},
		{"IPv4 gateway: fromIPPool \"\" beside fromPoolRef", `
      ipv4:
      - id: n4
        link: eno1
        fromPoolRef: ` + inClusterRef4 + `
        routes:
        - {network: 0.0.0.0, gateway: {fromIPPool: "", fromPoolRef: ` + inClusterRef4 + `}}
`},
		{"IPv6 gateway: fromIPPool \"\" beside fromPoolRef", `
      ipv6:
      - id: n6
        link: eno2
        ipAddressFromIPPool: ""
        fromPoolRef: ` + inClusterRef6 + `
        routes:
        - {network: "::", gateway: {fromIPPool: "", fromPoolRef: ` + inClusterRef6 + `}}
`},
	}
	for _, tc := range accepted {
		t.Run("accepted/"+tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			g.Expect(createFromYAML(g, ns, templateWithNetworks(tc.networks))).To(Succeed())
		})
	}

	refused := []struct{ name, networks, field, message string }{
		{"IPv4: an empty ipAddressFromIPPool alone is no source", `
      ipv4:
      - {id: n4, link: eno1, ipAddressFromIPPool: ""}
`, ipv4, addrMsg},
		{"IPv6: a named pool and fromPoolRef are still two sources", `
      ipv6:
      - {id: n6, link: eno1, ipAddressFromIPPool: pool6, fromPoolRef: ` + inClusterRef6 + `}
`, ipv6, addrMsg},
		{"IPv4 gateway: an empty fromIPPool alone is no source", `
      ipv4:
      - id: n4
        link: eno1
        ipAddressFromIPPool: pool4
        routes:
        - {network: 0.0.0.0, gateway: {fromIPPool: ""}}
`, route4 + ".gateway", gwMsg},
		{"IPv6 gateway: a named pool and fromPoolRef are still two sources", `
      ipv4:
      - {id: n4, link: eno1, ipAddressFromIPPool: pool4}
      ipv6:
      - id: n6
        link: eno2
        ipAddressFromIPPool: pool6
        routes:
        - {network: "::", gateway: {fromIPPool: pool6, fromPoolRef: ` + inClusterRef6 + `}}
`, route6 + ".gateway", gwMsg},
	}
	for _, tc := range refused {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			expectRefused(g, createFromYAML(g, ns, templateWithNetworks(tc.networks)), tc.field, tc.message)
		})
	}
}

// CAPM3 marks bondLinks optional and writes bondLinks: null when unset; metalwire refuses a
// bond without members (it would carry no traffic) unless bondFrom takes them from the fabric,
// and says which field to fill.
func TestBondWithoutMembersIsRefused(t *testing.T) {
	ns := newNamespace(t)
	oneOf := "give exactly one of bondLinks (the ids of the member links) and bondFrom"
	cases := []struct{ name, bond, field, message string }{
		{"bondLinks left out", `{id: bond0, bondMode: active-backup}`, "spec.networkData.links.bonds[0]", oneOf},
		{"bondLinks: null, as CAPM3 writes an unset list", `{id: bond0, bondMode: active-backup, bondLinks: null}`, "spec.networkData.links.bonds[0]", oneOf},
		{"bondLinks: []", `{id: bond0, bondMode: active-backup, bondLinks: []}`, "spec.networkData.links.bonds[0].bondLinks", "should have at least 1 items"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			manifest := `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {generateName: bond-}
spec:
  networkData:
    links:
      ethernets:
      - {type: phy, id: eno1, macAddress: {fromHostInterface: eno1}}
      bonds:
      - ` + tc.bond + `
`
			expectRefused(g, createFromYAML(g, ns, manifest), tc.field, tc.message)
		})
	}
}
