package devenv

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// selectProvisionedHostsStandIn is a STAND-IN for the Metal3Machine controller's part of the
// fabric, which is not built yet: it labels the NIC object of every host a machine uses
// network.metalwire.io/selected-for=<the namespace's only ClusterNetwork>, as the machine
// controller will when Metal3Cluster.spec.clusterNetwork is wired, then gives the fabric
// controller a moment to configure the ports. A NIC already labelled is left alone.
//
// Delete this file (and its call in printFabric) once the Metal3Machine controller selects hosts
// through the ClusterNetwork itself.
func selectProvisionedHostsStandIn(ctx context.Context, c client.Client, ns string, hosts []HostRow, timeout time.Duration) error {
	networks := &networkv1.ClusterNetworkList{}
	if err := c.List(ctx, networks, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing ClusterNetworks: %w", err)
	}
	if len(networks.Items) != 1 {
		return nil // which one a host joins is the machine controller's to say
	}
	cn := networks.Items[0].Name
	nics := &networkv1.NICList{}
	if err := c.List(ctx, nics, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing NICs: %w", err)
	}
	inUse := map[string]bool{}
	for _, h := range hosts {
		inUse[h.Host] = h.Machine != ""
	}
	var selected []string
	for i := range nics.Items {
		nic := &nics.Items[i]
		if !inUse[nic.Spec.Node] || nic.Labels[networkv1.SelectedForLabel] != "" {
			continue
		}
		patch := client.MergeFrom(nic.DeepCopy())
		if nic.Labels == nil {
			nic.Labels = map[string]string{}
		}
		nic.Labels[networkv1.SelectedForLabel] = cn
		if err := c.Patch(ctx, nic, patch); err != nil {
			return fmt.Errorf("selecting NIC %s for ClusterNetwork %s: %w", nic.Name, cn, err)
		}
		selected = append(selected, nic.Spec.Node)
	}
	deadline := time.Now().Add(timeout)
	for len(selected) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		got := &networkv1.ClusterNetwork{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cn}, got); err == nil && allReady(got, selected) {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

func allReady(cn *networkv1.ClusterNetwork, hosts []string) bool {
	for _, h := range hosts {
		if cn.Status.States[h].State != networkv1.HostReady {
			return false
		}
	}
	return true
}
