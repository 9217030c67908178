// Package watchfilter is Cluster API's --watch-filter for metalwire's controllers: with a value
// set, a controller acts only on objects labelled cluster.x-k8s.io/watch-filter=<value>, so that
// several managers can share one management cluster, each with its own set of clusters.
//
// Every controller of the manager honours it, each on its own kind. The objects metalwire
// creates for a labelled object (a Metal3Machine's Metal3DataClaim, the claim's Metal3Data, the
// Metal3Data's address claims) carry the label from their creation on (Carry), so the chain a
// labelled machine starts is served to its end by the same manager.
package watchfilter

import (
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Label is the label the filter reads: cluster.x-k8s.io/watch-filter.
const Label = clusterv1.WatchLabel

// Matches says whether obj is this manager's to reconcile: always with no filter, else when its
// cluster.x-k8s.io/watch-filter label carries the value.
func Matches(obj client.Object, value string) bool {
	return value == "" || obj.GetLabels()[Label] == value
}

// Predicate passes only the events of objects that Match; a controller puts it on its own kind
// (For) so that other managers' objects do not even reach its queue. Reconcile still checks
// Matches, since events of watched kinds map to objects of any label.
func Predicate(value string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool { return Matches(obj, value) })
}

// Carry copies from's watch-filter label, when it has one, into labels (made if nil) and returns
// them: an object created for from belongs to the same manager. It is applied whatever the
// manager's own filter, as CAPM3 copies its labels down the chain, so that a manager started
// later with a filter finds the objects already labelled.
func Carry(labels map[string]string, from client.Object) map[string]string {
	v, ok := from.GetLabels()[Label]
	if !ok {
		return labels
	}
	if labels == nil {
		labels = map[string]string{}
	}
	labels[Label] = v
	return labels
}
