// Package pause answers, for every metalwire controller alike, Cluster API's question: has the
// user (or `clusterctl move`) asked to leave this object alone? An object is paused when it
// carries the cluster.x-k8s.io/paused annotation, or when the Cluster it belongs to has
// spec.paused or that annotation. While paused a controller writes nothing: no finalizer, no
// status, no children; it picks up where it stopped once unpaused.
//
// This is the one rule: the reconcilers' skeleton (internal/controller/skeleton) applies it, and
// writes Condition with the rest of a reconcile's status. Cluster API's
// paused.EnsurePausedCondition is not used: it writes the condition in a patch of its own.
package pause

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/metalwire/metalwire/internal/controller/mapping"
)

// ClusterName is the Cluster an object belongs to: its cluster.x-k8s.io/cluster-name label,
// else the first non-empty fallback (a spec.clusterName, a parent's label); "" for none.
func ClusterName(obj client.Object, fallbacks ...string) string {
	if name := obj.GetLabels()[clusterv1.ClusterNameLabel]; name != "" {
		return name
	}
	for _, name := range fallbacks {
		if name != "" {
			return name
		}
	}
	return ""
}

// ClusterPaused reports whether a Cluster asks its objects to be left alone.
func ClusterPaused(cluster *clusterv1.Cluster) bool {
	return ptr.Deref(cluster.Spec.Paused, false) || annotations.HasPaused(cluster)
}

// ClusterToObjects maps a Cluster to the objects of one kind in its namespace that belong to
// it (by ClusterName with clusterOf's fallbacks), so that they are reconciled again when the
// Cluster is unpaused. It lists from the cache; Clusters change rarely.
func ClusterToObjects(c client.Reader, newList func() client.ObjectList, clusterOf func(client.Object) string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		return mapping.Listed(ctx, c, newList(), "the objects of Cluster "+o.GetName(),
			func(obj client.Object) bool { return clusterOf(obj) == o.GetName() }, client.InNamespace(o.GetNamespace()))
	}
}

// Transitions passes only Cluster events that change whether the Cluster is paused (and
// creations), so a controller watching Clusters for pause wakes only then.
func Transitions() builder.Predicates {
	return builder.WithPredicates(predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldC, okOld := e.ObjectOld.(*clusterv1.Cluster)
			newC, okNew := e.ObjectNew.(*clusterv1.Cluster)
			return okOld && okNew && ClusterPaused(oldC) != ClusterPaused(newC)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	})
}

// Condition is Cluster API's Paused condition for obj, a kind: True (reason Paused, the message
// naming what pauses it) when cluster or obj asks to be left alone, else False (NotPaused). A
// controller sets it on the object it is about to patch anyway, so that saying "not paused"
// costs no write of its own (Cluster API's EnsurePausedCondition patches the object for it
// alone, one more write per object in a scale-up).
func Condition(cluster *clusterv1.Cluster, obj client.Object, kind string) metav1.Condition {
	var why []string
	if cluster != nil && ClusterPaused(cluster) {
		why = append(why, fmt.Sprintf("Cluster %s is paused (spec.paused or the %s annotation)", cluster.Name, clusterv1.PausedAnnotation))
	}
	if annotations.HasPaused(obj) {
		why = append(why, fmt.Sprintf("%s has the %s annotation", kind, clusterv1.PausedAnnotation))
	}
	c := metav1.Condition{Type: clusterv1.PausedCondition, Status: metav1.ConditionFalse, Reason: clusterv1.NotPausedReason,
		ObservedGeneration: obj.GetGeneration()}
	if len(why) > 0 {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, clusterv1.PausedReason, strings.Join(why, "; ")
	}
	return c
}
