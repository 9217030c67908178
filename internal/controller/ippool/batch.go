package ippool

import (
	"cmp"
	"context"
	"errors"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/pkg/ipam"
)

// job is the work for one claim in a batch: release its address, report why it has none, or
// write the address the index gave it.
type job struct {
	orig claim // the cached object: read only
	c    claim // a copy, changed and written

	release bool
	// failReason and failMessage are the status to report instead of an address.
	failReason, failMessage string

	addr netip.Addr
	// fresh: the index assigned addr in this batch, so it is forgotten if it cannot be written.
	fresh bool
	// checkRecorded: the claim records an address the index gives to someone else; the API
	// server decides whether the claim holds it.
	checkRecorded bool
}

// batch is one pool reconcile's work: planned under the pool lock, written by workers.
type batch struct {
	r    *Reconciler
	pool *ipamv1.IPPool
	st   *poolState // nil when the pool hands out nothing

	jobs      []*job
	conflicts atomic.Int32

	mu       sync.Mutex
	errs     []error
	nextFree time.Time
}

func (b *batch) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errs = append(b.errs, err)
}

func (b *batch) err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return errors.Join(b.errs...)
}

func (b *batch) retryAt(t time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !t.IsZero() && (b.nextFree.IsZero() || t.Before(b.nextFree)) {
		b.nextFree = t
	}
}

func (b *batch) addressName(addr netip.Addr) string {
	return ipamv1.IPAddressName(b.pool.Spec.NamePrefix, addr.String())
}

// plan picks the claims that need work and allocates the pending ones in the index, in one pass
// under the pool lock: claims that already record an address first (they finish an allocation
// begun earlier), then oldest first, so that sequential allocation follows creation order.
func (b *batch) plan(ctx context.Context, claims []claim) {
	var pending []claim
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	for _, c := range claims {
		if b.r.pausedClaim(ctx, c) {
			continue
		}
		name := c.object().GetName()
		if deleting(c.object()) {
			_, held := b.st.index.Lookup(name)
			_, recorded := recordedAddress(c)
			if hasFinalizer(c) || held || recorded {
				b.jobs = append(b.jobs, &job{orig: c, c: c.deepCopy(), release: true})
			}
			continue
		}
		if addr, held := b.st.index.Lookup(name); held && c.served(b.addressName(addr)) {
			continue
		}
		pending = append(pending, c)
	}
	slices.SortFunc(pending, func(x, y claim) int {
		_, rx := recordedAddress(x)
		_, ry := recordedAddress(y)
		if rx != ry {
			if rx {
				return -1
			}
			return 1
		}
		ox, oy := x.object(), y.object()
		if c := ox.GetCreationTimestamp().Compare(oy.GetCreationTimestamp().Time); c != 0 {
			return c
		}
		return cmp.Compare(ox.GetName(), oy.GetName())
	})
	now := b.r.now()
	for _, c := range pending {
		j := &job{orig: c, c: c.deepCopy()}
		name := c.object().GetName()
		switch held, ok := b.st.index.Lookup(name); {
		case ok:
			j.addr = held
		default:
			if rec, ok := recordedAddress(c); ok {
				if b.st.index.AllocateSpecific(name, rec, now) == nil {
					j.addr, j.fresh = rec, true
				} else {
					j.checkRecorded = true
				}
			} else {
				b.allocateLocked(j, now)
			}
		}
		b.jobs = append(b.jobs, j)
	}
}

// allocateLocked gives j's claim an address: the one it asks for, or the pool's next. Failures
// become the status to report. Called with the pool lock held.
func (b *batch) allocateLocked(j *job, now time.Time) {
	name := j.c.object().GetName()
	if want, ok := requestedAddress(j.c); ok {
		addr, err := netip.ParseAddr(want)
		if err != nil {
			j.failReason = ipamv1.RequestedAddressInvalidReason
			j.failMessage = "annotation " + ipamv1.IPAddressAnnotation + ": " + quote(want) + " is not an IP address; write one like 192.168.0.10 or 2001:db8::10"
			return
		}
		if err := b.st.index.AllocateSpecific(name, addr, now); err != nil {
			j.failReason, j.failMessage = ipamv1.RequestedAddressUnavailableReason, "annotation "+ipamv1.IPAddressAnnotation+": "+err.Error()
			var ae *ipam.AddressError
			if errors.As(err, &ae) {
				if errors.Is(err, ipam.ErrOwnerConflict) {
					j.failReason = ipamv1.PreAllocationConflictReason
				}
				b.retryAt(ae.Until)
			}
			return
		}
		j.addr, j.fresh = addr.Unmap(), true
		return
	}
	addr, err := b.st.index.Allocate(name, now)
	if err != nil {
		j.failReason, j.failMessage = ipamv1.AllocationFailedReason, err.Error()
		var ex *ipam.ExhaustedError
		if errors.As(err, &ex) {
			j.failReason = ipamv1.PoolExhaustedReason
			b.retryAt(ex.NextFree)
		} else {
			var ae *ipam.AddressError
			if errors.As(err, &ae) {
				j.failReason = ipamv1.PreAllocationConflictReason
			}
		}
		return
	}
	j.addr, j.fresh = addr, true
}

// planReleasesOnly is the work for a pool that hands out nothing: release the addresses of
// deleted claims, and tell waiting claims why they wait.
func (b *batch) planReleasesOnly(claims []claim, reason, message string) {
	for _, c := range claims {
		switch {
		case deleting(c.object()):
			_, recorded := recordedAddress(c)
			if hasFinalizer(c) || recorded {
				b.jobs = append(b.jobs, &job{orig: c, c: c.deepCopy(), release: true})
			}
		case c.readyReason() == ipamv1.AllocatedReason:
			// Keeps its address; releases still work.
		default:
			b.jobs = append(b.jobs, &job{orig: c, c: c.deepCopy(), failReason: reason, failMessage: message})
		}
	}
}

// run does the jobs with at most Workers at once.
func (b *batch) run(ctx context.Context) {
	if len(b.jobs) == 0 {
		return
	}
	workers := b.r.Workers
	if workers <= 0 {
		workers = defaultWorkers
	}
	workers = min(workers, len(b.jobs))
	queue := make(chan *job)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range queue {
				b.do(ctx, j)
			}
		})
	}
	for _, j := range b.jobs {
		queue <- j
	}
	close(queue)
	wg.Wait()
}

func (b *batch) do(ctx context.Context, j *job) {
	log := ctrl.LoggerFrom(ctx).WithValues("claim", j.c.object().GetName(), "kind", j.c.kind())
	ctx = ctrl.LoggerInto(ctx, log)
	var err error
	switch {
	case j.release:
		err = b.release(ctx, j)
	case j.failReason != "":
		err = b.report(ctx, j)
	default:
		err = b.serve(ctx, j)
	}
	if err != nil {
		log.Error(err, "claim not done; retried")
		b.fail(err)
	}
}

// pausedClaim reports whether the claim is to be left alone (Cluster API pause).
func (r *Reconciler) pausedClaim(ctx context.Context, c claim) bool {
	cc, ok := c.(capiClaim)
	if !ok {
		return false
	}
	name := capiClusterName(cc.IPAddressClaim)
	cluster := &clusterv1.Cluster{}
	found := false
	if name != "" {
		found = r.Client.Get(ctx, types.NamespacedName{Namespace: cc.Namespace, Name: name}, cluster) == nil
	}
	return pausedCAPIClaim(cc.IPAddressClaim, cluster, found)
}

func quote(s string) string { return "\"" + s + "\"" }
