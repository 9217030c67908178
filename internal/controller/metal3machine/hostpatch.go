package metal3machine

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// withUnmodelledSpec adds spec fields that the BareMetalHost subset does not model (such as
// automatedCleaningMode) to a merge patch computed from the typed host. Those fields cannot
// be diffed, so the caller adds them only with a change it knows is new (the first provisioning).
type withUnmodelledSpec struct {
	client.Patch
	spec map[string]any
}

func (p withUnmodelledSpec) Type() types.PatchType { return types.MergePatchType }

func (p withUnmodelledSpec) Data(obj client.Object) ([]byte, error) {
	data, err := p.Patch.Data(obj)
	if err != nil || len(p.spec) == 0 {
		return data, err
	}
	patch := map[string]any{}
	if err := json.Unmarshal(data, &patch); err != nil {
		return nil, fmt.Errorf("reading the host patch: %w", err)
	}
	spec, _ := patch["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	for k, v := range p.spec {
		spec[k] = v
	}
	patch["spec"] = spec
	return json.Marshal(patch)
}

// unmodelledProvisionSpec is what the first provisioning of a host sets beyond the typed subset.
func unmodelledProvisionSpec(mode *string) map[string]any {
	if mode == nil || *mode == "" {
		return nil
	}
	return map[string]any{"automatedCleaningMode": *mode}
}
