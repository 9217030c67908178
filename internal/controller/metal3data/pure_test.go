package metal3data

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

func TestSecrets(t *testing.T) {
	data := &infrav1.Metal3Data{
		ObjectMeta: metav1.ObjectMeta{Name: "workers-3", Namespace: "metal3", UID: "uid-1"},
		Spec:       infrav1.Metal3DataSpec{Index: ptr.To[int32](3)},
	}
	tests := []struct {
		name      string
		out       output
		wantNames []string
	}{
		{name: "both parts", out: output{metaData: []byte("a: b\n"), networkData: []byte("links: []\n")}, wantNames: []string{"m-metadata-3", "m-networkdata-3"}},
		{name: "a template without networkData writes no networkData Secret", out: output{metaData: []byte("a: b\n")}, wantNames: []string{"m-metadata-3"}},
		{name: "nothing to write", wantNames: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			list := secrets(data, "m", "cluster-a", tt.out)
			var names []string
			for _, s := range list {
				names = append(names, s.Name)
				g.Expect(s.Namespace).To(Equal("metal3"))
				g.Expect(s.Type).To(Equal(corev1.SecretType("infrastructure.cluster.x-k8s.io/secret")))
				// The cluster, BMO's label (its Secret cache selects on it), and ours, which keeps the
				// Secret's data out of the manager's memory (only its metadata is cached).
				g.Expect(s.Labels).To(Equal(map[string]string{"cluster.x-k8s.io/cluster-name": "cluster-a", "environment.metal3.io": "baremetal", "metal3data.metalwire.io/rendered": "true"}))
				g.Expect(metav1.GetControllerOf(s).UID).To(BeEquivalentTo("uid-1"))
			}
			g.Expect(names).To(Equal(tt.wantNames))
			if len(list) > 0 {
				g.Expect(list[0].Data).To(Equal(map[string][]byte{"metaData": tt.out.metaData}))
			}
		})
	}
}

func TestOutputHash(t *testing.T) {
	g := NewWithT(t)
	a := output{metaData: []byte("ab"), networkData: []byte("c")}
	g.Expect(a.hash()).To(Equal(output{metaData: []byte("ab"), networkData: []byte("c")}.hash()))
	g.Expect(a.hash()).NotTo(Equal(output{metaData: []byte("a"), networkData: []byte("bc")}.hash()), "moving bytes between the parts changes the digest")
	g.Expect(a.hash()).NotTo(Equal(output{metaData: []byte("ab"), networkData: []byte("d")}.hash()))
}

// TestDataStatusPatchStatesTheWholeStatus: the status write sets the status it is given whatever
// the API server held, so a write made from a copy that trails the server leaves nothing of the
// server's status behind; every field of the status is in it, and of the claim's status in the
// report to the claim.
func TestDataStatusPatchStatesTheWholeStatus(t *testing.T) {
	g := NewWithT(t)
	now := metav1.Now().Rfc3339Copy() // as JSON holds it
	failed := infrav1.Metal3DataStatus{
		ErrorMessage: ptr.To(`host node-0 has no NIC "eth0"`),
		Conditions:   []metav1.Condition{{Type: infrav1.DataReadyCondition, Status: metav1.ConditionFalse, Reason: infrav1.DataRenderFailedReason, LastTransitionTime: now}},
		LastUpdated:  &now,
	}
	rendered := infrav1.Metal3DataStatus{Ready: true,
		Conditions: []metav1.Condition{{Type: infrav1.DataReadyCondition, Status: metav1.ConditionTrue, Reason: infrav1.DataRenderedReason, LastTransitionTime: now}}}
	for _, tt := range []struct {
		name           string
		stored, wanted infrav1.Metal3DataStatus
	}{
		{"rendered over an error", failed, rendered},
		{"an error over a rendering", rendered, failed},
		{"nothing over an error", failed, infrav1.Metal3DataStatus{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			stored, err := json.Marshal(map[string]any{"status": tt.stored})
			g.Expect(err).NotTo(HaveOccurred())
			patch, err := dataStatusPatch(&tt.wanted)
			g.Expect(err).NotTo(HaveOccurred())
			merged, err := jsonpatch.MergePatch(stored, patch)
			g.Expect(err).NotTo(HaveOccurred())
			wanted, err := json.Marshal(map[string]any{"status": tt.wanted})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(merged).To(MatchJSON(wanted))
		})
	}

	dataPatch, err := dataStatusPatch(&infrav1.Metal3DataStatus{})
	g.Expect(err).NotTo(HaveOccurred())
	claimPatch, err := claimStatusPatch(&infrav1.Metal3DataClaimStatus{})
	g.Expect(err).NotTo(HaveOccurred())
	for _, tt := range []struct {
		patch  []byte
		fields reflect.Type
	}{
		{dataPatch, reflect.TypeFor[infrav1.Metal3DataStatus]()},
		{claimPatch, reflect.TypeFor[infrav1.Metal3DataClaimStatus]()},
	} {
		var named struct{ Status map[string]any }
		g.Expect(json.Unmarshal(tt.patch, &named)).To(Succeed())
		for i := range tt.fields.NumField() {
			name, _, _ := strings.Cut(tt.fields.Field(i).Tag.Get("json"), ",")
			g.Expect(named.Status).To(HaveKey(name), "the %s write must name %s, or a stale copy leaves it standing", tt.fields.Name(), name)
		}
	}
}
