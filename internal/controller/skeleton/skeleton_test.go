package skeleton_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gstruct"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
	"github.com/metalwire/metalwire/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

const finalizer = "skeleton.test/finalizer"

// kind is a Metal3Cluster reconcile whose Normal phase sets a condition and counts its runs.
func kind(runs *int) skeleton.Kind[*infrav1.Metal3Cluster] {
	return skeleton.Kind[*infrav1.Metal3Cluster]{
		Client:          env.Client,
		New:             func() *infrav1.Metal3Cluster { return &infrav1.Metal3Cluster{} },
		PausedCondition: true,
		Finalizer:       finalizer,
		Normal: func(_ context.Context, s *skeleton.Scope[*infrav1.Metal3Cluster]) (ctrl.Result, error) {
			*runs++
			conditions.Set(s.Object, metav1.Condition{Type: "Phase", Status: metav1.ConditionTrue, Reason: "Done"})
			return ctrl.Result{}, nil
		},
		Ready: &skeleton.Ready[*infrav1.Metal3Cluster]{Condition: "Ready", From: []string{"Phase"}, TrueReason: "Summary"},
	}
}

func create(t *testing.T, ns string, annotations map[string]string) *infrav1.Metal3Cluster {
	t.Helper()
	m3c := &infrav1.Metal3Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c", Annotations: annotations}}
	NewWithT(t).Expect(env.Client.Create(context.Background(), m3c)).To(Succeed())
	return m3c
}

func get(g Gomega, m3c *infrav1.Metal3Cluster) *infrav1.Metal3Cluster {
	got := &infrav1.Metal3Cluster{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(m3c), got)).To(Succeed())
	return got
}

// TestFinalizerFirstThenOnePatch: the first reconcile writes only the finalizer and runs no
// phase; the next runs the phase and writes status and conditions in one write; one that changes
// nothing writes nothing.
func TestFinalizerFirstThenOnePatch(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	writes := env.CountModified(t, ns, &infrav1.Metal3ClusterList{})
	m3c := create(t, ns, nil)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(m3c)}
	runs := 0

	_, err := skeleton.Reconcile(ctx, req, kind(&runs))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(runs).To(Equal(0), "no phase runs before the finalizer is stored")
	got := get(g, m3c)
	g.Expect(got.Finalizers).To(ConsistOf(finalizer))
	g.Expect(got.Status.Conditions).To(BeEmpty(), "the finalizer's write carries nothing else")
	g.Eventually(writes).WithTimeout(5 * time.Second).Should(Equal(map[string]int{"c": 1}))

	_, err = skeleton.Reconcile(ctx, req, kind(&runs))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(runs).To(Equal(1))
	got = get(g, m3c)
	g.Expect(conditions.IsTrue(got, "Phase")).To(BeTrue())
	g.Expect(conditions.IsTrue(got, "Ready")).To(BeTrue(), "Ready is summarised from the phase's condition")
	g.Expect(conditions.IsFalse(got, clusterv1.PausedCondition)).To(BeTrue(), "Paused travels with the rest")
	g.Eventually(writes).WithTimeout(5*time.Second).Should(Equal(map[string]int{"c": 2}), "status and conditions: one write")

	_, err = skeleton.Reconcile(ctx, req, kind(&runs))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(runs).To(Equal(2))
	g.Consistently(writes).WithTimeout(2*time.Second).Should(Equal(map[string]int{"c": 2}), "a reconcile that changes nothing writes nothing")
}

// TestPausedRunsNoPhase: a paused object gets no finalizer and no phase; only its Paused
// condition is written.
func TestPausedRunsNoPhase(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	m3c := create(t, ns, map[string]string{clusterv1.PausedAnnotation: ""})
	runs := 0
	_, err := skeleton.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(m3c)}, kind(&runs))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(runs).To(Equal(0))
	got := get(g, m3c)
	g.Expect(got.Finalizers).To(BeEmpty())
	g.Expect(conditions.IsTrue(got, clusterv1.PausedCondition)).To(BeTrue())
	g.Expect(conditions.Get(got, clusterv1.PausedCondition).Message).To(ContainSubstring("Metal3Cluster has the cluster.x-k8s.io/paused annotation"))
	g.Expect(conditions.Has(got, "Ready")).To(BeFalse())
}

