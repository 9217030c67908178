package preprovisioning

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestParseReference(t *testing.T) {
	const prefix = "metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io/"
	tests := []struct {
		name      string
		given     string
		template  string
		key       string
		errSubstr string
	}{
		{name: "the proposal's format", given: prefix + "rack-1", template: "rack-1", key: "metal3/rack-1"},
		{name: "spaces around are forgiven", given: "  " + prefix + "rack-1\n", template: "rack-1", key: "metal3/rack-1"},
		{name: "empty", given: "", errSubstr: "the reference is empty; write " + prefix + "<template name>"},
		{name: "a bare name is not the format, but names the template meant", given: "rack-1", key: "metal3/rack-1", errSubstr: `"rack-1" is not <resource>.<group>/<name>`},
		{name: "another resource type", given: "metal3datatemplates.infrastructure.cluster.x-k8s.io/rack-1", key: "metal3/rack-1",
			errSubstr: "names metal3datatemplates.infrastructure.cluster.x-k8s.io, which is not a Metal3PreprovisioningDataTemplate"},
		{name: "the kind instead of the resource", given: "Metal3PreprovisioningDataTemplate/rack-1", key: "metal3/rack-1", errSubstr: "which is not a Metal3PreprovisioningDataTemplate"},
		{name: "a template in another namespace", given: prefix + "other/rack-1", key: "other/rack-1",
			errSubstr: "names a template in namespace other, but templates are only looked up in the host's namespace metal3; create the template in metal3 and write " + prefix + "rack-1"},
		{name: "not an object name", given: prefix + "Rack_1", key: "metal3/Rack_1", errSubstr: `"Rack_1" is not a valid object name`},
		{name: "nothing after the slash", given: prefix, errSubstr: "is not a valid object name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := parseReference("metal3", tt.given)
			g.Expect(got.Template).To(Equal(tt.template))
			g.Expect(got.Key).To(Equal(tt.key))
			if tt.errSubstr == "" {
				g.Expect(got.Err).NotTo(HaveOccurred())
			} else {
				g.Expect(got.Err).To(MatchError(ContainSubstring(tt.errSubstr)))
			}
		})
	}
}
