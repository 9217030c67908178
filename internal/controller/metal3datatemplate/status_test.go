package metal3datatemplate

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// TestStatusPatchIsWhatMergeFromSends: applied to the template as stored, the status patch
// writeTemplate sends gives what client.MergeFrom's patch of the whole template (the patch
// helper's, for this kind) gives, names the indexes only when they changed, and there is none
// when the status did not change, so a template's writes are as many as before.
func TestStatusPatchIsWhatMergeFromSends(t *testing.T) {
	g := NewWithT(t)
	indexes := func(from, to int) []infrav1.IndexEntry {
		out := []infrav1.IndexEntry{}
		for i := from; i < to; i++ {
			out = append(out, infrav1.IndexEntry{Name: fmt.Sprintf("claim-%d", i), Index: int32(i)})
		}
		return out
	}
	now := metav1.NewTime(time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC))
	ready := []metav1.Condition{{Type: ReadyCondition, Status: metav1.ConditionTrue, Reason: ReadyReason, LastTransitionTime: now}}
	deleting := []metav1.Condition{{Type: ReadyCondition, Status: metav1.ConditionFalse, Reason: DeletingReason, Message: "waiting", LastTransitionTime: now}}
	renamed := indexes(0, 1000)
	renamed[7].Name = "other"
	cases := map[string]struct {
		before, after infrav1.Metal3DataTemplateStatus
		changed       bool
	}{
		"a batch served":          {infrav1.Metal3DataTemplateStatus{Indexes: indexes(0, 1000), Conditions: ready}, infrav1.Metal3DataTemplateStatus{Indexes: indexes(0, 1040), Conditions: ready, LastUpdated: &now}, true},
		"one renamed":             {infrav1.Metal3DataTemplateStatus{Indexes: indexes(0, 1000)}, infrav1.Metal3DataTemplateStatus{Indexes: renamed}, true},
		"nothing changed":         {infrav1.Metal3DataTemplateStatus{Indexes: indexes(0, 1000), Conditions: ready}, infrav1.Metal3DataTemplateStatus{Indexes: indexes(0, 1000), Conditions: ready}, false},
		"the first":               {infrav1.Metal3DataTemplateStatus{}, infrav1.Metal3DataTemplateStatus{Indexes: indexes(0, 1), Conditions: ready}, true},
		"none served, first time": {infrav1.Metal3DataTemplateStatus{}, infrav1.Metal3DataTemplateStatus{Indexes: indexes(0, 0)}, true},
		"the last released":       {infrav1.Metal3DataTemplateStatus{Indexes: indexes(0, 3)}, infrav1.Metal3DataTemplateStatus{Indexes: indexes(0, 0)}, true},
		"only the condition":      {infrav1.Metal3DataTemplateStatus{Indexes: indexes(0, 5), Conditions: ready}, infrav1.Metal3DataTemplateStatus{Indexes: indexes(0, 5), Conditions: deleting}, true},
		"an empty list, then nil": {infrav1.Metal3DataTemplateStatus{Indexes: indexes(0, 0)}, infrav1.Metal3DataTemplateStatus{}, true},
	}
	for name, c := range cases {
		data, changed, err := statusPatch(&c.before, &c.after)
		g.Expect(err).NotTo(HaveOccurred(), name)
		g.Expect(changed).To(Equal(c.changed), name)
		want, err := client.MergeFrom(&infrav1.Metal3DataTemplate{Status: c.before}).Data(&infrav1.Metal3DataTemplate{Status: c.after})
		g.Expect(err).NotTo(HaveOccurred(), name)
		if !c.changed {
			g.Expect(string(want)).To(Equal("{}"), name)
			continue
		}
		stored, err := json.Marshal(&infrav1.Metal3DataTemplate{Status: c.before})
		g.Expect(err).NotTo(HaveOccurred())
		got, err := jsonpatch.MergePatch(stored, data)
		g.Expect(err).NotTo(HaveOccurred(), name)
		expected, err := jsonpatch.MergePatch(stored, want)
		g.Expect(err).NotTo(HaveOccurred(), name)
		var gotT, expectedT infrav1.Metal3DataTemplate
		g.Expect(json.Unmarshal(got, &gotT)).To(Succeed())
		g.Expect(json.Unmarshal(expected, &expectedT)).To(Succeed())
		g.Expect(gotT).To(Equal(expectedT), name+": the patch applied gives what MergeFrom's gives")
		gotStatus, err := json.Marshal(gotT.Status)
		g.Expect(err).NotTo(HaveOccurred())
		newStatus, err := json.Marshal(c.after)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(gotStatus).To(MatchJSON(newStatus), name+": the new status")
	}

	c := cases["only the condition"]
	data, _, err := statusPatch(&c.before, &c.after)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).NotTo(ContainSubstring("indexes"), "unchanged indexes are not sent")
	c = cases["a batch served"]
	data, _, err = statusPatch(&c.before, &c.after)
	g.Expect(err).NotTo(HaveOccurred())
	want, err := client.MergeFrom(&infrav1.Metal3DataTemplate{Status: c.before}).Data(&infrav1.Metal3DataTemplate{Status: c.after})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(data).To(MatchJSON(want), "the same patch as MergeFrom's")
}

// TestCopyTemplateLeavesTheOriginalAlone: what a reconcile changes on its copy (finalizers,
// conditions, a new index list) is not seen on the template it was copied from, the cache's own.
func TestCopyTemplateLeavesTheOriginalAlone(t *testing.T) {
	g := NewWithT(t)
	orig := &infrav1.Metal3DataTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "t", Finalizers: []string{infrav1.DataTemplateFinalizer}, Labels: map[string]string{"a": "b"}},
		Status: infrav1.Metal3DataTemplateStatus{Indexes: []infrav1.IndexEntry{{Name: "c", Index: 0}},
			Conditions: []metav1.Condition{{Type: ReadyCondition, Status: metav1.ConditionTrue, Reason: ReadyReason}}},
	}
	want := orig.DeepCopy()
	cp := copyTemplate(orig)
	g.Expect(cp).To(Equal(want))
	cp.Finalizers[0] = "x"
	cp.Labels["a"] = "c"
	setCondition(cp, metav1.ConditionFalse, DeletingReason, "gone")
	cp.Status.Indexes = statusIndexes([]holder{{Index: 1, Claim: "d"}})
	g.Expect(orig).To(Equal(want))
}
