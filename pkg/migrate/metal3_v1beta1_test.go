package migrate_test

import (
	"strings"
	"testing"
)

// CAPM3 infrastructure.cluster.x-k8s.io/v1beta1 -> v1beta2: the renamed and reshaped fields.
func TestCAPM3V1beta1Rules(t *testing.T) {
	runRules(t, []rule{{
		name: "data template: metaData *FromIPPool lists become *FromPool, templateReference goes",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata: {name: workers-v2}
spec:
  clusterName: c1
  templateReference: workers
  metaData:
    strings: [{key: role, value: worker}]
    ipAddressesFromIPPool: [{key: ip, name: pool4}]
    prefixesFromIPPool: [{key: prefix, name: pool4}]
    gatewaysFromIPPool: [{key: gateway, name: pool4}]
    dnsServersFromIPPool: [{key: dns, name: pool4}]
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: workers-v2}
spec:
  clusterName: c1
  metaData:
    strings: [{key: role, value: worker}]
    ipAddressesFromPool: [{key: ip, name: pool4}]
    prefixesFromPool: [{key: prefix, name: pool4}]
    gatewaysFromPool: [{key: gateway, name: pool4}]
    dnsServersFromPool: [{key: dns, name: pool4}]
`,
		changes: []string{
			"Metal3DataTemplate/workers-v2: apiVersion: infrastructure.cluster.x-k8s.io/v1beta1 -> infrastructure.cluster.x-k8s.io/v1beta2",
			`Metal3DataTemplate/workers-v2: spec.templateReference: removed "workers": v1beta2 has no such field`,
			"Metal3DataTemplate/workers-v2: spec.metaData.ipAddressesFromIPPool: -> ipAddressesFromPool (renamed in v1beta2)",
			"Metal3DataTemplate/workers-v2: spec.metaData.prefixesFromIPPool: -> prefixesFromPool",
			"Metal3DataTemplate/workers-v2: spec.metaData.gatewaysFromIPPool: -> gatewaysFromPool",
			"Metal3DataTemplate/workers-v2: spec.metaData.dnsServersFromIPPool: -> dnsServersFromPool",
		},
	}, {
		name: "data template: a list under both names is left to the user",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata: {name: t}
spec:
  clusterName: c1
  metaData:
    ipAddressesFromIPPool: [{key: ip, name: pool4}]
    ipAddressesFromPool: [{key: ip6, name: pool6}]
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: t}
spec:
  clusterName: c1
  metaData:
    ipAddressesFromIPPool: [{key: ip, name: pool4}]
    ipAddressesFromPool: [{key: ip6, name: pool6}]
`,
		changes:    []string{"apiVersion:"},
		mustChange: []string{"spec.metaData.ipAddressesFromIPPool: both ipAddressesFromIPPool (v1beta1) and ipAddressesFromPool (v1beta2) are set; move the items"},
	}, {
		name: "Metal3Data: templateReference goes, nothing is left to the user",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Data
metadata: {name: workers-v2-0}
spec:
  index: 0
  templateReference: workers
  claim: {name: m-0}
  template: {name: workers-v2}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Data
metadata: {name: workers-v2-0}
spec:
  index: 0
  claim: {name: m-0}
  template: {name: workers-v2}
`,
		changes: []string{"apiVersion:", `spec.templateReference: removed "workers"`},
	}, {
		name: "machine: image.format becomes diskFormat",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Machine
metadata: {name: m1}
spec:
  image: {url: http://images.example.com/live.iso, format: live-iso}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1}
spec:
  image: {url: http://images.example.com/live.iso, diskFormat: live-iso}
`,
		changes: []string{"apiVersion:", "Metal3Machine/m1: spec.image.format: -> diskFormat (renamed in v1beta2)"},
	}, {
		name: "machine template: image.format becomes diskFormat under spec.template.spec",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: workers}
spec:
  nodeReuse: false
  template:
    spec:
      image: {url: http://images.example.com/u.qcow2, checksum: abc, checksumType: md5, format: qcow2}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3MachineTemplate
metadata: {name: workers}
spec:
  nodeReuse: false
  template:
    spec:
      image: {url: http://images.example.com/u.qcow2, checksum: abc, checksumType: md5, diskFormat: qcow2}
`,
		changes: []string{"apiVersion:", "spec.template.spec.image.format: -> diskFormat"},
	}, {
		name: "machine: format beside the same diskFormat is dropped",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Machine
metadata: {name: m1}
spec:
  image: {url: http://images.example.com/u.img, checksum: abc, format: raw, diskFormat: raw}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1}
spec:
  image: {url: http://images.example.com/u.img, checksum: abc, diskFormat: raw}
`,
		changes: []string{"apiVersion:", "Metal3Machine/m1: spec.image.format: removed (diskFormat already says raw)"},
	}, {
		name: "machine: format beside another diskFormat is left to the user",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Machine
metadata: {name: m2}
spec:
  image: {url: http://images.example.com/u.img, checksum: abc, format: raw, diskFormat: qcow2}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m2}
spec:
  image: {url: http://images.example.com/u.img, checksum: abc, format: raw, diskFormat: qcow2}
`,
		changes:    []string{"apiVersion:"},
		mustChange: []string{"Metal3Machine/m2: spec.image.format: contradicts diskFormat: qcow2; keep diskFormat (the v1beta2 name) and remove format"},
	}, {
		name: "cluster: failure domains keyed by name become a list, in the author's order",
		given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Cluster
metadata: {name: m3c}
spec:
  controlPlaneEndpoint: {host: 192.168.111.249, port: 6443}
  failureDomains:
    rack-b: {controlPlane: true, attributes: {row: "2"}}
    rack-a: {controlPlane: false}
`,
		want: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Cluster
metadata: {name: m3c}
spec:
  controlPlaneEndpoint: {host: 192.168.111.249, port: 6443}
  failureDomains:
  - {name: rack-b, controlPlane: true, attributes: {row: "2"}}
  - {name: rack-a}
`,
		changes: []string{"apiVersion:", "Metal3Cluster/m3c: spec.failureDomains: map keyed by name -> list of {name, controlPlane, attributes}"},
	}})
}

// Manifests already in v1beta2's shapes come out as they went in, with nothing to say.
func TestCAPM3V1beta2ShapesPassUnchanged(t *testing.T) {
	var rules []rule
	for _, manifest := range []string{`
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
metadata: {name: m1}
spec:
  image: {url: http://images.example.com/live.iso, diskFormat: live-iso}
`, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: t}
spec:
  clusterName: c1
  metaData:
    ipAddressesFromPool: [{key: ip, name: pool4}]
    dnsServersFromPool: [{key: dns, name: pool4}]
`, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Cluster
metadata: {name: m3c}
spec:
  controlPlaneEndpoint: {host: 192.168.111.249, port: 6443}
  failureDomains: [{name: rack-a, controlPlane: true}]
`} {
		rules = append(rules, rule{name: manifest[strings.Index(manifest, "kind: ")+6 : strings.Index(manifest, "\nmetadata")], given: manifest, want: manifest})
	}
	runRules(t, rules)
}
