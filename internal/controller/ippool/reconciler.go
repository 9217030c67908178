package ippool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
	"github.com/metalwire/metalwire/internal/metrics"
	"github.com/metalwire/metalwire/pkg/ipam"
)

// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ippools;ipclaims,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ippools/status;ipclaims/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipaddresses,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddresses,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ippools/finalizers;ipclaims/finalizers,verbs=update
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Defaults for Reconciler fields left zero.
const (
	defaultWorkers = 32
	// With StatusInterval zero, pool status writes are spaced by a second per statusBatch
	// addresses the status lists, within [minStatusInterval, maxStatusInterval]: each write
	// carries every allocation, so a fixed interval would make the status's cost grow with the
	// square of the pool's size while thousands of claims stream in. Spaced in proportion to the
	// pool, the writes of a scale-up are about as many at 10,000 claims as at 1,000, and what
	// they carry a claim stays flat (bench-data's watch KiB of ippools a machine).
	minStatusInterval = time.Second
	maxStatusInterval = 30 * time.Second
	statusBatch       = 500
	// conflictRequeue is how soon a pool is reconciled again after a claim changed under it
	// (another manager, or a stale cache): soon, as the claim is waiting.
	conflictRequeue = 200 * time.Millisecond
	// fullPassInterval is how often a pool's pass looks at every claim, not only the changed
	// ones (poolState.fullPass).
	fullPassInterval = 10 * time.Second
)

// Reconciler owns IPPool status, the IPAddresses the pools hand out, and the allocation part of
// IPClaim and Cluster API IPAddressClaim status.
type Reconciler struct {
	Client client.Client
	// APIReader reads from the API server, not the cache: used where a stale cache could
	// decide wrongly (who holds an address that already exists; is a pool really empty).
	APIReader client.Reader
	Recorder  events.EventRecorder
	// Workers bounds the API writes one pool reconcile runs at once.
	Workers int
	// StatusInterval spaces out IPPool status writes while claims stream in: the status of a
	// pool with thousands of addresses is large, and one write per batch is plenty. Zero means
	// a second per 500 addresses handed out, from 1 s to 30 s.
	StatusInterval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// WatchFilter is --watch-filter: with a value, only pools labelled with it are served, and
	// of their claims only those labelled with it; other pools and claims are left untouched
	// (no finalizer, no status, no IPAddress), as another manager's.
	WatchFilter string

	states  states
	members members
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile serves the claims of one pool and reports the pool's state, in the reconcilers' one
// shape (skeleton): the finalizer is persisted before any address is handed out, and the pool is
// written once at the end by writePool.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, req, skeleton.Kind[*ipamv1.IPPool]{
		Client: r.Client, WatchFilter: r.WatchFilter,
		New: func() *ipamv1.IPPool { return &ipamv1.IPPool{} },
		Gone: func(ctx context.Context, key types.NamespacedName) (ctrl.Result, error) {
			r.states.drop(key)
			metrics.ForgetPool(key.Namespace, key.Name)
			return r.reconcileMissing(ctx, key)
		},
		ClusterName: func(pool *ipamv1.IPPool) string { return ptr.Deref(pool.Spec.ClusterName, "") },
		Finalizer:   ipamv1.IPPoolFinalizer,
		Normal: func(ctx context.Context, s *skeleton.Scope[*ipamv1.IPPool]) (ctrl.Result, error) {
			return r.reconcileNormal(ctx, s.Object)
		},
		Delete: func(ctx context.Context, s *skeleton.Scope[*ipamv1.IPPool]) (ctrl.Result, error) {
			return r.reconcileDelete(ctx, s.Object)
		},
		Write:   r.writePool,
		Copy:    copyPool,
		NewList: func() client.ObjectList { return &ipamv1.IPPoolList{} },
	})
}

// reconcileNormal hands out addresses, unless the pool cannot be used; then it says why on the
// pool and its waiting claims, and still releases the addresses of deleted claims.
func (r *Reconciler) reconcileNormal(ctx context.Context, pool *ipamv1.IPPool) (ctrl.Result, error) {
	key := client.ObjectKeyFromObject(pool)
	if older, err := r.olderPoolWithPrefix(ctx, pool); err != nil {
		return ctrl.Result{}, err
	} else if older != "" {
		r.states.drop(key)
		msg := fmt.Sprintf("namePrefix %q is already used by IPPool %q, created earlier; both would name their IPAddresses alike, so this pool hands out nothing: delete it and create it again with another namePrefix",
			pool.Spec.NamePrefix, older)
		return r.refuse(ctx, pool, ipamv1.DuplicateNamePrefixReason, msg)
	}
	parsed, err := ipam.Parse(specOf(pool))
	if err != nil {
		r.states.drop(key)
		return r.refuse(ctx, pool, ipamv1.InvalidSpecReason, specErrorMessage(err))
	}
	st, err := r.stateFor(ctx, pool, parsed)
	if err != nil {
		return ctrl.Result{}, err
	}
	claims := r.members.take(key, st.fullPass(r.now()))
	b := &batch{r: r, pool: pool, st: st}
	b.plan(ctx, claims)
	r.members.again(key, b.again)
	b.run(ctx)
	res := r.setPoolStatus(pool, st)
	if b.conflicts.Load() > 0 {
		res = minRequeue(res, conflictRequeue)
	}
	if !b.nextFree.IsZero() {
		res = minRequeue(res, time.Until(b.nextFree)+10*time.Millisecond)
	}
	return res, b.err()
}

