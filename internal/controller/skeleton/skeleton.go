// Package skeleton is the one shape of a metalwire reconciler, Cluster API's: get the object (gone:
// done), the watch filter, pause, the finalizer persisted before any side effect, the phases, Ready
// summarised once from the phase's conditions (Kind.Ready), Finish, and one deferred patch of the
// object with its status and conditions. Input no retry can fix is a phase's
// reconcile.TerminalError; the patch still writes the condition saying what to fix.
//
// A reconciler states what differs for its kind in a Kind and calls Reconcile:
//
//	func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
//		return skeleton.Reconcile(ctx, req, skeleton.Kind[*infrav1.Metal3DataTemplate]{
//			Client: r.Client, WatchFilter: r.WatchFilter, New: func() *infrav1.Metal3DataTemplate { return &infrav1.Metal3DataTemplate{} },
//			Finalizer: infrav1.DataTemplateFinalizer,
//			Normal:    r.reconcileNormal, Delete: r.reconcileDelete,
//		})
//	}
//
// The skeleton adds no write of its own. A reconcile that changes nothing writes nothing (the
// patch helper compares with the object as read); the reconcile that adds the finalizer writes
// only the finalizer and ends, and the finalizer's own update event brings the object back. Cluster
// API's Paused condition, where a kind carries it, travels in the one patch rather than in a patch
// of its own as util/paused.EnsurePausedCondition would make (one more write for every object of a
// scale-up). Ready is summarised once from the conditions the Normal phase set (Kind.Ready), with
// Cluster API's conditions helpers. Cluster API's patch helper sends the changed conditions of a kind that has
// GetConditions/SetConditions in a request before the rest of the status; a kind written at scale
// whose status only its controller writes gives its own Write instead (Metal3Machine).
package skeleton

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/finalizers"
	"sigs.k8s.io/cluster-api/util/patch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/metalwire/metalwire/internal/controller/cacheread"
	"github.com/metalwire/metalwire/internal/controller/pause"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
)

// Scope is what one reconcile gathered before its phases run.
type Scope[T client.Object] struct {
	// Object is the object reconciled, as read from the cache; the phases change it in memory and
	// the skeleton patches it once at the end.
	Object T
	// Cluster is the Cluster the object belongs to, nil when it belongs to none (yet).
	Cluster *clusterv1.Cluster
}

// Phase is one step of a reconcile: reconcileNormal or reconcileDelete.
type Phase[T client.Object] func(ctx context.Context, s *Scope[T]) (ctrl.Result, error)

