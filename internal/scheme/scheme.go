// Package scheme builds the one runtime.Scheme that the manager, dev mode and tests share: every
// API group metalwire reads or writes.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1beta1 "github.com/metalwire/metalwire/api/infrastructure/v1beta1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// New returns a scheme with Kubernetes' built-in types, Cluster API's core and IPAM types, and
// metalwire's own API groups, with CAPM3's v1beta1 of the infrastructure kinds (served through
// conversion; metalwire's code reads and writes v1beta2 only).
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		clusterv1.AddToScheme,
		capiipamv1.AddToScheme,
		bmov1.AddToScheme,
		infrav1.AddToScheme,
		infrav1beta1.AddToScheme,
		ipamv1.AddToScheme,
		netv1.AddToScheme,
	} {
		utilruntime.Must(add(s))
	}
	return s
}
