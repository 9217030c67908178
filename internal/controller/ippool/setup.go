package ippool

import (
	"context"
	"net/netip"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/mapping"
	"github.com/metalwire/metalwire/internal/controller/pause"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "ippool"

// SetupWithManager registers the field indexes and the controller. concurrency is how many
// pools are reconciled at once; one pool is never reconciled twice at once.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	if err := addIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&ipamv1.IPPool{}, builder.WithPredicates(watchfilter.Predicate(r.WatchFilter), predicate.Or(
			// Labels: a pool labelled for this manager's --watch-filter is taken up at once.
			// Finalizers: the reconcile that stores the finalizer ends there (skeleton); its
			// update brings the pool back to hand out addresses.
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{},
			finalizersChanged))).
		// A pool refused for its namePrefix is looked at again when the other pool changes.
		Watches(&ipamv1.IPPool{}, handler.EnqueueRequestsFromMapFunc(r.poolsWithSamePrefix)).
		// No watch-filter predicate on claims: their handler must also see a claim lose the
		// label, to take it out of its pool's members; it applies the filter itself.
		Watches(&ipamv1.IPClaim{}, r.claimEvents(ipClaimPool)).
		Watches(&capiipamv1.IPAddressClaim{}, r.claimEvents(capiClaimPool)).
		Watches(&ipamv1.IPAddress{}, r.addressEvents()).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.poolsOfCluster)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(pause.ClusterToObjects(mgr.GetClient(),
			func() client.ObjectList { return &ipamv1.IPPoolList{} },
			func(o client.Object) string {
				return pause.ClusterName(o, ptr.Deref(o.(*ipamv1.IPPool).Spec.ClusterName, ""))
			})), pause.Transitions()).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Complete(r)
}

// claimEvents records each claim among its pool's members and enqueues the pool, in that order,
// so that the reconcile finds the claim. Update events of claims that are served and stay so
// are recorded but enqueue nothing: mostly the status writes of this controller, which would
// otherwise each enqueue the pool again. A deleted claim's IPAddresses become suspects of its
// pool, to be released. Under --watch-filter a claim without the filter's label is no pool's
// member and enqueues nothing (it is another manager's, even on our pool); one that loses the
// label leaves its pool's members.
func (r *Reconciler) claimEvents(poolOf handler.MapFunc) handler.EventHandler {
	pools := func(ctx context.Context, o client.Object) []reconcile.Request {
		if !watchfilter.Matches(o, r.WatchFilter) {
			return nil
		}
		return poolOf(ctx, o)
	}
	record := func(ctx context.Context, old, o client.Object) []reconcile.Request {
		c, ok := asClaim(o)
		if !ok {
			return nil
		}
		var previous []types.NamespacedName
		if old != nil {
			previous = poolKeys(poolOf(ctx, old))
		}
		reqs := pools(ctx, o)
		r.members.set(c, previous, poolKeys(reqs))
		return reqs
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			for _, req := range record(ctx, nil, e.Object) {
				q.Add(req)
			}
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			reqs := record(ctx, e.ObjectOld, e.ObjectNew)
			if c, ok := asClaim(e.ObjectNew); !ok || deleting(c.object()) || c.readyReason() != ipamv1.AllocatedReason {
				for _, req := range reqs {
					q.Add(req)
				}
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if c, ok := asClaim(e.Object); ok {
				r.members.remove(c, poolKeys(poolOf(ctx, e.Object)))
			}
			for _, req := range pools(ctx, e.Object) {
				r.suspectAddressesOf(ctx, req.NamespacedName, e.Object)
				q.Add(req)
			}
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			for _, req := range pools(ctx, e.Object) {
				q.Add(req)
			}
		},
	}
}

func poolKeys(reqs []reconcile.Request) []types.NamespacedName {
	keys := make([]types.NamespacedName, len(reqs))
	for i, req := range reqs {
		keys[i] = req.NamespacedName
	}
	return keys
}

func asClaim(o client.Object) (claim, bool) {
	switch o := o.(type) {
	case *ipamv1.IPClaim:
		return ipClaim{o}, true
	case *capiipamv1.IPAddressClaim:
		return capiClaim{o}, true
	}
	return nil, false
}

