package v1beta2_test

import (
	"strings"
	"testing"
)

const m3mHeader = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Machine
`

const ubuntuImage = `
  image:
    url: http://images.example.com/ubuntu.qcow2
    checksum: http://images.example.com/ubuntu.qcow2.sha256sum
    checksumType: sha256
    diskFormat: qcow2
`

// machineSpecCases are Metal3Machine specs and the answers they get; the template tests reuse
// them under spec.template.spec.
var machineSpecCases = []admissionCase{
	{name: "image", given: `
spec:` + ubuntuImage},
	{name: "customDeploy without image", given: `
spec:
  customDeploy: {method: install_coreos}
`},
	{name: "customDeploy with an image for it", given: `
spec:
  customDeploy: {method: install_coreos}
  image: {url: http://images.example.com/rhcos.iso}
`},
	{name: "live-iso needs no checksum", given: `
spec:
  image: {url: http://images.example.com/live.iso, diskFormat: live-iso}
`},
	{name: "neither image nor customDeploy", given: `
spec:
  hostSelector: {matchLabels: {rack: r1}}
`, want: []string{"spec.image.url: Required value: required unless customDeploy is set"}},
	{name: "image without checksum", given: `
spec:
  image: {url: http://images.example.com/ubuntu.qcow2, diskFormat: qcow2}
`, want: []string{"spec.image.checksum: Required value: required unless image.diskFormat is live-iso"}},
	{name: "oci:// image needs no checksum", given: `
spec:
  image: {url: "oci://quay.io/example/ubuntu:24.04"}
`},
	{name: "OCI:// in capitals is an OCI image too", given: `
spec:
  image: {url: "OCI://quay.io/example/ubuntu@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", diskFormat: raw}
`},
	{name: "oci:// image with a checksum", given: `
spec:
  image: {url: "oci://quay.io/example/ubuntu:24.04", checksum: 0123abcd}
`, want: []string{"spec.image.checksum: Forbidden: must be empty for an oci:// image"}},
	{name: "oci:// image with a checksumType", given: `
spec:
  image: {url: "oci://quay.io/example/ubuntu:24.04", checksumType: sha256}
`, want: []string{"spec.image.checksumType: Forbidden: must be empty for an oci:// image"}},
	{name: "http image without checksum names the oci:// exception", given: `
spec:
  image: {url: http://images.example.com/ubuntu.qcow2}
`, want: []string{"spec.image.checksum: Required value", "or image.url is an oci:// image"}},
	{name: "live-iso still needs its url", given: `
spec:
  image: {diskFormat: live-iso}
`, want: []string{"spec.image.url: Required value"}},
	{name: "customDeploy with empty method", given: `
spec:
  customDeploy: {method: ""}
`, want: []string{"spec.customDeploy.method", "at least 1 chars long"}},
	{name: "url that is not a URL", given: `
spec:
  image: {url: "ubuntu image", checksum: abc123}
`, want: []string{"spec.image.url: Invalid value", "must be an absolute URL"}},
	{name: "checksum URL that is not a URL", given: `
spec:
  image: {url: http://images.example.com/ubuntu.qcow2, checksum: "https://images example.com/sum"}
`, want: []string{"spec.image.checksum: Invalid value", "must be a valid URL of a checksum file"}},
	{name: "unknown checksumType", given: `
spec:
  image: {url: http://images.example.com/u.img, checksum: abc, checksumType: sha1}
`, want: []string{"spec.image.checksumType", `Unsupported value: "sha1"`, `"md5", "sha256", "sha512"`}},
	{name: "unknown diskFormat", given: `
spec:
  image: {url: http://images.example.com/u.img, checksum: abc, diskFormat: iso}
`, want: []string{"spec.image.diskFormat", `Unsupported value: "iso"`, `"live-iso"`}},
	// CAPM3 v1beta1 and BareMetalHost spell it format; v1beta2 does not, and a v1beta1
	// manifest applied as is must not lose the format silently.
	{name: "format (the v1beta1 spelling) is an unknown field", given: `
spec:
  image: {url: http://images.example.com/u.img, checksum: abc, format: raw}
`, want: []string{`unknown field "spec.image.format"`}},
	{name: "unknown automatedCleaningMode", given: `
spec:
  automatedCleaningMode: full` + ubuntuImage,
		want: []string{"spec.automatedCleaningMode", `Unsupported value: "full"`, `"metadata", "disabled"`}},
	{name: "every field", given: `
spec:
  providerID: metal3://default/host-0/m-0
  customDeploy: {method: install}
  userData: {name: m-0-user-data}
  metaData: {name: m-0-metadata, namespace: default}
  networkData: {name: m-0-networkdata}
  dataTemplate: {name: workers-template, kind: Metal3DataTemplate}
  automatedCleaningMode: disabled
  failureDomain: rack-1` + ubuntuImage},

	// Host selectors: every operator in its good form ...
	{name: "every operator, well formed", given: `
spec:
  hostSelector:
    matchLabels: {rack: r1, example.com/size: large}
    matchExpressions:
    - {key: gpu, operator: "!"}
    - {key: size, operator: "=", values: [large]}
    - {key: size, operator: "==", values: [large]}
    - {key: rack, operator: in, values: [r1, r2]}
    - {key: rack, operator: "!=", values: [r3]}
    - {key: rack, operator: notin, values: [r3]}
    - {key: cores, operator: exists}
    - {key: cores, operator: gt, values: ["8"]}
    - {key: cores, operator: lt, values: ["128"]}
    - {key: rack, operator: In, values: [r1]}
    - {key: rack, operator: NotIn, values: [r9]}
    - {key: cores, operator: Exists, values: []}
    - {key: gpu, operator: DoesNotExist}` + ubuntuImage},
	// ... and each rule broken.
	{name: "gt without a value", given: `
spec:
  hostSelector:
    matchExpressions: [{key: cores, operator: gt}]` + ubuntuImage,
		want: []string{`spec.hostSelector.matchExpressions[0].values: Invalid value`, `operator "gt" needs exactly one integer value, such as values: ["8"]`}},
	{name: "lt with a word", given: `
spec:
  hostSelector:
    matchExpressions: [{key: cores, operator: lt, values: [ten]}]` + ubuntuImage,
		want: []string{`spec.hostSelector.matchExpressions[0].values`, `operator "lt" needs exactly one integer value`}},
	{name: "gt with two values", given: `
spec:
  hostSelector:
    matchExpressions: [{key: cores, operator: gt, values: ["1", "2"]}]` + ubuntuImage,
		want: []string{`operator "gt" needs exactly one integer value`}},
	{name: "in without values", given: `
spec:
  hostSelector:
    matchExpressions: [{key: rack, operator: in, values: []}]` + ubuntuImage,
		want: []string{`spec.hostSelector.matchExpressions[0].values`, `operator "in" needs at least one value; list them in values, or use exists`}},
	{name: "NotIn without values", given: `
spec:
  hostSelector:
    matchExpressions: [{key: rack, operator: NotIn}]` + ubuntuImage,
		want: []string{`operator "NotIn" needs at least one value`}},
	{name: "exists with values", given: `
spec:
  hostSelector:
    matchExpressions: [{key: rack, operator: exists, values: [r1]}]` + ubuntuImage,
		want: []string{`operator "exists" takes no values; remove values, or use "=" or "in" to match a value`}},
	{name: "! with values", given: `
spec:
  hostSelector:
    matchExpressions: [{key: rack, operator: "!", values: [r1]}]` + ubuntuImage,
		want: []string{`operator "!" takes no values`}},
	{name: "DoesNotExist with values", given: `
spec:
  hostSelector:
    matchExpressions: [{key: rack, operator: DoesNotExist, values: [r1]}]` + ubuntuImage,
		want: []string{`operator "DoesNotExist" takes no values`}},
	{name: "== with two values", given: `
spec:
  hostSelector:
    matchExpressions: [{key: rack, operator: "==", values: [r1, r2]}]` + ubuntuImage,
		want: []string{`operator "==" needs exactly one value; use "in" or "notin" for several`}},
	{name: "!= without a value", given: `
spec:
  hostSelector:
    matchExpressions: [{key: rack, operator: "!="}]` + ubuntuImage,
		want: []string{`operator "!=" needs exactly one value`}},
	{name: "unknown operator", given: `
spec:
  hostSelector:
    matchExpressions: [{key: cores, operator: Gt, values: ["8"]}]` + ubuntuImage,
		want: []string{`spec.hostSelector.matchExpressions[0].operator: Unsupported value: "Gt"`, `"gt"`, `"DoesNotExist"`}},
	{name: "key that is not a label key", given: `
spec:
  hostSelector:
    matchExpressions: [{key: "rack name", operator: exists}]` + ubuntuImage,
		want: []string{`spec.hostSelector.matchExpressions[0].key`, "must be a label key such as rack or example.com/rack"}},
	{name: "matchLabels key that is not a label key", given: `
spec:
  hostSelector:
    matchLabels: {"rack/": r1}` + ubuntuImage,
		want: []string{`spec.hostSelector.matchLabels`, "every key must be a label key"}},
	{name: "matchLabels value too long", given: `
spec:
  hostSelector:
    matchLabels: {rack: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}` + ubuntuImage,
		want: []string{`spec.hostSelector.matchLabels`, "every value must be a label value of at most 63 characters"}},
	{name: "value with spaces", given: `
spec:
  hostSelector:
    matchExpressions: [{key: rack, operator: in, values: ["rack 1"]}]` + ubuntuImage,
		want: []string{`spec.hostSelector.matchExpressions[0].values`, "every value must be a label value"}},
}

func TestMetal3MachineAdmission(t *testing.T) {
	cases := make([]admissionCase, 0, len(machineSpecCases))
	for _, c := range machineSpecCases {
		c.given = m3mHeader + c.given
		cases = append(cases, c)
	}
	runAdmissionCases(t, "m3m-admission", cases)
}

func TestMetal3MachineTemplateAdmission(t *testing.T) {
	// The template's spec is a Metal3Machine spec: the same answers, under spec.template.spec.
	cases := make([]admissionCase, 0, len(machineSpecCases))
	for _, c := range machineSpecCases {
		c.given = "apiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nkind: Metal3MachineTemplate\nspec:\n  template:\n" +
			indent(c.given, 4)
		want := make([]string, len(c.want))
		for i, w := range c.want {
			want[i] = strings.Replace(w, "spec.", "spec.template.spec.", 1) // the field path
		}
		c.want = want
		cases = append(cases, c)
	}
	runAdmissionCases(t, "m3mt-admission", cases)
}

// The seed's examples, as written there (with the apiVersion updated): their mistakes must be
// pointed at, not silently dropped.
func TestMetal3MachineSeedExamplesAreRefusedWithTheFieldNamed(t *testing.T) {
	runAdmissionCases(t, "m3m-seed", []admissionCase{
		{name: "matchExpressions written as a map, values as a set", given: m3mHeader + `
spec:
  image:
    url: https://cloud-images.ubuntu.com/bionic/current/bionic-server-cloudimg-amd64.img
    checksum: https://cloud-images.ubuntu.com/bionic/current/bionic-server-cloudimg-amd64.img.md5sum
  hostSelector:
    matchLabels:
      key1: value1
    matchExpressions:
      key: key2
      operator: in
      values: {‘abc’, ‘123’, ‘value2’}
`, want: []string{`unknown field "spec.hostSelector.matchExpressions.key"`}},
		{name: "typographic quotes in values", given: m3mHeader + `
spec:
  image:
    url: https://cloud-images.ubuntu.com/bionic/current/bionic-server-cloudimg-amd64.img
    checksum: https://cloud-images.ubuntu.com/bionic/current/bionic-server-cloudimg-amd64.img.md5sum
  hostSelector:
    matchExpressions:
      - key: key3
        operator: in
        values: [‘a’, ‘b’, ‘c’]
`, want: []string{"spec.hostSelector.matchExpressions[0].values", "every value must be a label value"}},
		{name: "capitalised Name in references", given: m3mHeader + `
spec:
  image:
    url: https://cloud-images.ubuntu.com/bionic/current/bionic-server-cloudimg-amd64.img
    checksum: https://cloud-images.ubuntu.com/bionic/current/bionic-server-cloudimg-amd64.img.md5sum
  dataTemplate:
    Name: controlplane-metadata
  metaData:
    Name: controlplane-0-metadata-0
`, want: []string{`unknown field "spec.dataTemplate.Name"`, `unknown field "spec.metaData.Name"`}},
	})
}
