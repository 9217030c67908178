package metal3machine

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
)

func TestWithUnmodelledSpec(t *testing.T) {
	tests := []struct {
		name string
		mode *string
		want map[string]any
	}{
		{"no mode: the typed diff only", nil, map[string]any{"spec": map[string]any{"online": true}}},
		{"mode joins the typed diff", ptr.To("disabled"), map[string]any{"spec": map[string]any{"online": true, "automatedCleaningMode": "disabled"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			before := &bmov1.BareMetalHost{}
			after := before.DeepCopy()
			after.Spec.Online = true
			data, err := withUnmodelledSpec{Patch: client.MergeFrom(before), spec: unmodelledProvisionSpec(tt.mode)}.Data(after)
			g.Expect(err).NotTo(HaveOccurred())
			got := map[string]any{}
			g.Expect(json.Unmarshal(data, &got)).To(Succeed())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}