// suspectAddressesOf makes every IPAddress a deleted claim may hold a suspect of its pool: the
// one the index gives it, the one its status names, those the cache shows.
func (r *Reconciler) suspectAddressesOf(ctx context.Context, pool types.NamespacedName, o client.Object) {
	st := r.states.get(pool)
	c, ok := asClaim(o)
	if st == nil || !ok {
		return // a pool not built yet checks every IPAddress when it is
	}
	uid := o.GetUID()
	if name, ok := c.decidedAddress(); ok && name != "" {
		st.suspect(name, uid)
	}
	st.mu.Lock()
	st.written.Forget(o.GetName())
	if st.index == nil {
		st.mu.Unlock()
		return
	}
	if addr, ok := st.index.Lookup(o.GetName()); ok && st.namePrefix != "" {
		st.suspectLocked(ipamv1.IPAddressName(st.namePrefix, addr.String()), uid)
	}
	st.mu.Unlock()
	list := &ipamv1.IPAddressList{}
	if err := r.Client.List(ctx, list, client.InNamespace(pool.Namespace),
		client.MatchingFields{addressClaimField: claimKey(pool.Name, o.GetName())}); err == nil {
		for i := range list.Items {
			st.suspect(list.Items[i].Name, uid)
		}
	}
}

func ipClaimPool(_ context.Context, o client.Object) []reconcile.Request {
	c := o.(*ipamv1.IPClaim)
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: c.Spec.Pool.Name}}}
}

func capiClaimPool(_ context.Context, o client.Object) []reconcile.Request {
	c := o.(*capiipamv1.IPAddressClaim)
	if !isOurPool(c.Spec.PoolRef) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: c.Spec.PoolRef.Name}}}
}

func (r *Reconciler) poolsWithSamePrefix(ctx context.Context, o client.Object) []reconcile.Request {
	p := o.(*ipamv1.IPPool)
	return mapping.Listed(ctx, r.Client, &ipamv1.IPPoolList{}, "the IPPools with namePrefix "+p.Spec.NamePrefix,
		func(o client.Object) bool { return o.GetName() != p.Name },
		client.InNamespace(p.Namespace), client.MatchingFields{namePrefixField: p.Spec.NamePrefix})
}

// poolsOfCluster enqueues the pools of a Cluster's IPAddressClaims, so that unpausing a Cluster
// serves its claims.
func (r *Reconciler) poolsOfCluster(ctx context.Context, o client.Object) []reconcile.Request {
	list := &capiipamv1.IPAddressClaimList{}
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{capiClusterField: o.GetName()}); err != nil {
		return nil
	}
	seen := map[reconcile.Request]bool{}
	var out []reconcile.Request
	for i := range list.Items {
		for _, req := range capiClaimPool(ctx, &list.Items[i]) {
			if !seen[req] {
				seen[req] = true
				out = append(out, req)
			}
		}
	}
	return out
}

// addressEvents keeps each pool's index current from IPAddress events (its own writes and
// everyone else's) and enqueues the pool: a release may let a waiting claim through.
func (r *Reconciler) addressEvents() handler.EventHandler {
	apply := func(o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request], deleted bool) {
		a, ok := o.(*ipamv1.IPAddress)
		if !ok {
			return
		}
		key := types.NamespacedName{Namespace: a.Namespace, Name: a.Spec.Pool.Name}
		if st := r.states.get(key); st != nil {
			if addr, err := netip.ParseAddr(string(a.Spec.Address)); err == nil {
				if deleted {
					st.releaseIfHeld(a.Spec.Claim.Name, addr, r.now())
				} else {
					st.observe(a.Name, a.Spec.Claim.Name, addr)
				}
			}
		}
		r.members.touch(key, a.Spec.Claim.Name)
		q.Add(reconcile.Request{NamespacedName: key})
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			apply(e.Object, q, false)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			apply(e.ObjectNew, q, false)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			apply(e.Object, q, true)
		},
	}
}

// finalizersChanged passes pool updates that add or remove a finalizer.
var finalizersChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !slices.Equal(e.ObjectOld.GetFinalizers(), e.ObjectNew.GetFinalizers())
	},
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}
