package ippool

import (
	"context"

	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/fieldindex"
)

// Field index names. Each maps an object to the pool (or pool prefix, or cluster) it belongs
// to, so a pool reconcile reads only its own objects from the cache. A pool's claims are not
// read through an index but from its members (members.go).
const (
	addressPoolField  = "spec.pool.name"                // IPAddress -> pool name
	addressClaimField = "ippool.claimKey"               // IPAddress -> "<pool>/<claim>"
	capiClusterField  = "ippool.clusterName"            // IPAddressClaim -> cluster name
	namePrefixField   = "spec.namePrefix"               // IPPool -> namePrefix
	capiAPIVersion    = "ipam.cluster.x-k8s.io/v1beta2" // apiVersion of Cluster API IPAM objects
	metal3APIVersion  = "ipam.metal3.io/v1alpha1"       // apiVersion of our IPAM objects
	ipPoolKind        = "IPPool"                        // kind named in a Cluster API poolRef
	ipClaimKind       = "IPClaim"                       // kind recorded in IPAddress.spec.claim
	capiClaimKind     = "IPAddressClaim"                // kind recorded for Cluster API claims
	ipamGroup         = "ipam.metal3.io"                // apiGroup named in a Cluster API poolRef
	fieldOwner        = client.FieldOwner("metalwire")  // manager name on our writes
)

func claimKey(pool, claim string) string { return pool + "/" + claim }

// isOurPool reports whether a Cluster API claim's poolRef names an IPPool of ipam.metal3.io.
func isOurPool(ref capiipamv1.IPPoolReference) bool {
	return ref.APIGroup == ipamGroup && ref.Kind == ipPoolKind && ref.Name != ""
}

// capiClusterName is the Cluster a Cluster API claim belongs to: spec.clusterName, or the
// (deprecated) cluster-name label.
func capiClusterName(c *capiipamv1.IPAddressClaim) string {
	if c.Spec.ClusterName != "" {
		return c.Spec.ClusterName
	}
	return c.Labels[ipamv1.ClusterNameLabel]
}

// addIndexes registers the field indexes with the manager's cache.
func addIndexes(ctx context.Context, idx client.FieldIndexer) error {
	return fieldindex.Register(ctx, idx,
		fieldindex.Index{Object: &ipamv1.IPAddress{}, Field: addressPoolField, Keys: func(o client.Object) []string {
			return []string{o.(*ipamv1.IPAddress).Spec.Pool.Name}
		}},
		fieldindex.Index{Object: &ipamv1.IPAddress{}, Field: addressClaimField, Keys: func(o client.Object) []string {
			a := o.(*ipamv1.IPAddress)
			return []string{claimKey(a.Spec.Pool.Name, a.Spec.Claim.Name)}
		}},
		fieldindex.Index{Object: &capiipamv1.IPAddressClaim{}, Field: capiClusterField, Keys: func(o client.Object) []string {
			if name := capiClusterName(o.(*capiipamv1.IPAddressClaim)); name != "" {
				return []string{name}
			}
			return nil
		}},
		fieldindex.Index{Object: &ipamv1.IPPool{}, Field: namePrefixField, Keys: func(o client.Object) []string {
			return []string{o.(*ipamv1.IPPool).Spec.NamePrefix}
		}},
	)
}
