// Package fabricindex holds the field indexes the fabric controllers (clusternetwork,
// networkdevice) and the Metal3Machine controller share, registered once per manager.
package fabricindex

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/fieldindex"
)

// Index names.
const (
	// NICByNetworkDevice keys a NIC by spec.networkDeviceRef.
	NICByNetworkDevice = "fabric.nic.networkDeviceRef"
	// NICByNode keys a NIC by spec.node (its BareMetalHost).
	NICByNode = "fabric.nic.node"
	// ClusterNetworkByNetworkDevice keys a ClusterNetwork by spec.networkDeviceRef.
	ClusterNetworkByNetworkDevice = "fabric.clusternetwork.networkDeviceRef"
)

// shared are the indexes, registered once per manager by whichever controller is set up first.
var shared = fieldindex.Set{Indexes: []fieldindex.Index{
	{Object: &netv1.NIC{}, Field: NICByNetworkDevice, Keys: func(o client.Object) []string {
		return []string{o.(*netv1.NIC).Spec.NetworkDeviceRef}
	}},
	{Object: &netv1.NIC{}, Field: NICByNode, Keys: func(o client.Object) []string {
		return []string{o.(*netv1.NIC).Spec.Node}
	}},
	{Object: &netv1.ClusterNetwork{}, Field: ClusterNetworkByNetworkDevice, Keys: func(o client.Object) []string {
		return []string{o.(*netv1.ClusterNetwork).Spec.NetworkDeviceRef}
	}},
}}

// Setup registers the indexes on mgr; calling it again for the same manager does nothing.
func Setup(ctx context.Context, mgr ctrl.Manager) error {
	return shared.Setup(ctx, mgr.GetFieldIndexer())
}