// reconcileDelete keeps the pool while addresses of it exist, releasing those of deleted claims.
func (r *Reconciler) reconcileDelete(ctx context.Context, pool *ipamv1.IPPool) (ctrl.Result, error) {
	key := client.ObjectKeyFromObject(pool)
	claims := r.claimsOf(pool.Namespace, pool.Name)
	b := &batch{r: r, pool: pool}
	if parsed, perr := ipam.Parse(specOf(pool)); perr == nil {
		st, err := r.stateFor(ctx, pool, parsed)
		if err != nil {
			return ctrl.Result{}, err
		}
		b.st = st
	}
	b.planReleasesOnly(claims, ipamv1.PoolNotReadyReason, fmt.Sprintf("IPPool %s is being deleted", pool.Name))
	b.run(ctx)
	if err := b.err(); err != nil {
		return ctrl.Result{}, err
	}

	// The cache may lag behind a create of the last moments: ask the API server.
	live := &ipamv1.IPAddressList{}
	if err := r.APIReader.List(ctx, live, client.InNamespace(pool.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the IPAddresses of namespace %s from the API server: %w", pool.Namespace, err)
	}
	var holders []string
	for i := range live.Items {
		if live.Items[i].Spec.Pool.Name == pool.Name {
			holders = append(holders, live.Items[i].Spec.Claim.Name)
		}
	}
	if len(holders) > 0 {
		slices.Sort(holders)
		msg := fmt.Sprintf("%d addresses are still handed out, to claims %s; the pool is kept until they are released: delete those claims (or their IPAddresses)",
			len(holders), listNames(holders, 10))
		before := pool.DeepCopy()
		setPoolReady(pool, false, ipamv1.AddressesInUseReason, msg, r.now())
		if changedReady(before, pool) {
			r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, ipamv1.AddressesInUseReason, "Delete", msg)
		}
		// Releases arrive as IPAddress events; this is a safety net for a missed one.
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	controllerutil.RemoveFinalizer(pool, ipamv1.IPPoolFinalizer)
	r.states.drop(key)
	return ctrl.Result{}, nil
}

// reconcileMissing answers the claims of a pool that does not exist: they wait, and say so.
func (r *Reconciler) reconcileMissing(ctx context.Context, key types.NamespacedName) (ctrl.Result, error) {
	claims := r.claimsOf(key.Namespace, key.Name)
	b := &batch{r: r, pool: &ipamv1.IPPool{}}
	b.pool.Name, b.pool.Namespace = key.Name, key.Namespace
	b.planReleasesOnly(claims, ipamv1.PoolNotFoundReason,
		fmt.Sprintf("no IPPool %q in namespace %s; create it, or point the claim at an existing pool", key.Name, key.Namespace))
	b.run(ctx)
	return ctrl.Result{}, b.err()
}

// refuse reports a pool that cannot hand out addresses, on the pool and its waiting claims.
func (r *Reconciler) refuse(ctx context.Context, pool *ipamv1.IPPool, reason, msg string) (ctrl.Result, error) {
	before := pool.DeepCopy()
	setPoolReady(pool, false, reason, msg, r.now())
	if changedReady(before, pool) {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, reason, "Allocate", msg)
	}
	pool.Status.Total, pool.Status.Free, pool.Status.Used, pool.Status.OutOfRange = nil, nil, nil, nil
	claims := r.claimsOf(pool.Namespace, pool.Name)
	b := &batch{r: r, pool: pool}
	b.planReleasesOnly(claims, ipamv1.PoolNotReadyReason, fmt.Sprintf("IPPool %s hands out nothing: %s", pool.Name, msg))
	b.run(ctx)
	return ctrl.Result{}, b.err()
}

