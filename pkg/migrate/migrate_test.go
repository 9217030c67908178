package migrate_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/pkg/migrate"
)

// rule is one row of the rule tables: a manifest in, the manifest expected out, and the notes
// expected (each "path: words of the message").
type rule struct {
	name       string
	given      string
	want       string
	changes    []string
	mustChange []string
	warnings   []string
}

func runRules(t *testing.T, rules []rule) {
	t.Helper()
	for _, tt := range rules {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			res, err := migrate.Migrate([]byte(tt.given))
			g.Expect(err).NotTo(HaveOccurred())

			var got, want any
			g.Expect(yaml.Unmarshal(res.Output(), &got)).To(Succeed(), "output is YAML:\n%s", res.Output())
			g.Expect(yaml.Unmarshal([]byte(tt.want), &want)).To(Succeed())
			g.Expect(got).To(Equal(want), "output:\n%s", res.Output())

			g.Expect(noteStrings(res.Changes())).To(ConsistOf(containing(tt.changes)), "changes")
			g.Expect(noteStrings(res.MustChange())).To(ConsistOf(containing(tt.mustChange)), "must change")
			g.Expect(noteStrings(res.Warnings())).To(ConsistOf(containing(tt.warnings)), "warnings")
		})
	}
}

func noteStrings(notes []migrate.Note) []string {
	out := []string{}
	for _, n := range notes {
		out = append(out, n.String())
	}
	return out
}

func containing(parts []string) []any {
	out := []any{}
	for _, p := range parts {
		out = append(out, ContainSubstring(p))
	}
	return out
}

