package metal3machine

import (
	"context"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// A claim is an update from a free host to one naming its machine. Only that machine is woken:
// waking every waiting machine of the namespace at every claim made a scale-up of a thousand
// machines reconcile each of them at every claim, to find nothing changed for it. A host that
// becomes free still wakes every waiting machine, and the machine that had it.
func TestHostUpdatesWakeTheMachinesTheyConcern(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	// Two machines wait for a host (the namespace has none): the cache's index lists them.
	cluster := createCluster(t, ns, "c", clusterOpts{})
	var waiting []string
	for _, name := range []string{"waits-1", "waits-2"} {
		createMachine(t, cluster, name, machineOpts{})
		waiting = append(waiting, name)
	}
	g.Eventually(func(g Gomega) {
		list := &infrav1.Metal3MachineList{}
		g.Expect(machines.Client.List(context.Background(), list, client.InNamespace(ns), client.MatchingFields{waitingForHostIndex: "true"})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(2))
	}).WithTimeout(10 * time.Second).Should(Succeed())

	host := func(version, consumer, reservedFor string) *bmov1.BareMetalHost {
		h := &bmov1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "host-1", ResourceVersion: version, Labels: map[string]string{}}}
		h.Status.Provisioning.State = bmov1.StateAvailable
		if consumer != "" {
			h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: metal3MachineKind, Name: consumer}
		}
		if reservedFor != "" {
			h.Labels[NodeReuseLabel] = reservedFor
		}
		return h
	}
	for _, tc := range []struct {
		name     string
		old, new *bmov1.BareMetalHost
		want     []string
	}{
		{name: "claimed: its machine only", old: host("1", "", ""), new: host("2", "m1", ""), want: []string{"m1"}},
		{name: "taken over: the machine that had it and the one that has it", old: host("1", "m1", ""), new: host("2", "m2", ""), want: []string{"m1", "m2"}},
		{name: "changed under its machine", old: host("1", "m1", ""), new: host("2", "m1", ""), want: []string{"m1"}},
		{name: "released: the machine that had it and every waiting machine", old: host("1", "m1", ""), new: host("2", "", ""), want: append([]string{"m1"}, waiting...)},
		{name: "claimed from a reservation: every waiting machine, as the others it was kept for wait", old: host("1", "", "owner"), new: host("2", "m1", ""), want: append([]string{"m1"}, waiting...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			machines.hostEvents().Update(context.Background(), event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}, q)
			var got []string
			for q.Len() > 0 {
				req, _ := q.Get()
				got = append(got, req.Name)
				q.Done(req)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Fatalf("woke %v, want %v", got, want)
			}
		})
	}
}

// A claim is two writes: the host's consumerRef, then the machine's annotation. When the second
// fails, the machine reconciles again while the cache may still show its host free: it must wait
// for the cache, not claim a second host. Once the cache shows the host in a later version the
// record goes, and the machine finds its host among those naming it (or claims again if the claim
// was undone).
func TestAClaimTheCacheHasNotSeenBlocksASecondClaim(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createHost(t, ns, "h1", map[string]string{"rack": "a"}, bmov1.StateAvailable)
	cached := &bmov1.BareMetalHost{}
	g.Eventually(func() error {
		return machines.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h1"}, cached)
	}).Should(Succeed())
	m3m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}}

	choice := &hostChoice{}
	g.Expect(choice.settle(ctx, machines.Client, m3m)).To(Succeed(), "no claim made: nothing to wait for")

	choice.done(m3m, cached, claimMade) // the host patch went through; the machine's did not
	g.Expect(choice.settle(ctx, machines.Client, m3m)).To(MatchError(errCacheBehind),
		"the cache still shows the host as it was before the claim")

	// The host moves on (here a label; in life, the claim itself reaching the cache).
	live := &bmov1.BareMetalHost{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h1"}, live)).To(Succeed())
	before := live.DeepCopy()
	live.Labels["rack"] = "b"
	g.Expect(env.Client.Patch(ctx, live, client.MergeFrom(before))).To(Succeed())
	g.Eventually(func() error { return choice.settle(ctx, machines.Client, m3m) }).Should(Succeed())
}