// TestGoneIsDone: an object that no longer exists runs Gone, and is no error.
func TestGoneIsDone(t *testing.T) {
	g := NewWithT(t)
	runs := 0
	var gone types.NamespacedName
	k := kind(&runs)
	k.Gone = func(_ context.Context, key types.NamespacedName) (ctrl.Result, error) {
		gone = key
		return ctrl.Result{}, nil
	}
	key := types.NamespacedName{Namespace: env.NewNamespace(t), Name: "absent"}
	_, err := skeleton.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gone).To(Equal(key))
	g.Expect(runs).To(Equal(0))
}

// TestOwnWriter: a kind's own Write gets the object as read and as the phase left it, once, and
// Written runs after it wrote.
func TestOwnWriter(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	m3c := create(t, ns, nil)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(m3c)}
	runs, writes, written := 0, 0, 0
	k := kind(&runs)
	k.Finalizer = ""
	k.Write = func(ctx context.Context, before, after *infrav1.Metal3Cluster) error {
		writes++
		g.Expect(conditions.Has(before, "Phase")).To(BeFalse(), "before is the object as read")
		g.Expect(conditions.IsTrue(after, "Phase")).To(BeTrue(), "after is the object as the phase left it")
		return env.Client.Status().Patch(ctx, after, client.MergeFrom(before))
	}
	k.Written = func(*skeleton.Scope[*infrav1.Metal3Cluster]) { written++ }
	_, err := skeleton.Reconcile(ctx, req, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]int{runs, writes, written}).To(Equal([]int{1, 1, 1}))
	g.Expect(conditions.IsTrue(get(g, m3c), "Ready")).To(BeTrue())
}

// TestReadySaysTheFirstNotTrue: Ready is False with the reason and message of the first of its
// conditions (in the order the kind gives) that is not True, True once all are, and untouched
// by a reconcile whose phase set none of them; a Metal3Data-like kind with no conditions.Setter
// gives its conditions through Ready.Conditions.
func TestReadySaysTheFirstNotTrue(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	data := &infrav1.Metal3Data{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "d"},
		Spec: infrav1.Metal3DataSpec{Template: corev1.ObjectReference{Name: "t"}, Claim: corev1.ObjectReference{Name: "c"}}}
	g.Expect(env.Client.Create(ctx, data)).To(Succeed())
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(data)}
	var set []metav1.Condition
	k := skeleton.Kind[*infrav1.Metal3Data]{
		Client: env.Client,
		New:    func() *infrav1.Metal3Data { return &infrav1.Metal3Data{} },
		Normal: func(_ context.Context, s *skeleton.Scope[*infrav1.Metal3Data]) (ctrl.Result, error) {
			for _, c := range set {
				meta.SetStatusCondition(&s.Object.Status.Conditions, c)
			}
			return ctrl.Result{}, nil
		},
		Ready: &skeleton.Ready[*infrav1.Metal3Data]{
			Condition: "Ready", From: []string{"First", "Second"}, TrueReason: "AllDone",
			Conditions: func(d *infrav1.Metal3Data) *[]metav1.Condition { return &d.Status.Conditions },
		},
	}
	ready := func() *metav1.Condition {
		got := &infrav1.Metal3Data{}
		g.Expect(env.Client.Get(ctx, req.NamespacedName, got)).To(Succeed())
		return meta.FindStatusCondition(got.Status.Conditions, "Ready")
	}

	_, err := skeleton.Reconcile(ctx, req, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready()).To(BeNil(), "none of Ready's conditions is set: Ready is not said")

	set = []metav1.Condition{
		{Type: "Second", Status: metav1.ConditionFalse, Reason: "SecondWaits", Message: "second waits"},
		{Type: "First", Status: metav1.ConditionFalse, Reason: "FirstWaits", Message: "first waits"},
	}
	_, err = skeleton.Reconcile(ctx, req, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready()).To(gstruct.PointTo(gstruct.MatchFields(gstruct.IgnoreExtras, gstruct.Fields{
		"Status": Equal(metav1.ConditionFalse), "Reason": Equal("FirstWaits"), "Message": Equal("first waits"),
	})), "the first in the kind's order, not in the object's")

	set = []metav1.Condition{{Type: "First", Status: metav1.ConditionTrue, Reason: "Done"}}
	_, err = skeleton.Reconcile(ctx, req, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready()).To(gstruct.PointTo(gstruct.MatchFields(gstruct.IgnoreExtras, gstruct.Fields{"Reason": Equal("SecondWaits"), "Message": Equal("second waits")})))

	set = []metav1.Condition{{Type: "Second", Status: metav1.ConditionTrue, Reason: "Done"}}
	_, err = skeleton.Reconcile(ctx, req, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready()).To(gstruct.PointTo(gstruct.MatchFields(gstruct.IgnoreExtras, gstruct.Fields{
		"Status": Equal(metav1.ConditionTrue), "Reason": Equal("AllDone"), "Message": BeEmpty(),
	})))
}

