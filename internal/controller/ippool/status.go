package ippool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/metrics"
	"github.com/metalwire/metalwire/pkg/ipam"
)

// allocationOf reads an IPAddress as an index allocation.
func allocationOf(a *ipamv1.IPAddress) (ipam.Allocation, bool) {
	addr, err := netip.ParseAddr(string(a.Spec.Address))
	if err != nil || a.Spec.Claim.Name == "" {
		return ipam.Allocation{}, false
	}
	return ipam.Allocation{Owner: a.Spec.Claim.Name, Addr: addr}, true
}

// setPoolStatus sets the pool's counters, allocations and Ready condition, and keeps the
// releases annotation current, for writePool to write. While claims stream in, status writes are
// spaced StatusInterval apart (the status is left as read and the pool requeued for the rest); a
// change of the Ready condition is written at once.
//
// The allocations are listed, and the status's map of them built, only for a status that is
// written: on the other passes of a large pool they are only compared (a map of thousands of
// entries built and thrown away on every pass while claims streamed in was 1 GB of allocation
// over a 10,000-machine run). The pool's lock is held throughout, so that what is written is one
// moment of the index.
func (r *Reconciler) setPoolStatus(pool *ipamv1.IPPool, st *poolState) ctrl.Result {
	now := r.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	stats := st.index.Stats(now)
	releases := st.releasesAnnotation(now)

	if pool.Annotations[ipamv1.ReleasesAnnotation] != releases {
		if releases == "" {
			delete(pool.Annotations, ipamv1.ReleasesAnnotation)
		} else {
			if pool.Annotations == nil {
				pool.Annotations = map[string]string{}
			}
			pool.Annotations[ipamv1.ReleasesAnnotation] = releases
		}
	}

	before := copyPool(pool)
	pool.Status.Total = ptr.To(stats.Total.Int64())
	pool.Status.Free = ptr.To(stats.Free.Int64())
	pool.Status.Used = ptr.To(int64(stats.Used))
	pool.Status.OutOfRange = ptr.To(int64(stats.OutOfRange))
	metrics.PoolAddressesAllocated.WithLabelValues(pool.Namespace, pool.Name).Set(float64(stats.Used))
	metrics.PoolAddressesFree.WithLabelValues(pool.Namespace, pool.Name).Set(float64(stats.Free.Int64()))
	msg := fmt.Sprintf("%s of %s addresses free (%d allocated, %d reserved by preAllocations, %d cooling after release",
		stats.Free, stats.Total, stats.Allocated, stats.Reserved, stats.Cooling)
	if stats.OutOfRange > 0 {
		msg += fmt.Sprintf("; %d held addresses are outside the edited ranges", stats.OutOfRange)
	}
	msg += ")"
	if stats.Free.IsZero() {
		setPoolReady(pool, true, ipamv1.PoolFullReason, "every address is held: "+msg+"; claims wait for a release or a wider pool", now)
	} else {
		setPoolReady(pool, true, ipamv1.PoolAvailableReason, msg, now)
	}
	allocationsChanged := !sameAllocations(st.index, pool.Status.Allocations)
	if !allocationsChanged && equality.Semantic.DeepEqual(before.Status, pool.Status) {
		return ctrl.Result{}
	}
	if wait := r.statusInterval(st.index.Held()) - now.Sub(st.lastStatus); wait > 0 && !changedReadyReason(before, pool) {
		*pool = *before
		return ctrl.Result{RequeueAfter: wait}
	}
	if allocationsChanged {
		allocations := st.index.Allocations()
		indexes := make(map[string]ipamv1.IPAddressStr, len(allocations))
		for _, a := range allocations {
			indexes[a.Owner] = ipamv1.IPAddressStr(a.Addr.String())
		}
		pool.Status.Allocations = indexes
		pool.Status.LastUpdated = ptr.To(metav1.NewTime(now))
	}
	// Written by writePool at the end of the reconcile, which records when.
	return ctrl.Result{}
}

// sameAllocations reports whether the status lists exactly the index's allocations, without
// listing them or writing each address as text (most reconciles of a large pool change none).
func sameAllocations(idx *ipam.Index, status map[string]ipamv1.IPAddressStr) bool {
	if idx.Held() != len(status) {
		return false
	}
	for owner, s := range status {
		held, ok := idx.Lookup(owner)
		if !ok {
			return false
		}
		addr, err := netip.ParseAddr(string(s))
		if err != nil || addr != held {
			return false
		}
		if !addr.Is4() && string(s) != addr.String() {
			return false // an IPv6 address has several texts; the status holds the canonical one
		}
	}
	return true
}

// statusInterval is how long status writes of a pool listing allocations addresses are spaced.
func (r *Reconciler) statusInterval(allocations int) time.Duration {
	if r.StatusInterval > 0 {
		return r.StatusInterval
	}
	d := time.Duration(allocations/statusBatch) * time.Second
	return min(max(d, minStatusInterval), maxStatusInterval)
}