// olderPoolWithPrefix names another pool of the namespace with the same namePrefix that was
// created first (ties broken by name), or "" when this pool is the first.
func (r *Reconciler) olderPoolWithPrefix(ctx context.Context, pool *ipamv1.IPPool) (string, error) {
	list := &ipamv1.IPPoolList{}
	// Read only, so the cache's own pools: a copy would carry each pool's status, an entry per
	// allocation.
	if err := r.Client.List(ctx, list, client.InNamespace(pool.Namespace),
		client.MatchingFields{namePrefixField: pool.Spec.NamePrefix}, client.UnsafeDisableDeepCopy); err != nil {
		return "", err
	}
	older := ""
	for i := range list.Items {
		o := &list.Items[i]
		if o.UID == pool.UID {
			continue
		}
		first := o.CreationTimestamp.Before(&pool.CreationTimestamp) ||
			(o.CreationTimestamp.Equal(&pool.CreationTimestamp) && o.Name < pool.Name)
		if first && (older == "" || o.Name < older) {
			older = o.Name
		}
	}
	return older, nil
}

// stateFor returns the pool's allocator, built from the cache the first time (or after the pool
// was re-created) and moved to the new spec after an edit.
func (r *Reconciler) stateFor(ctx context.Context, pool *ipamv1.IPPool, parsed *ipam.Pool) (*poolState, error) {
	key := client.ObjectKeyFromObject(pool)
	if st := r.states.get(key); st != nil {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.uid == pool.UID {
			if st.generation != pool.Generation {
				st.index.Reconfigure(parsed)
				st.generation = pool.Generation
				st.fullNext = true
			}
			return st, nil
		}
	}
	st := r.states.create(key)
	defer st.mu.Unlock()
	list := &ipamv1.IPAddressList{}
	if err := r.Client.List(ctx, list, client.InNamespace(pool.Namespace),
		client.MatchingFields{addressPoolField: pool.Name}, client.UnsafeDisableDeepCopy); err != nil {
		r.states.drop(key)
		return nil, err
	}
	existing := make([]ipam.Allocation, 0, len(list.Items))
	for i := range list.Items {
		if a, ok := allocationOf(&list.Items[i]); ok {
			existing = append(existing, a)
		}
	}
	idx, err := ipam.Rebuild(parsed, existing, nil)
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("some IPAddresses of the pool contradict each other; they are checked against their claims", "contradictions", err.Error())
	}
	st.index, st.uid, st.generation, st.namePrefix = idx, pool.UID, pool.Generation, pool.Spec.NamePrefix
	st.replayReleases(pool)
	// Claims may have gone while no manager watched: every IPAddress whose claim the cache does
	// not show (or shows made again), or that the index gives to someone else, is checked.
	for i := range list.Items {
		a := &list.Items[i]
		if alloc, ok := allocationOf(a); !ok || !indexAgrees(idx, alloc) || !r.claimCached(ctx, a) {
			st.suspectLocked(a.Name, "")
		}
	}
	return st, nil
}

func indexAgrees(idx *ipam.Index, a ipam.Allocation) bool {
	owner, ok := idx.Owner(a.Addr)
	return ok && owner == a.Owner
}

// claimCached reports whether the cache shows the claim an IPAddress was given to, the same
// object its owner reference names.
func (r *Reconciler) claimCached(ctx context.Context, a *ipamv1.IPAddress) bool {
	kind := kindOrDefault(a.Spec.Claim.Kind)
	var obj client.Object = &ipamv1.IPClaim{}
	if kind == capiClaimKind {
		obj = &capiipamv1.IPAddressClaim{}
	}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: a.Namespace, Name: a.Spec.Claim.Name}, obj); err != nil {
		return false
	}
	return ownedBy(a.OwnerReferences, kind, a.Spec.Claim.Name, obj.GetUID())
}

// claimsOf is the IPClaims and Cluster API IPAddressClaims naming the pool, as its members
// (claimEvents) hold them: the informers' own objects, which callers must not change; they copy
// the few they change (claim.deepCopy). Under --watch-filter only the claims with the filter's
// label are members: the others are another manager's, even on our pool.
func (r *Reconciler) claimsOf(namespace, pool string) []claim {
	return r.members.of(types.NamespacedName{Namespace: namespace, Name: pool})
}

// specErrorMessage puts "spec." before each field pkg/ipam names.
func specErrorMessage(err error) string {
	var fields ipam.FieldErrors
	if errors.As(err, &fields) {
		msgs := make([]string, len(fields))
		for i, f := range fields {
			msgs[i] = "spec." + f.Field + ": " + f.Detail
		}
		return strings.Join(msgs, "; ")
	}
	var field *ipam.FieldError
	if errors.As(err, &field) {
		return "spec." + field.Field + ": " + field.Detail
	}
	return err.Error()
}

// listNames shows up to max names, then how many more.
func listNames(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:limit], ", "), len(names)-limit)
}

func minRequeue(res ctrl.Result, after time.Duration) ctrl.Result {
	if after <= 0 {
		after = time.Millisecond
	}
	if res.RequeueAfter == 0 || after < res.RequeueAfter {
		res.RequeueAfter = after
	}
	return res
}