// TestReadyReasonsNameWhatReadySays: a condition Reasons names gives Ready the reason the kind
// chose for it (with that condition's message); one not named gives its own.
func TestReadyReasonsNameWhatReadySays(t *testing.T) {
	g := NewWithT(t)
	summary := skeleton.Ready[*infrav1.Metal3Cluster]{
		Condition: "Ready", From: []string{"Owner", "Endpoint"}, TrueReason: "Ready",
		Reasons: map[string]string{"Endpoint": "NotReady"},
	}
	ready := func(conds ...metav1.Condition) *metav1.Condition {
		m3c := &infrav1.Metal3Cluster{}
		for _, c := range conds {
			conditions.Set(m3c, c)
		}
		g.Expect(summary.Summarise(m3c)).To(Succeed())
		return conditions.Get(m3c, "Ready")
	}
	owned := metav1.Condition{Type: "Owner", Status: metav1.ConditionTrue, Reason: "Owned"}
	g.Expect(ready(metav1.Condition{Type: "Owner", Status: metav1.ConditionFalse, Reason: "WaitingForOwner", Message: "no owner"},
		metav1.Condition{Type: "Endpoint", Status: metav1.ConditionFalse, Reason: "EndpointFailed", Message: "no port"})).
		To(gstruct.PointTo(gstruct.MatchFields(gstruct.IgnoreExtras, gstruct.Fields{"Reason": Equal("WaitingForOwner"), "Message": Equal("no owner")})))
	g.Expect(ready(owned, metav1.Condition{Type: "Endpoint", Status: metav1.ConditionFalse, Reason: "EndpointFailed", Message: "no port"})).
		To(gstruct.PointTo(gstruct.MatchFields(gstruct.IgnoreExtras, gstruct.Fields{"Reason": Equal("NotReady"), "Message": Equal("no port")})))
	g.Expect(ready(owned, metav1.Condition{Type: "Endpoint", Status: metav1.ConditionTrue, Reason: "Valid"})).
		To(gstruct.PointTo(gstruct.MatchFields(gstruct.IgnoreExtras, gstruct.Fields{"Status": Equal(metav1.ConditionTrue), "Reason": Equal("Ready")})))
}

// TestReadyIsNotTrueWhileAConditionIsMissing: an object an older manager wrote carries Ready and
// some of the conditions it is now summarised from; while one of those is missing, Ready is not
// turned True by the rest (it keeps what it said), but a missing one does not hide a False.
func TestReadyIsNotTrueWhileAConditionIsMissing(t *testing.T) {
	g := NewWithT(t)
	summary := skeleton.Ready[*infrav1.Metal3Cluster]{Condition: "Ready", From: []string{"Owner", "Endpoint"}, TrueReason: "Ready"}
	ready := func(conds ...metav1.Condition) *metav1.Condition {
		m3c := &infrav1.Metal3Cluster{}
		conditions.Set(m3c, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "OldSays", Message: "an older manager's word"})
		for _, c := range conds {
			conditions.Set(m3c, c)
		}
		g.Expect(summary.Summarise(m3c)).To(Succeed())
		return conditions.Get(m3c, "Ready")
	}
	g.Expect(ready(metav1.Condition{Type: "Owner", Status: metav1.ConditionTrue, Reason: "Owned"})).
		To(gstruct.PointTo(gstruct.MatchFields(gstruct.IgnoreExtras, gstruct.Fields{"Status": Equal(metav1.ConditionFalse), "Reason": Equal("OldSays")})),
			"Endpoint is not said yet: Ready keeps its word")
	g.Expect(ready(metav1.Condition{Type: "Endpoint", Status: metav1.ConditionFalse, Reason: "EndpointFailed", Message: "no port"})).
		To(gstruct.PointTo(gstruct.MatchFields(gstruct.IgnoreExtras, gstruct.Fields{"Status": Equal(metav1.ConditionFalse), "Reason": Equal("EndpointFailed")})),
			"a False is said even with Owner missing")
}