// Kind says what a reconcile of one kind does at each step of the skeleton.
type Kind[T client.Object] struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// WatchFilter is --watch-filter: with a value, only objects labelled
	// cluster.x-k8s.io/watch-filter=<value> are reconciled.
	WatchFilter string
	// New returns an empty object of the kind, to read into.
	New func() T

	// Gone, when set, runs when the object no longer exists: to forget what memory held of it.
	Gone func(ctx context.Context, key types.NamespacedName) (ctrl.Result, error)
	// Cluster finds the Cluster the object belongs to, for pause and for the phases. Nil: the
	// Cluster named by the object's cluster.x-k8s.io/cluster-name label, or by ClusterName.
	Cluster func(ctx context.Context, obj T) (*clusterv1.Cluster, error)
	// ClusterName, with Cluster nil, names the Cluster when the object has no cluster-name label
	// (a spec.clusterName).
	ClusterName func(obj T) string
	// PausedCondition: the kind carries Cluster API's Paused condition (an InfraCluster, an
	// InfraMachine, a remediation). It is set on every reconcile and written with the rest.
	PausedCondition bool
	// WhilePaused, when set, runs instead of the phases while the object is paused: to pause
	// what the object drives (its BareMetalHost). Nothing of the object but its Paused condition
	// is written.
	WhilePaused Phase[T]

	// Finalizer, when set, is persisted before Normal runs (Cluster API's EnsureFinalizer), so
	// that nothing Normal creates can outlive the object unseen.
	Finalizer string
	// Normal brings the object and what it owns in line with its spec.
	Normal Phase[T]
	// Delete releases what the object holds and removes the finalizer once it may go. Nil: a
	// deleted object is left to the garbage collector.
	Delete Phase[T]
	// Ready, when set, summarises the conditions Normal sets into the object's Ready condition,
	// once, after Normal and before Finish: no phase sets Ready by hand.
	Ready *Ready[T]
	// Finish, when set, runs once after the phase (and Ready's summary) and before the patch: it
	// may hold back what is not worth a write yet (a wait of a new object), asking for the
	// requeue in res.
	Finish func(s *Scope[T], res *ctrl.Result)
	// Written, when set, runs after the patch wrote the object: what this process must remember
	// of its write until the cache shows it (cachelag).
	Written func(s *Scope[T])
	// OwnedConditions are the condition types this controller alone writes: on a conflict the
	// patch helper keeps ours rather than refusing.
	OwnedConditions []string
	// Write, when set, writes what the reconcile changed (before is the object as read) in place
	// of Cluster API's patch helper. For a kind whose status this controller alone writes: the
	// helper writes conditions (of a kind that has conditions.Setter) in a request of their own,
	// then the rest of the status; one merge patch of the whole status loses nothing there and
	// saves that request for every object of a scale-up (Metal3Machine).
	Write func(ctx context.Context, before, after T) error
	// IgnoreGoneOnPatch: an object deleted while it was reconciled is no error of the patch
	// (a kind without a finalizer whose children are released elsewhere).
	IgnoreGoneOnPatch bool

	// Copy, with NewList and Write, reads the object without client.Get's deep copy: for a kind
	// with few objects in a namespace whose status grows with what it serves (an IPPool lists
	// every allocation), a deep copy on each reconcile, and another as Write's before, costs
	// what the pool holds on every reconcile. The object is found in the cache's own list
	// (cacheread.Shared) and Copy makes the reconcile's object and, again, Write's before: a copy
	// that may share with the cache what the reconcile only ever replaces, never changes in
	// place (a status map it rebuilds); the rest (metadata, conditions) it must copy.
	Copy func(T) T
	// NewList returns an empty list of the kind, for Copy's read.
	NewList func() client.ObjectList
}

