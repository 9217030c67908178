// Package dataindex holds the field indexes the data-templating controllers (metal3datatemplate,
// metal3dataclaim, metal3data) share, registered once per manager, so that none of them imports
// another to find the index it reads.
package dataindex

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/fieldindex"
)

// Index names. They are prefixed so they cannot clash with indexes other controllers register
// on the same kinds.
const (
	// DataByTemplate keys a Metal3Data by spec.template.name.
	DataByTemplate = "metalwire.data.spec.template.name"
	// DataByClaim keys a Metal3Data by spec.claim.name, which is also the Metal3Machine's name:
	// the machine controller names the claim after its machine.
	DataByClaim = "metalwire.data.spec.claim.name"
	// ClaimByTemplate keys a Metal3DataClaim by spec.template.name.
	ClaimByTemplate = "metalwire.dataclaim.spec.template.name"
	// MachineByHost keys a Metal3Machine by the host it holds, "<namespace>/<name>" as the
	// metal3.io/BareMetalHost annotation writes it.
	MachineByHost = "metalwire.data.metal3machine.host"
	// AddressClaimByData keys an IPClaim or IPAddressClaim by the names of the Metal3Data that
	// own it.
	AddressClaimByData = "metalwire.data.owner"
)

// shared are the indexes, registered once per manager by whichever data controller is set up
// first.
var shared = fieldindex.Set{Indexes: []fieldindex.Index{
	{Object: &infrav1.Metal3Data{}, Field: DataByTemplate, Keys: func(o client.Object) []string {
		return nonEmpty(o.(*infrav1.Metal3Data).Spec.Template.Name)
	}},
	{Object: &infrav1.Metal3Data{}, Field: DataByClaim, Keys: func(o client.Object) []string {
		return nonEmpty(o.(*infrav1.Metal3Data).Spec.Claim.Name)
	}},
	{Object: &infrav1.Metal3DataClaim{}, Field: ClaimByTemplate, Keys: func(o client.Object) []string {
		return nonEmpty(o.(*infrav1.Metal3DataClaim).Spec.Template.Name)
	}},
	{Object: &infrav1.Metal3Machine{}, Field: MachineByHost, Keys: func(o client.Object) []string {
		return nonEmpty(o.GetAnnotations()[infrav1.HostAnnotation])
	}},
	{Object: &ipamv1.IPClaim{}, Field: AddressClaimByData, Keys: DataOwners},
	{Object: &capiipamv1.IPAddressClaim{}, Field: AddressClaimByData, Keys: DataOwners},
}}

// Setup registers the indexes with a manager's field indexer; calling it again for the same
// indexer does nothing, so every data controller calls it from its own setup.
func Setup(ctx context.Context, indexer client.FieldIndexer) error {
	return shared.Setup(ctx, indexer)
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// DataOwners lists the names of the Metal3Data among an object's owners.
func DataOwners(o client.Object) []string {
	var out []string
	for _, ref := range o.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if ref.Kind == "Metal3Data" && err == nil && gv.Group == infrav1.GroupVersion.Group {
			out = append(out, ref.Name)
		}
	}
	return out
}