func TestMetal3Rules(t *testing.T) {
	runRules(t, []rule{{
		name: "noCloudProvider true means the cloud provider is disabled",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha4
kind: Metal3Cluster
metadata: {name: m3c}
spec:
  controlPlaneEndpoint: {host: 192.168.111.249, port: 6443}
  noCloudProvider: true
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Cluster
metadata: {name: m3c}
spec:
  controlPlaneEndpoint: {host: 192.168.111.249, port: 6443}
  cloudProviderEnabled: false
`,
		changes: []string{
			"Metal3Cluster/m3c: apiVersion: infrastructure.cluster.x-k8s.io/v1alpha4 -> infrastructure.cluster.x-k8s.io/v1beta2",
			"Metal3Cluster/m3c: spec.noCloudProvider: true -> cloudProviderEnabled: false",
		},
	}, {
		name: "noCloudProvider false means enabled",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Cluster
metadata: {name: m3c}
spec: {noCloudProvider: false}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Cluster
metadata: {name: m3c}
spec: {cloudProviderEnabled: true}
`,
		changes: []string{"spec.noCloudProvider: false -> cloudProviderEnabled: true"},
	}, {
		name: "noCloudProvider contradicting cloudProviderEnabled is left to the user",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Cluster
metadata: {name: m3c}
spec: {noCloudProvider: true, cloudProviderEnabled: true}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Cluster
metadata: {name: m3c}
spec: {noCloudProvider: true, cloudProviderEnabled: true}
`,
		mustChange: []string{"spec.noCloudProvider: contradicts cloudProviderEnabled: true"},
	}, {
		name: "capitalised Name and Namespace in references become lowercase; label keys stay",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1, labels: {Name: keep}}
spec:
  image: {url: http://x/img, checksum: http://x/img.md5}
  dataTemplate: {Name: tmpl, Namespace: ns1}
  hostSelector: {matchLabels: {Name: keep}}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1, labels: {Name: keep}}
spec:
  image: {url: http://x/img, checksum: http://x/img.md5}
  dataTemplate: {name: tmpl, namespace: ns1}
  hostSelector: {matchLabels: {Name: keep}}
`,
		changes: []string{"spec.dataTemplate.name: Name -> name", "spec.dataTemplate.namespace: Namespace -> namespace"},
	}, {
		name: "matchExpressions written as one map becomes a one-item list",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1}
spec:
  image: {url: http://x/img, checksum: http://x/img.md5}
  hostSelector:
    matchExpressions: {key: key2, operator: in, values: [a, b]}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1}
spec:
  image: {url: http://x/img, checksum: http://x/img.md5}
  hostSelector:
    matchExpressions: [{key: key2, operator: in, values: [a, b]}]
`,
		changes: []string{"Metal3Machine/m1: spec.hostSelector.matchExpressions: map -> list"},
	}, {
		name: "matchExpressions keyed by label becomes a list of {key, operator, values}",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3MachineTemplate
metadata: {name: t1}
spec:
  template:
    spec:
      image: {url: http://x/img, checksum: http://x/img.md5}
      hostSelector:
        matchExpressions:
          rack: {operator: in, values: [r1]}
          gpu: {operator: exists}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3MachineTemplate
metadata: {name: t1}
spec:
  template:
    spec:
      image: {url: http://x/img, checksum: http://x/img.md5}
      hostSelector:
        matchExpressions:
          - {key: rack, operator: in, values: [r1]}
          - {key: gpu, operator: exists}
`,
		changes: []string{"spec.template.spec.hostSelector.matchExpressions: map of key -> {operator, values} -> list"},
	}, {
		name: "values written as a set is reported, not fixed",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1}
spec:
  image: {url: http://x/img, checksum: http://x/img.md5}
  hostSelector:
    matchExpressions:
      - key: k
        operator: in
        values: {abc, "123"}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1}
spec:
  image: {url: http://x/img, checksum: http://x/img.md5}
  hostSelector:
    matchExpressions:
      - key: k
        operator: in
        values: {abc: null, "123": null}
`,
		mustChange: []string{`Metal3Machine/m1: spec.hostSelector.matchExpressions[0].values: written as a YAML set {...}, which is a map of keys without values; write a list: ["abc", "123"]`},
	}, {
		name: "a set written with ? keys is a set too",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1}
spec:
  image: {url: http://x/img, checksum: http://x/img.md5}
  hostSelector:
    matchExpressions:
      - key: k
        operator: in
        values:
          ? a
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1}
spec:
  image: {url: http://x/img, checksum: http://x/img.md5}
  hostSelector:
    matchExpressions: [{key: k, operator: in, values: {a: null}}]
`,
		mustChange: []string{`spec.hostSelector.matchExpressions[0].values: written as a YAML set`},
	}, {
		name: "typographic quotes are reported with the field and stay",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1}
spec:
  image: {url: http://x/img, checksum: http://x/img.md5}
  hostSelector:
    matchExpressions: [{key: k, operator: in, values: [‘a’, “b”]}]
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1}
spec:
  image: {url: http://x/img, checksum: http://x/img.md5}
  hostSelector:
    matchExpressions: [{key: k, operator: in, values: [‘a’, “b”]}]
`,
		mustChange: []string{
			`spec.hostSelector.matchExpressions[0].values[0]: "‘a’" has typographic quotes`,
			`spec.hostSelector.matchExpressions[0].values[1]: "“b”" has typographic quotes`,
		},
	}, {
		name: "a Metal3Machine without image or customDeploy needs the user",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Machine
metadata: {name: m1}
spec: {dataTemplate: {name: d}}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1}
spec: {dataTemplate: {name: d}}
`,
		changes:    []string{"apiVersion: infrastructure.cluster.x-k8s.io/v1beta1 -> infrastructure.cluster.x-k8s.io/v1beta2"},
		mustChange: []string{"Metal3Machine/m1: spec.image: required (or customDeploy)"},
	}, {
		name: "the ipAddesses typo, route shapes, vlanId and bond mode of the seed's data template",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha4
kind: Metal3DataTemplate
metadata:
  name: t
  labels: {cluster.x-k8s.io/cluster-name: c1}
  ownerReferences:
  - {apiVersion: infrastructure.cluster.x-k8s.io/v1alpha4, kind: Metal3Cluster, name: c1, controller: true}
  - {apiVersion: infrastructure.cluster.x-k8s.io/v1alpha4, kind: Metal3Cluster, name: c2, uid: 1234}
spec:
  metaData:
    ipAddesses: [{key: ip, subnet: 192.168.0.0/24}]
  networkData:
    links:
      bonds: [{id: bond0, bondMode: 802.1ad, bondLinks: [a], macAddress: {string: "00:11:22:33:44:55"}}]
      vlans: [{id: v1, vlanId: 1, vlanLink: bond0, macAddress: {fromHostInterface: eth0}}]
    networks:
      ipv4:
      - id: n
        link: v1
        routes:
        - {network: 0.0.0.0, netmask: 0, gateway: 192.168.0.1, services: [{type: dns, address: 8.8.4.4}]}
      ipv6:
      - id: n6
        link: v1
        routes:
        - {network: "::", netmask: 0, gateway: "2001:db8::1", services: [{dns: "2001:4860:4860::8844"}]}
status:
  indexes: {"0": m1}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata:
  name: t
  labels: {cluster.x-k8s.io/cluster-name: c1}
  ownerReferences:
  - {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: Metal3Cluster, name: c2, uid: 1234}
spec:
  clusterName: c1
  metaData:
    ipAddresses: [{key: ip, subnet: 192.168.0.0/24}]
  networkData:
    links:
      bonds: [{id: bond0, bondMode: 802.3ad, bondLinks: [a], macAddress: {string: "00:11:22:33:44:55"}}]
      vlans: [{id: v1, vlanID: 1, vlanLink: bond0, macAddress: {fromHostInterface: eth0}}]
    networks:
      ipv4:
      - id: n
        link: v1
        routes:
        - {network: 0.0.0.0, prefix: 0, gateway: {string: 192.168.0.1}, services: {dns: [8.8.4.4]}}
      ipv6:
      - id: n6
        link: v1
        routes:
        - {network: "::", prefix: 0, gateway: {string: "2001:db8::1"}, services: {dns: ["2001:4860:4860::8844"]}}
`,
		changes: []string{
			"apiVersion: infrastructure.cluster.x-k8s.io/v1alpha4 -> infrastructure.cluster.x-k8s.io/v1beta2",
			"metadata.ownerReferences[0]: removed Metal3Cluster/c1: it has no uid",
			"metadata.ownerReferences[1].apiVersion: infrastructure.cluster.x-k8s.io/v1alpha4 -> infrastructure.cluster.x-k8s.io/v1beta2",
			"status: removed",
			`spec.clusterName: set to "c1" from the cluster.x-k8s.io/cluster-name label (optional in metalwire; CAPM3 v1beta2 requires it)`,
			"spec.metaData.ipAddesses: -> ipAddresses",
			"spec.networkData.links.bonds[0].bondMode: 802.1ad -> 802.3ad",
			"spec.networkData.links.vlans[0].vlanId: -> vlanID",
			"spec.networkData.networks.ipv4[0].routes[0].netmask: -> prefix",
			`spec.networkData.networks.ipv4[0].routes[0].gateway: "192.168.0.1" -> {string: "192.168.0.1"}`,
			"spec.networkData.networks.ipv4[0].routes[0].services: list of DNS entries -> {dns: [addresses]}",
			"spec.networkData.networks.ipv6[0].routes[0].netmask: -> prefix",
			"spec.networkData.networks.ipv6[0].routes[0].gateway:",
			"spec.networkData.networks.ipv6[0].routes[0].services: list of DNS entries",
		},
	}, {
		name: "placeholder MACs and a network without link need the user; a missing clusterName is a warning",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata: {name: t}
spec:
  networkData:
    links:
      ethernets: [{type: phy, id: eth0, macAddress: {string: "XX:XX:XX:XX:XX:XX"}}]
    networks:
      ipv4: [{id: n, ipAddressFromIPPool: pool-1}, {id: m, link: bond0, ipAddressFromIPPool: pool-1}]
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: t}
spec:
  networkData:
    links:
      ethernets: [{type: phy, id: eth0, macAddress: {string: "XX:XX:XX:XX:XX:XX"}}]
    networks:
      ipv4: [{id: n, ipAddressFromIPPool: pool-1}, {id: m, link: bond0, ipAddressFromIPPool: pool-1}]
`,
		changes:  []string{"apiVersion:"},
		warnings: []string{"Metal3DataTemplate/t: spec.clusterName: not set: metalwire does not need it, but CAPM3 v1beta2 requires it"},
		mustChange: []string{
			`spec.networkData.links.ethernets[0].macAddress.string: "XX:XX:XX:XX:XX:XX" is not a MAC address`,
			"spec.networkData.networks.ipv4[0].link: required",
			`spec.networkData.networks.ipv4[1].link: "bond0" is not a link of this template (links: eth0); add it under links or fix the name`,
		},
	}, {
		name: "a hand-written Metal3Data is the controller's job now",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha4
kind: Metal3Data
metadata: {name: d-0}
spec:
  index: 0
  metal3Machine: {name: m1}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Data
metadata: {name: d-0}
spec:
  index: 0
  metal3Machine: {name: m1}
`,
		changes:    []string{"apiVersion:"},
		mustChange: []string{"Metal3Data/d-0: spec.metal3Machine: no longer exists"},
	}, {
		name: "an IPPool gets its required namePrefix; its apiVersion stays",
		given: `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: pool-1}
`,
		want: `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: pool-1}
spec: {namePrefix: pool-1}
`,
		changes: []string{`IPPool/pool-1: spec.namePrefix: set to "pool-1"`},
	}, {
		name: "an object without a name, and a fragment without kind",
		given: `
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  annotations: {a: b}
---
spec:
  providerSpec:
    value:
      hostSelector:
        matchLabels: {key1: value1}
`,
		want: `
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  annotations: {a: b}
`,
		mustChange: []string{
			"BareMetalHost/(unnamed, document 1): metadata.name: missing",
			"document 2: spec.providerSpec.value.hostSelector: no apiVersion and kind",
		},
	}})
}

func TestMigrateKeepsEveryDocumentAndFailsOnlyOnBrokenYAML(t *testing.T) {
	g := NewWithT(t)
	res, err := migrate.Migrate([]byte("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n...\n"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Documents).To(HaveLen(2), "empty documents are skipped")
	g.Expect(res.Documents[0].Object).To(Equal("ConfigMap/a"))
	g.Expect(res.Documents[1].Object).To(Equal("Secret/b"))
	g.Expect(res.Changes()).To(BeEmpty(), "objects of other kinds are left alone")
	g.Expect(string(res.Output())).To(Equal("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n"))

	_, err = migrate.Migrate([]byte("a: [b\n"))
	g.Expect(err).To(MatchError(ContainSubstring("document 1 is not valid YAML")))
}

func TestNoteString(t *testing.T) {
	g := NewWithT(t)
	g.Expect(migrate.Note{Object: "Metal3Machine/m1", Path: "spec.hostSelector.matchExpressions", Message: "map -> list"}.String()).
		To(Equal("Metal3Machine/m1: spec.hostSelector.matchExpressions: map -> list"))
	g.Expect(strings.HasPrefix(migrate.Note{Object: "document 2", Message: "no kind"}.String(), "document 2: no kind")).To(BeTrue())
}
