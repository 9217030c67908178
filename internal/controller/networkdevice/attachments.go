package networkdevice

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// attachmentWants are the switch ports baremetal-operator's HostNetworkAttachments ask for,
// applied here with no Ironic: a card of a host that a cluster has claimed (spec.consumerRef)
// whose spec.networkInterfaces[] entry names an attachment. A card a ClusterNetwork assigned is
// the ClusterNetwork's; the attachment is then only reported (overridden). notes say what could
// not be applied and why, one line each.
func (r *Reconciler) attachmentWants(ctx context.Context, nd *netv1.NetworkDevice, nics []netv1.NIC) (wants []fabric.PortWant, overridden, notes []string, err error) {
	if !r.attachments {
		return nil, nil, nil, nil
	}
	for _, nic := range nics {
		host := &bmov1.BareMetalHost{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: nic.Namespace, Name: nic.Spec.Node}, host); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, nil, nil, fmt.Errorf("reading host %s: %w", nic.Spec.Node, err)
		}
		if host.Spec.ConsumerRef == nil {
			continue // not provisioned by a cluster: its ports stay idle
		}
		for _, ni := range host.Spec.NetworkInterfaces {
			ref := ni.HostNetworkAttachment
			if ref.Name == "" {
				continue
			}
			iface := cmp.Or(ni.MACAddress, ni.Name)
			i := cardOf(nic, ni)
			if i < 0 {
				notes = append(notes, fmt.Sprintf("host %s interface %s names HostNetworkAttachment %s, but NIC %s has no such card", host.Name, iface, ref.Name, nic.Name))
				continue
			}
			sp := nic.Spec.NICs[i].NetworkDevice.Switch
			if i < len(nic.Status.NICs) && nic.Status.NICs[i] != nil {
				overridden = append(overridden, fmt.Sprintf("host %s interface %s: ClusterNetwork %s speaks for port %s/%s, so HostNetworkAttachment %s is not applied there",
					host.Name, iface, nic.Status.ClusterNetwork, sp.Name, sp.Port.String(), ref.Name))
				continue
			}
			hna := &bmov1.HostNetworkAttachment{}
			key := client.ObjectKey{Namespace: cmp.Or(ref.Namespace, host.Namespace), Name: ref.Name}
			if err := r.Client.Get(ctx, key, hna); err != nil {
				if apierrors.IsNotFound(err) {
					notes = append(notes, fmt.Sprintf("host %s interface %s names HostNetworkAttachment %s, which does not exist", host.Name, iface, key))
					continue
				}
				return nil, nil, nil, err
			}
			allowed, err := fabric.ParseVLANList(hna.Spec.AllowedVLANs)
			if err != nil {
				notes = append(notes, fmt.Sprintf("HostNetworkAttachment %s: %v", key, err))
				continue
			}
			trunk := hna.Spec.Mode == bmov1.SwitchPortModeTrunk || hna.Spec.Mode == bmov1.SwitchPortModeHybrid
			mtu := 0
			if hna.Spec.MTU != nil {
				if os, ok := r.setsPortMTU(ctx, nd, sp.Name); ok {
					mtu = *hna.Spec.MTU
				} else {
					notes = append(notes, fmt.Sprintf("HostNetworkAttachment %s: mtu %d is not applied on switch %s: networkOS %s does not set port MTUs (the openvswitch drivers do)",
						key, *hna.Spec.MTU, sp.Name, os))
				}
			}
			wants = append(wants, fabric.AttachmentWants(sp.Name, sp.Port.String(), trunk, hna.Spec.NativeVLAN, allowed, mtu)...)
		}
	}
	return wants, overridden, notes, nil
}

// cardOf finds the NIC object's card of a host interface: by MAC address, else by name.
func cardOf(nic netv1.NIC, ni bmov1.NetworkInterface) int {
	for i, c := range nic.Spec.NICs {
		if ni.MACAddress != "" && strings.EqualFold(c.MAC, ni.MACAddress) {
			return i
		}
		if ni.MACAddress == "" && ni.Name != "" && c.Name == ni.Name {
			return i
		}
	}
	return -1
}

// served says whether the cluster serves a kind of baremetal-operator's (HostNetworkAttachment
// and BareMetalSwitch come with BMO v0.14): without it the manager runs as before.
func served(mapper meta.RESTMapper, kind string) bool {
	_, err := mapper.RESTMapping(bmov1.GroupVersion.WithKind(kind).GroupKind(), bmov1.GroupVersion.Version)
	return err == nil
}

// setAttachmentsApplied says whether the HostNetworkAttachments of claimed hosts are asked of
// their ports, once any host uses one: False for one that cannot be (a missing attachment, a bad
// VLAN list, an interface that is no card), True otherwise, saying where a ClusterNetwork wins.
func (r *Reconciler) setAttachmentsApplied(nd *netv1.NetworkDevice, applied int, overridden, notes []string) {
	if applied == 0 && len(notes) == 0 && len(overridden) == 0 && conditions.Get(nd, netv1.ConditionAttachmentsApplied) == nil {
		return
	}
	switch {
	case len(notes) > 0:
		r.set(nd, netv1.ConditionAttachmentsApplied, metav1.ConditionFalse, netv1.ReasonAttachmentsNotApplied, listed(append(notes, overridden...)))
	case len(overridden) > 0:
		r.set(nd, netv1.ConditionAttachmentsApplied, metav1.ConditionTrue, netv1.ReasonClusterNetworkWins, listed(overridden))
	default:
		r.set(nd, netv1.ConditionAttachmentsApplied, metav1.ConditionTrue, netv1.ReasonAttachmentsApplied,
			fmt.Sprintf("the ports of %d switch port want(s) from HostNetworkAttachments of claimed hosts are in the batch (status.switches says whether the switch took it)", applied))
	}
}

// setsPortMTU says whether the driver of the named switch of nd sets port MTUs, and its
// networkOS.
func (r *Reconciler) setsPortMTU(ctx context.Context, nd *netv1.NetworkDevice, name string) (netv1.NetworkOS, bool) {
	sw := nd.SwitchNamed(name)
	if sw == nil {
		return "", false
	}
	eff, err := r.effectiveSwitch(ctx, nd.Namespace, *sw)
	if err != nil {
		return sw.NetworkOS, false
	}
	drv, err := r.Drivers.For(string(eff.NetworkOS))
	if err != nil {
		return eff.NetworkOS, false
	}
	m, ok := drv.(fabric.PortMTUSetter)
	return eff.NetworkOS, ok && m.SetsPortMTU()
}
