package metal3data

import (
	"context"
	"sync"

	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// Field indexes on the manager's cache. The names are prefixed so they cannot clash with
// indexes other reconcilers register on the same kinds.
const (
	// DataByTemplateIndex keys a Metal3Data by spec.template.name.
	DataByTemplateIndex = "metalwire.data.spec.template.name"
	// DataByClaimIndex keys a Metal3Data by spec.claim.name, which is also the Metal3Machine's
	// name: the machine controller names the claim after its machine.
	DataByClaimIndex = "metalwire.data.spec.claim.name"
	// ClaimByTemplateIndex keys a Metal3DataClaim by spec.template.name.
	ClaimByTemplateIndex = "metalwire.dataclaim.spec.template.name"
	// MachineByHostIndex keys a Metal3Machine by the host it holds, "<namespace>/<name>" as
	// the metal3.io/BareMetalHost annotation writes it.
	MachineByHostIndex = "metalwire.data.metal3machine.host"
	// AddressClaimByDataIndex keys an IPClaim or IPAddressClaim by the names of the
	// Metal3Data that own it.
	AddressClaimByDataIndex = "metalwire.data.owner"
)

var (
	indexedMu sync.Mutex
	indexed   = map[client.FieldIndexer]bool{}
)

// AddIndexes registers the indexes with the manager's field indexer, once per indexer, so that
// each of the three reconcilers can call it from its own setup.
func AddIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	indexedMu.Lock()
	defer indexedMu.Unlock()
	if indexed[indexer] {
		return nil
	}
	for _, ix := range []struct {
		obj   client.Object
		field string
		fn    client.IndexerFunc
	}{
		{&infrav1.Metal3Data{}, DataByTemplateIndex, func(o client.Object) []string {
			return nonEmpty(o.(*infrav1.Metal3Data).Spec.Template.Name)
		}},
		{&infrav1.Metal3Data{}, DataByClaimIndex, func(o client.Object) []string {
			return nonEmpty(o.(*infrav1.Metal3Data).Spec.Claim.Name)
		}},
		{&infrav1.Metal3DataClaim{}, ClaimByTemplateIndex, func(o client.Object) []string {
			return nonEmpty(o.(*infrav1.Metal3DataClaim).Spec.Template.Name)
		}},
		{&infrav1.Metal3Machine{}, MachineByHostIndex, func(o client.Object) []string {
			return nonEmpty(o.GetAnnotations()[infrav1.HostAnnotation])
		}},
		{&ipamv1.IPClaim{}, AddressClaimByDataIndex, dataOwners},
		{&capiipamv1.IPAddressClaim{}, AddressClaimByDataIndex, dataOwners},
	} {
		if err := indexer.IndexField(ctx, ix.obj, ix.field, ix.fn); err != nil {
			return err
		}
	}
	indexed[indexer] = true
	return nil
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// dataOwners lists the Metal3Data among an object's owners.
func dataOwners(o client.Object) []string {
	var out []string
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == dataKind && isInfraGroup(ref.APIVersion) {
			out = append(out, ref.Name)
		}
	}
	return out
}