// Reconcile runs one reconcile of req in the skeleton's order.
func Reconcile[T client.Object](ctx context.Context, req ctrl.Request, k Kind[T]) (_ ctrl.Result, reterr error) {
	obj, err := k.get(ctx, req.NamespacedName)
	if err != nil {
		if client.IgnoreNotFound(err) == nil && k.Gone != nil {
			return k.Gone(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !watchfilter.Matches(obj, k.WatchFilter) {
		return ctrl.Result{}, nil
	}
	cluster, err := k.cluster(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	s := &Scope[T]{Object: obj, Cluster: cluster}
	paused := annotations.HasPaused(obj) || (cluster != nil && pause.ClusterPaused(cluster))
	if paused && !k.PausedCondition {
		return ctrl.Result{}, nil
	}

	// Created after the finalizer's own write, so that the patch compares with what is stored.
	if k.Finalizer != "" && !paused {
		added, err := finalizers.EnsureFinalizer(ctx, k.Client, obj, k.Finalizer)
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer %s to %s: %w", k.Finalizer, req.NamespacedName, err)
		}
		if added {
			// The finalizer's update event brings the object back; its phases run then.
			return ctrl.Result{}, nil
		}
	}
	write, err := k.writer(obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() {
		err := write(ctx)
		if err == nil && k.Written != nil {
			k.Written(s)
		}
		if k.IgnoreGoneOnPatch {
			err = client.IgnoreNotFound(err)
		}
		reterr = errors.Join(reterr, err)
	}()

	if k.PausedCondition {
		setter, ok := any(obj).(conditions.Setter)
		if !ok {
			return ctrl.Result{}, fmt.Errorf("%T has no conditions to carry Cluster API's Paused condition", obj)
		}
		conditions.Set(setter, pause.Condition(cluster, obj, kindOf(k.Client, obj)))
		if paused {
			if k.WhilePaused != nil {
				return k.WhilePaused(ctx, s)
			}
			return ctrl.Result{}, nil
		}
	}

	var res ctrl.Result
	if obj.GetDeletionTimestamp().IsZero() {
		res, err = k.Normal(ctx, s)
		if k.Ready != nil {
			if serr := k.Ready.Summarise(obj); serr != nil {
				err = errors.Join(err, serr)
			}
		}
	} else if k.Delete != nil {
		res, err = k.Delete(ctx, s)
	}
	if k.Finish != nil {
		k.Finish(s, &res)
	}
	return res, err
}

// get reads the object: through client.Get, or, with Copy, from the cache's own list.
func (k Kind[T]) get(ctx context.Context, key types.NamespacedName) (T, error) {
	obj := k.New()
	if k.Copy == nil || k.NewList == nil || k.Write == nil {
		return obj, k.Client.Get(ctx, key, obj)
	}
	found, err := cacheread.Shared(ctx, k.Client, k.NewList(), key, func(o client.Object) {
		if cached, ok := o.(T); ok {
			obj = k.Copy(cached)
		}
	})
	if err != nil {
		return obj, err
	}
	if !found {
		gvk, _ := k.Client.GroupVersionKindFor(obj)
		return obj, apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, key.Name)
	}
	return obj, nil
}

// writer returns the one write of obj at the end of the reconcile: Kind.Write with a copy of obj
// as read, or Cluster API's patch helper.
func (k Kind[T]) writer(obj T) (func(context.Context) error, error) {
	if k.Write != nil {
		var before T
		if k.Copy != nil {
			before = k.Copy(obj)
		} else {
			var ok bool
			if before, ok = obj.DeepCopyObject().(T); !ok {
				return nil, fmt.Errorf("a copy of %T is not one", obj)
			}
		}
		return func(ctx context.Context) error { return k.Write(ctx, before, obj) }, nil
	}
	patcher, err := patch.NewHelper(obj, k.Client)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		return patcher.Patch(ctx, obj, patch.WithOwnedConditions{Conditions: k.owned()})
	}, nil
}

// cluster finds the Cluster obj belongs to: through Kind.Cluster, else by name.
func (k Kind[T]) cluster(ctx context.Context, obj T) (*clusterv1.Cluster, error) {
	if k.Cluster != nil {
		return k.Cluster(ctx, obj)
	}
	var fallback string
	if k.ClusterName != nil {
		fallback = k.ClusterName(obj)
	}
	name := pause.ClusterName(obj, fallback)
	if name == "" {
		return nil, nil
	}
	cluster := &clusterv1.Cluster{}
	if err := k.Client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, cluster); err != nil {
		if client.IgnoreNotFound(err) == nil || meta.IsNoMatchError(err) {
			// A Cluster that does not exist pauses nothing: the object is not (or no longer) part of one.
			return nil, nil
		}
		return nil, fmt.Errorf("reading Cluster %s/%s that %s belongs to: %w", obj.GetNamespace(), name, obj.GetName(), err)
	}
	return cluster, nil
}

// owned are the conditions the patch keeps ours on a conflict: the kind's, and Paused.
func (k Kind[T]) owned() []string {
	if !k.PausedCondition {
		return k.OwnedConditions
	}
	return append([]string{clusterv1.PausedCondition}, k.OwnedConditions...)
}

// kindOf names obj's kind for a message.
func kindOf(c client.Client, obj client.Object) string {
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		return gvk.Kind
	}
	return "object"
}
