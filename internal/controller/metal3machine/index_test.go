package metal3machine

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
)

// A claim is an update from a free host to one naming its machine. Only that machine is woken:
// waking every waiting machine of the namespace at every claim cost a scale-up of a thousand
// machines about a million reconciles that found nothing changed for them.
func TestHostUpdatesWakeTheMachinesTheyConcern(t *testing.T) {
	host := func(consumer string) *bmov1.BareMetalHost {
		h := &bmov1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "host-1"}}
		if consumer != "" {
			h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: metal3MachineKind, Name: consumer}
		}
		return h
	}
	for _, tc := range []struct {
		name     string
		old, new *bmov1.BareMetalHost
		want     []string
	}{
		{name: "claimed: its machine only", old: host(""), new: host("m1"), want: []string{"m1"}},
		{name: "taken over: the machine that had it and the one that has it", old: host("m1"), new: host("m2"), want: []string{"m1", "m2"}},
		{name: "changed under its machine", old: host("m1"), new: host("m1"), want: []string{"m1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			r := &Reconciler{} // none of these events reads the cache: a claimed host names its machine
			r.hostEvents().Update(context.Background(), event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}, q)
			var got []string
			for q.Len() > 0 {
				req, _ := q.Get()
				got = append(got, req.Name)
				q.Done(req)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("woke %v, want %v", got, tc.want)
			}
		})
	}
}
