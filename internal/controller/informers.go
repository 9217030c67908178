package controller

import (
	"fmt"
	"slices"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// informerKinds are the kinds each group's controllers watch or read through the manager's
// cache. The manager makes their informers before it starts (manager.New), so that /readyz
// answers only once all of them have listed; a test runs every group and fails on a kind read
// through the cache that is missing here.
var informerKinds = map[Group]func() []client.Object{
	Infrastructure: func() []client.Object {
		return []client.Object{
			&infrav1.Metal3Cluster{}, &infrav1.Metal3Machine{}, &infrav1.Metal3MachineTemplate{},
			&infrav1.Metal3DataTemplate{}, &infrav1.Metal3DataClaim{}, &infrav1.Metal3Data{},
			&infrav1.Metal3Remediation{}, &clusterv1.Cluster{}, &clusterv1.Machine{},
			&bmov1.BareMetalHost{}, &corev1.Secret{}, &ipamv1.IPClaim{}, &ipamv1.IPAddress{},
			&capiipamv1.IPAddressClaim{}, &capiipamv1.IPAddress{}, &netv1.ClusterNetwork{}, &netv1.NIC{},
		}
	},
	IPAM: func() []client.Object {
		return []client.Object{&ipamv1.IPPool{}, &ipamv1.IPClaim{}, &ipamv1.IPAddress{}, &capiipamv1.IPAddressClaim{}, &clusterv1.Cluster{}}
	},
	Preprovisioning: func() []client.Object {
		return []client.Object{&bmov1.BareMetalHost{}, &infrav1.Metal3PreprovisioningDataTemplate{}, &ipamv1.IPClaim{}, &corev1.Secret{}}
	},
	Fabric: func() []client.Object {
		return []client.Object{&netv1.ClusterNetwork{}, &netv1.NetworkDevice{}, &netv1.NIC{}, &coordinationv1.Lease{}}
	},
}

// Informers lists, once each, the kinds whose informers the controllers of groups use.
func Informers(groups []Group) []client.Object {
	var out []client.Object
	seen := map[string]bool{}
	for _, g := range AllGroups {
		if f, ok := informerKinds[g]; ok && slices.Contains(groups, g) {
			for _, o := range f() {
				key := fmt.Sprintf("%T", o)
				if !seen[key] {
					seen[key] = true
					out = append(out, o)
				}
			}
		}
	}
	return out
}
