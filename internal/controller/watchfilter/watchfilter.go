// Package watchfilter is Cluster API's --watch-filter for metalwire's controllers: with a value
// set, a controller acts only on objects labelled cluster.x-k8s.io/watch-filter=<value>, so that
// several managers can share one management cluster, each with its own set of clusters.
package watchfilter

import (
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Matches says whether obj is this manager's to reconcile: always with no filter, else when its
// cluster.x-k8s.io/watch-filter label carries the value.
func Matches(obj client.Object, value string) bool {
	return value == "" || obj.GetLabels()[clusterv1.WatchLabel] == value
}

// Predicate passes only the events of objects that Match; a controller puts it on its own kind
// (For) so that other managers' objects do not even reach its queue. Reconcile still checks
// Matches, since events of watched kinds map to objects of any label.
func Predicate(value string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool { return Matches(obj, value) })
}
