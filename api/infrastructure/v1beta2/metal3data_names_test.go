package v1beta2_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

func TestDataNames(t *testing.T) {
	g := NewWithT(t)
	g.Expect(infrav1.DataName("workers", 3)).To(Equal("workers-3"))
	g.Expect(infrav1.MetaDataSecretName("machine-a", 3)).To(Equal("machine-a-metadata-3"))
	g.Expect(infrav1.NetworkDataSecretName("machine-a", 0)).To(Equal("machine-a-networkdata-0"))
	g.Expect(infrav1.PreprovisioningSecretName("host-0")).To(Equal("host-0-preprov-networkdata"))
}

// TestDataSecretNames: a Metal3Data's Secrets are <machine>-metadata-<index> and
// <machine>-networkdata-<index> until its spec names them; names in the spec (CAPM3's, without
// the index) are kept.
func TestDataSecretNames(t *testing.T) {
	g := NewWithT(t)
	data := &infrav1.Metal3Data{Spec: infrav1.Metal3DataSpec{Index: ptr.To[int32](2)}}
	md, nd := infrav1.DataSecretNames(data, "m1")
	g.Expect([]string{md, nd}).To(Equal([]string{"m1-metadata-2", "m1-networkdata-2"}))

	data.Spec.MetaData = &corev1.SecretReference{Name: "m1-metadata"}
	data.Spec.NetworkData = &corev1.SecretReference{Name: "m1-networkdata"}
	md, nd = infrav1.DataSecretNames(data, "m1")
	g.Expect([]string{md, nd}).To(Equal([]string{"m1-metadata", "m1-networkdata"}))

	md, nd = infrav1.DataSecretNames(&infrav1.Metal3Data{}, "m2")
	g.Expect([]string{md, nd}).To(Equal([]string{"m2-metadata-0", "m2-networkdata-0"}), "no index yet is index 0")
}

func TestDataIndexFromName(t *testing.T) {
	cases := []struct {
		name      string
		template  string
		given     string
		wantIndex int32
		wantOK    bool
	}{
		{name: "index 0", template: "workers", given: "workers-0", wantIndex: 0, wantOK: true},
		{name: "index 12", template: "workers", given: "workers-12", wantIndex: 12, wantOK: true},
		{name: "template name with a dash and digits", template: "pool-2", given: "pool-2-7", wantIndex: 7, wantOK: true},
		{name: "data of another template that starts the same", template: "pool", given: "pool-2-7", wantOK: false},
		{name: "other template", template: "workers", given: "masters-1", wantOK: false},
		{name: "no index", template: "workers", given: "workers-", wantOK: false},
		{name: "the template's own name", template: "workers", given: "workers", wantOK: false},
		{name: "leading zero", template: "workers", given: "workers-01", wantOK: false},
		{name: "sign", template: "workers", given: "workers-+1", wantOK: false},
		{name: "past int32", template: "workers", given: "workers-2147483648", wantOK: false},
		{name: "largest int32", template: "workers", given: "workers-2147483647", wantIndex: 2147483647, wantOK: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			index, ok := infrav1.DataIndexFromName(tc.template, tc.given)
			g.Expect(ok).To(Equal(tc.wantOK))
			g.Expect(index).To(Equal(tc.wantIndex))
			if ok {
				g.Expect(infrav1.DataName(tc.template, index)).To(Equal(tc.given), "DataName must invert it")
			}
		})
	}
}

func TestParsePreprovisioningReference(t *testing.T) {
	cases := []struct {
		name    string
		given   string
		want    string
		wantErr string
	}{
		{name: "a template", given: "metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io/rack-1", want: "rack-1"},
		{name: "surrounding spaces", given: " metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io/rack-1 ", want: "rack-1"},
		{
			name: "empty", given: "",
			wantErr: "the reference is empty; write metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io/<template name>",
		},
		{
			name: "a bare name", given: "rack-1",
			wantErr: `"rack-1" is not <resource>.<group>/<name>; write metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io/<template name>`,
		},
		{
			name: "another kind", given: "metal3datatemplates.infrastructure.cluster.x-k8s.io/workers",
			wantErr: `names metal3datatemplates.infrastructure.cluster.x-k8s.io, which is not a Metal3PreprovisioningDataTemplate`,
		},
		{
			name: "the kind instead of the resource", given: "Metal3PreprovisioningDataTemplate/rack-1",
			wantErr: "which is not a Metal3PreprovisioningDataTemplate",
		},
		{
			name: "no name", given: "metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io/",
			wantErr: `"" is not a valid object name`,
		},
		{
			name: "a name the API server would refuse", given: "metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io/Rack_1",
			wantErr: `"Rack_1" is not a valid object name`,
		},
		{
			name: "a namespace in the name", given: "metal3preprovisioningdatatemplates.infrastructure.cluster.x-k8s.io/other/rack-1",
			wantErr: `"other/rack-1" is not a valid object name`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := infrav1.ParsePreprovisioningReference(tc.given)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

// Every controller reads a machine's host annotation the same way.
func TestParseHostAnnotation(t *testing.T) {
	for _, tt := range []struct {
		value, ns, name string
		set, bad        bool
	}{
		{value: "metal3/node-1", ns: "metal3", name: "node-1", set: true},
		{value: " metal3/node-1\n", ns: "metal3", name: "node-1", set: true},
		{value: "node-1", ns: "machines", name: "node-1", set: true},
		{value: ""},
		{value: "metal3/", set: true, bad: true},
		{value: "/node-1", set: true, bad: true},
		{value: "a/b/c", set: true, bad: true},
	} {
		g := NewWithT(t)
		ns, name, set, err := infrav1.ParseHostAnnotation(tt.value, "machines")
		g.Expect(set).To(Equal(tt.set), tt.value)
		if tt.bad {
			g.Expect(err).To(MatchError(ContainSubstring("is not <namespace>/<name>")), tt.value)
			continue
		}
		g.Expect(err).NotTo(HaveOccurred(), tt.value)
		g.Expect([]string{ns, name}).To(Equal([]string{tt.ns, tt.name}), tt.value)
	}
	g := NewWithT(t)
	g.Expect(infrav1.HostClaimName("node-1", "provisioning")).To(Equal("node-1-provisioning"))
}
