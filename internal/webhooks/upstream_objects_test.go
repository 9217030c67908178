package webhooks_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestStatusDeprecatedRoundTrips: an upstream v1beta2 Metal3Cluster or Metal3Machine's YAML (a
// backup, a clusterctl move from upstream CAPM3) carries status.deprecated.v1beta1; it applies
// with strict field validation, and its failure fields and conditions are v1beta1's
// status.failureReason, failureMessage and conditions, both ways.
func TestStatusDeprecatedRoundTrips(t *testing.T) {
	for _, kind := range []string{"Metal3Cluster", "Metal3Machine"} {
		t.Run(kind, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			deprecated := map[string]any{"v1beta1": map[string]any{
				"failureReason":  "InvalidConfiguration",
				"failureMessage": "the control plane endpoint is not set",
				"conditions": []any{map[string]any{
					"type": "Ready", "status": "False", "severity": "Error", "reason": "Failed",
					"lastTransitionTime": "2026-08-01T10:00:00Z",
				}},
			}}
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": infraGroup + "/v1beta2",
				"kind":       kind,
				"metadata":   map[string]any{"name": "from-upstream", "namespace": env.NewNamespace(t)},
				"spec":       map[string]any{"controlPlaneEndpoint": map[string]any{"host": "192.168.111.249", "port": int64(6443)}},
				"status":     map[string]any{"deprecated": deprecated},
			}}
			if kind == "Metal3Machine" {
				obj.Object["spec"] = map[string]any{"image": map[string]any{"url": "http://172.22.0.1/images/node.img", "checksum": "0123456789abcdef"}}
			}
			g.Expect(env.Client.Create(ctx, obj.DeepCopy(), client.FieldValidation("Strict"))).To(Succeed(), "status.deprecated is a known field")
			live := readAs(ctx, g, obj, obj.GetAPIVersion())
			g.Expect(unstructured.SetNestedField(live.Object, deprecated, "status", "deprecated")).To(Succeed())
			g.Expect(env.Client.Status().Update(ctx, live, client.FieldValidation("Strict"))).To(Succeed())

			old := v1beta1View(ctx, g, obj)
			g.Expect(old.Object["status"]).To(HaveKeyWithValue("failureReason", "InvalidConfiguration"))
			g.Expect(old.Object["status"]).To(HaveKeyWithValue("failureMessage", "the control plane endpoint is not set"))
			g.Expect(old.Object["status"]).To(HaveKey("conditions"))

			g.Expect(env.Client.Status().Update(ctx, old)).To(Succeed(), "a v1beta1 client writes the status back")
			back := readAs(ctx, g, obj, obj.GetAPIVersion())
			got, _, _ := unstructured.NestedMap(back.Object, "status", "deprecated")
			g.Expect(differences(deprecated, got, "status.deprecated", true)).To(BeEmpty())
		})
	}
}

// TestTwoAppliersKeepEachOthersListEntries: networkData's lists are map lists keyed as upstream
// keys them (networks by id), so two server-side appliers (a GitOps tool and a person) each own
// their own entries; with atomic lists the second apply replaced the first one's entries.
func TestTwoAppliersKeepEachOthersListEntries(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	apply := func(manager, networkData string) {
		body := []byte(`{"apiVersion":"` + infraGroup + `/v1beta2","kind":"Metal3PreprovisioningDataTemplate",` +
			`"metadata":{"name":"shared","namespace":"` + ns + `"},"spec":{"preprovisioningNetworkData":` + networkData + `}}`)
		target := &unstructured.Unstructured{}
		target.SetAPIVersion(infraGroup + "/v1beta2")
		target.SetKind("Metal3PreprovisioningDataTemplate")
		target.SetNamespace(ns)
		target.SetName("shared")
		g.Expect(env.Client.Patch(ctx, target, client.RawPatch(types.ApplyPatchType, body),
			client.FieldOwner(manager), client.ForceOwnership)).To(Succeed())
	}
	apply("gitops", `{"links":{"ethernets":[{"type":"phy","id":"eno1","macAddress":{"fromBootMAC":true}}]},`+
		`"networks":{"ipv4DHCP":[{"id":"dhcp-a","link":"eno1"}]}}`)
	apply("person", `{"networks":{"ipv4DHCP":[{"id":"dhcp-b","link":"eno1"}]}}`)
	got := &unstructured.Unstructured{}
	got.SetAPIVersion(infraGroup + "/v1beta2")
	got.SetKind("Metal3PreprovisioningDataTemplate")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shared"}, got)).To(Succeed())
	networks, _, _ := unstructured.NestedSlice(got.Object, "spec", "preprovisioningNetworkData", "networks", "ipv4DHCP")
	g.Expect(networks).To(ConsistOf(HaveKeyWithValue("id", "dhcp-a"), HaveKeyWithValue("id", "dhcp-b")))
}