// writePool writes what a reconcile changed (before is the pool as read) in at most two merge
// patches: its metadata (the finalizer, the releases annotation), then its status. The status is
// this controller's alone, so one patch of it, conditions included, loses nothing; Cluster API's
// patch helper would send the Ready condition in a request of its own, one write more for every
// status change of a pool that thousands of claims change.
//
// Neither patch is computed from the whole pool: the metadata patch compares the metadata alone,
// and the status patch names only the allocations that changed (statusPatch). Marshalling and
// diffing the whole status, an entry per allocation, on every write made each write cost what
// the pool holds.
func (r *Reconciler) writePool(ctx context.Context, before, pool *ipamv1.IPPool) error {
	if !equality.Semantic.DeepEqual(before.ObjectMeta, pool.ObjectMeta) {
		after := &ipamv1.IPPool{TypeMeta: pool.TypeMeta, ObjectMeta: pool.ObjectMeta}
		if err := r.Client.Patch(ctx, after, client.MergeFrom(&ipamv1.IPPool{TypeMeta: before.TypeMeta, ObjectMeta: before.ObjectMeta}), fieldOwner); err != nil {
			if apierrors.IsNotFound(err) && len(pool.Finalizers) == 0 {
				return nil // the last finalizer went: the pool is gone
			}
			return fmt.Errorf("writing IPPool %s (finalizer, released addresses): %w", pool.Name, err)
		}
		pool.ObjectMeta = after.ObjectMeta // the stored metadata: its resourceVersion
	}
	if equality.Semantic.DeepEqual(before.Status, pool.Status) {
		return nil
	}
	data, err := statusPatch(&before.Status, &pool.Status)
	if err != nil {
		return fmt.Errorf("writing IPPool status: %w", err)
	}
	if err := r.Client.Status().Patch(ctx, pool, client.RawPatch(types.MergePatchType, data), fieldOwner); err != nil {
		return fmt.Errorf("writing IPPool status: %w", client.IgnoreNotFound(err))
	}
	if st := r.states.get(client.ObjectKeyFromObject(pool)); st != nil {
		st.mu.Lock()
		st.lastStatus = r.now()
		st.mu.Unlock()
	}
	return nil
}

// copyPool copies a pool for a reconcile to change, sharing its allocations with the original: no
// reconcile changes that map in place (setPoolStatus replaces it), so the copy costs the pool's
// metadata and conditions, not an entry per allocation.
func copyPool(p *ipamv1.IPPool) *ipamv1.IPPool {
	allocations := p.Status.Allocations
	shallow := *p
	shallow.Status.Allocations = nil
	out := shallow.DeepCopy()
	out.Status.Allocations = allocations
	return out
}

// statusPatch is the JSON merge patch that turns the status before into after, as
// client.MergeFrom computes it, without marshalling the allocations: they are compared here and
// only the changed ones written (null for one released).
func statusPatch(before, after *ipamv1.IPPoolStatus) ([]byte, error) {
	b, a := *before, *after
	b.Allocations, a.Allocations = nil, nil
	bj, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	aj, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	rest, err := jsonpatch.CreateMergePatch(bj, aj)
	if err != nil {
		return nil, err
	}
	status := map[string]any{}
	if err := json.Unmarshal(rest, &status); err != nil {
		return nil, err
	}
	if diff, changed := allocationsDiff(before.Allocations, after.Allocations); changed {
		status["indexes"] = diff
	}
	return json.Marshal(map[string]any{"status": status})
}

// allocationsDiff is the merge patch of status.indexes: absent when empty (omitempty), so a map
// emptied is removed (null) and one filled from empty is written whole.
func allocationsDiff(before, after map[string]ipamv1.IPAddressStr) (any, bool) {
	switch {
	case len(before) == 0 && len(after) == 0:
		return nil, false
	case len(after) == 0:
		return nil, true
	case len(before) == 0:
		return after, true
	}
	diff := map[string]any{}
	for k, v := range after {
		if old, ok := before[k]; !ok || old != v {
			diff[k] = v
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			diff[k] = nil
		}
	}
	return diff, len(diff) > 0
}

func setPoolReady(pool *ipamv1.IPPool, ready bool, reason, msg string, now time.Time) {
	status := metav1.ConditionFalse
	if ready {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&pool.Status.Conditions, readyCondition(status, reason, msg, pool.Generation, now))
}

// changedReady reports whether the Ready condition's status, reason or message changed: the
// moments worth an event.
func changedReady(before, after *ipamv1.IPPool) bool {
	b := meta.FindStatusCondition(before.Status.Conditions, ipamv1.ReadyCondition)
	a := meta.FindStatusCondition(after.Status.Conditions, ipamv1.ReadyCondition)
	return b == nil || a == nil || b.Status != a.Status || b.Reason != a.Reason || b.Message != a.Message
}

func changedReadyReason(before, after *ipamv1.IPPool) bool {
	b := meta.FindStatusCondition(before.Status.Conditions, ipamv1.ReadyCondition)
	a := meta.FindStatusCondition(after.Status.Conditions, ipamv1.ReadyCondition)
	return b == nil || a == nil || b.Status != a.Status || b.Reason != a.Reason
}
