package metal3data

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	networkv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/mapping"
	"github.com/metalwire/metalwire/pkg/render"
)

// resolveVLANs reads the VLAN id of every ClusterNetwork network the template's VLAN links take
// their tag from (vlanIDFrom). A ClusterNetwork or network that does not exist is an error
// naming the field; a network without an assigned VLAN yet is a wait.
func (r *Reconciler) resolveVLANs(ctx context.Context, tmpl *infrav1.Metal3DataTemplate) (map[render.VLANRef]int32, *blocker, error) {
	if tmpl.Spec.NetworkData == nil {
		return nil, nil, nil
	}
	var ids map[render.VLANRef]int32
	for i, v := range ptr.Deref(tmpl.Spec.NetworkData.Links, infrav1.NetworkDataLinks{}).Vlans {
		if v.VlanIDFrom == nil {
			continue
		}
		ref := render.VLANRef{ClusterNetwork: v.VlanIDFrom.ClusterNetwork, Network: v.VlanIDFrom.Network}
		if _, done := ids[ref]; done {
			continue
		}
		field := fmt.Sprintf("Metal3DataTemplate %s spec.networkData.links.vlans[%d].vlanIDFrom", tmpl.Name, i)
		cn, block, err := r.sourceClusterNetwork(ctx, tmpl.Namespace, ref.ClusterNetwork, field, infrav1.DataVLANSourceNotFoundReason)
		if cn == nil {
			return nil, block, err
		}
		id, known, assigned := networkVLAN(cn, ref.Network)
		switch {
		case !known:
			return nil, failWith(infrav1.DataVLANSourceNotFoundReason,
				"%s.network: ClusterNetwork %s has no network %s; its networks: %s", field, cn.Name, ref.Network, strings.Join(networkNames(cn), ", ")), nil
		case !assigned:
			return nil, waitFor(infrav1.DataWaitingForVLANReason,
				"%s: ClusterNetwork %s has not assigned network %s a VLAN id yet (see its VLANsAssigned condition); the data is rendered once it has", field, cn.Name, ref.Network), nil
		}
		if ids == nil {
			ids = map[render.VLANRef]int32{}
		}
		ids[ref] = id
	}
	return ids, nil, nil
}

// sourceClusterNetwork reads the ClusterNetwork a template field (vlanIDFrom, bondFrom) names; a
// missing one is a blocker with reason, naming the field.
func (r *Reconciler) sourceClusterNetwork(ctx context.Context, ns, name, field, reason string) (*networkv1.ClusterNetwork, *blocker, error) {
	cn := &networkv1.ClusterNetwork{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cn); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, failWith(reason, "%s.clusterNetwork: ClusterNetwork %s not found in namespace %s; create it, or fix the name", field, name, ns), nil
		}
		return nil, nil, err
	}
	return cn, nil, nil
}

// networkVLAN says whether the ClusterNetwork has the network, and the VLAN id it assigned it.
func networkVLAN(cn *networkv1.ClusterNetwork, network string) (id int32, known, assigned bool) {
	for _, n := range cn.Spec.Networks {
		known = known || n.Name == network
	}
	for _, n := range cn.Status.Networks {
		if n.Name == network {
			return n.VLANID, known, known
		}
	}
	return 0, known, false
}

func networkNames(cn *networkv1.ClusterNetwork) []string {
	names := make([]string, 0, len(cn.Spec.Networks))
	for _, n := range cn.Spec.Networks {
		names = append(names, n.Name)
	}
	return names
}

// clusterNetworkToData maps a ClusterNetwork to the Metal3Data of its namespace that are not
// rendered yet: one of them may wait for a VLAN it has now assigned.
func (r *Reconciler) clusterNetworkToData(ctx context.Context, o client.Object) []reconcile.Request {
	return mapping.Listed(ctx, r.Client, &infrav1.Metal3DataList{}, "the Metal3Data of ClusterNetwork "+o.GetName()+"'s namespace",
		func(d client.Object) bool {
			data, ok := d.(*infrav1.Metal3Data)
			return ok && !data.Status.Ready && data.DeletionTimestamp.IsZero()
		}, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy)
}
