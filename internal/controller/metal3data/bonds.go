package metal3data

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	networkv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/fabricindex"
	"github.com/metalwire/metalwire/pkg/render"
)

// resolveBonds reads, for every bond of the template that takes its members from a
// ClusterNetwork network (bondFrom), the host's cards the fabric bonded for it (by MAC, from
// the host's NIC object) and the bond's mode. A ClusterNetwork or network that does not exist,
// a network that is not bonded, or a bonded card without a MAC is an error naming the field; a
// host not given the network yet is a wait.
func (r *Reconciler) resolveBonds(ctx context.Context, tmpl *infrav1.Metal3DataTemplate, host *bmov1.BareMetalHost) (map[render.VLANRef]render.FabricBond, *blocker, error) {
	if tmpl.Spec.NetworkData == nil {
		return nil, nil, nil
	}
	var out map[render.VLANRef]render.FabricBond
	var nics *networkv1.NICList
	for i, b := range ptr.Deref(tmpl.Spec.NetworkData.Links, infrav1.NetworkDataLinks{}).Bonds {
		if b.BondFrom == nil {
			continue
		}
		ref := render.VLANRef{ClusterNetwork: b.BondFrom.ClusterNetwork, Network: b.BondFrom.Network}
		if _, done := out[ref]; done {
			continue
		}
		field := fmt.Sprintf("Metal3DataTemplate %s spec.networkData.links.bonds[%d].bondFrom", tmpl.Name, i)
		cn, block, err := r.sourceClusterNetwork(ctx, tmpl.Namespace, ref.ClusterNetwork, field, infrav1.DataBondSourceNotFoundReason)
		if cn == nil {
			return nil, block, err
		}
		idx := slices.IndexFunc(cn.Spec.Networks, func(n networkv1.Network) bool { return n.Name == ref.Network })
		switch {
		case idx < 0:
			return nil, failWith(infrav1.DataBondSourceNotFoundReason,
				"%s.network: ClusterNetwork %s has no network %s; its networks: %s", field, cn.Name, ref.Network, strings.Join(networkNames(cn), ", ")), nil
		case cn.Spec.Networks[idx].LinkAggregation < 2:
			return nil, failWith(infrav1.DataBondSourceNotFoundReason,
				"%s.network: network %s of ClusterNetwork %s has linkAggregation %d, so the switch bonds nothing; set linkAggregation 2 or more, or give the bond bondLinks",
				field, ref.Network, cn.Name, cn.Spec.Networks[idx].LinkAggregation), nil
		}
		if nics == nil {
			nics = &networkv1.NICList{}
			if err := r.Client.List(ctx, nics, client.InNamespace(host.Namespace), client.MatchingFields{fabricindex.NICByNode: host.Name}); err != nil {
				return nil, nil, fmt.Errorf("listing the NICs of host %s: %w", host.Name, err)
			}
		}
		bond, block := fabricBond(field, host.Name, cn.Name, ref.Network, nics.Items)
		if block != nil {
			return nil, block, nil
		}
		if out == nil {
			out = map[render.VLANRef]render.FabricBond{}
		}
		out[ref] = bond
	}
	return out, nil, nil
}

// fabricBond is the bond the fabric made of a host's cards for a network, from the status of
// the host's NIC object in that ClusterNetwork.
func fabricBond(field, host, cn, network string, nics []networkv1.NIC) (render.FabricBond, *blocker) {
	for i := range nics {
		bond, err := render.FabricBondOf(&nics[i], cn, network)
		if err != nil {
			return bond, failWith(infrav1.DataBondSourceNotFoundReason, "%s: %s", field, err.Error())
		}
		if len(bond.MACs) > 0 {
			return bond, nil
		}
	}
	return render.FabricBond{}, waitFor(infrav1.DataWaitingForBondReason,
		"%s: ClusterNetwork %s has not bonded host %s's cards for network %s yet (see its status.states); the data is rendered once it has", field, cn, host, network)
}
