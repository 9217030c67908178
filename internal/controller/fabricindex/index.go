// Package fabricindex holds the field indexes the fabric controllers (clusternetwork,
// networkdevice) and the Metal3Machine controller share, registered once per manager.
package fabricindex

import (
	"context"
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
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

var (
	mu   sync.Mutex
	done = map[ctrl.Manager]bool{}
)

// Setup registers the indexes on mgr; calling it again for the same manager does nothing.
func Setup(ctx context.Context, mgr ctrl.Manager) error {
	mu.Lock()
	defer mu.Unlock()
	if done[mgr] {
		return nil
	}
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &netv1.NIC{}, NICByNetworkDevice, func(o client.Object) []string {
		return []string{o.(*netv1.NIC).Spec.NetworkDeviceRef}
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &netv1.NIC{}, NICByNode, func(o client.Object) []string {
		return []string{o.(*netv1.NIC).Spec.Node}
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &netv1.ClusterNetwork{}, ClusterNetworkByNetworkDevice, func(o client.Object) []string {
		return []string{o.(*netv1.ClusterNetwork).Spec.NetworkDeviceRef}
	}); err != nil {
		return err
	}
	done[mgr] = true
	return nil
}
