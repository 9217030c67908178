package metal3data

import (
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/render"
)

const (
	dataKind          = "Metal3Data"
	claimKind         = "Metal3DataClaim"
	metal3MachineKind = "Metal3Machine"
	machineKind       = "Machine"
)

// AddressClaimName is the name of the IPClaim (or Cluster API IPAddressClaim) a Metal3Data makes
// in a pool: <metal3data>-<pool>, as CAPM3 names it. With IP reuse it is <host>-<pool>, so the
// claim — and, through the pool's preAllocations or a claim kept by pre-provisioning, the
// address — follows the BareMetalHost rather than the Metal3Data, which changes on every
// re-provisioning.
func AddressClaimName(dataName, hostName string, pool render.PoolRef, ipReuse bool) string {
	if ipReuse {
		return infrav1.HostClaimName(hostName, pool.Name)
	}
	return dataName + "-" + pool.Name
}

// hostKey parses the metal3.io/BareMetalHost annotation of a Metal3Machine, "<namespace>/<name>".
// A bare name is taken to be in the machine's namespace.
func hostKey(annotation, namespace string) (ns, name string, ok bool) {
	ns, name, set, err := infrav1.ParseHostAnnotation(annotation, namespace)
	return ns, name, set && err == nil
}
