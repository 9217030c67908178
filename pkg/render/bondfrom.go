package render

import (
	"fmt"
	"slices"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// bondsFromFabric writes out the bonds that take their members from the fabric (bondFrom) as
// bonds of bondLinks: one phy link per bonded card, by MAC, with id <bond id>-<n>, and the mode
// (and lacp_rate) of the ClusterNetwork network. Everything after reads them as written by
// hand, so network_data.json, netplan, nmstate and os-net-config get the same bond. The
// template is not changed: the links are a copy.
func bondsFromFabric(root string, l infrav1.NetworkDataLinks, f *Facts) (infrav1.NetworkDataLinks, error) {
	if !slices.ContainsFunc(l.Bonds, func(b infrav1.NetworkDataLinkBond) bool { return b.BondFrom != nil }) {
		return l, nil
	}
	l.Bonds = slices.Clone(l.Bonds)
	l.Ethernets = slices.Clone(l.Ethernets)
	for i := range l.Bonds {
		b := &l.Bonds[i]
		if b.BondFrom == nil {
			continue
		}
		field := fmt.Sprintf("%s.links.bonds[%d]", root, i)
		if len(b.BondLinks) > 0 || b.BondMode != "" {
			return l, invalid(field+".bondFrom", "takes the members and mode from the ClusterNetwork; remove bondLinks and bondMode")
		}
		ref := VLANRef{ClusterNetwork: b.BondFrom.ClusterNetwork, Network: b.BondFrom.Network}
		fb, ok := f.Bonds[ref]
		if !ok {
			return l, &Error{Field: field + ".bondFrom", Reason: ReasonBondUnresolved, VLAN: ref,
				Detail: fmt.Sprintf("ClusterNetwork %s has not bonded this host's cards for network %s; the bond is rendered once the host is given the network", ref.ClusterNetwork, ref.Network)}
		}
		if len(fb.MACs) < 2 {
			return l, invalid(field+".bondFrom", "network %s of ClusterNetwork %s gives this host %d bonded card(s); a bond needs linkAggregation 2 or more", ref.Network, ref.ClusterNetwork, len(fb.MACs))
		}
		b.BondMode = fb.Mode
		b.BondLinks = nil
		for j, mac := range fb.MACs {
			id := infrav1.LinkID(fmt.Sprintf("%s-%d", b.ID, j))
			b.BondLinks = append(b.BondLinks, id)
			l.Ethernets = append(l.Ethernets, infrav1.NetworkDataLinkEthernet{Type: "phy", ID: id, MTU: b.MTU,
				MACAddress: &infrav1.NetworkLinkEthernetMac{String: ptr.To(infrav1.MACAddress(mac))}})
		}
		if fb.LACPRate != "" && !slices.ContainsFunc(b.Parameters, func(p infrav1.NetworkDataLinkBondParam) bool { return p.Name == "lacp_rate" }) {
			raw := []byte(strconv.Quote(fb.LACPRate)) // slow or fast: a plain JSON string
			b.Parameters = append(slices.Clone(b.Parameters), infrav1.NetworkDataLinkBondParam{Name: "lacp_rate", Value: &apiextensionsv1.JSON{Raw: raw}})
		}
	}
	return l, nil
}

// FabricBondOf reads, from a host's NIC object, the bond the fabric made of its cards for a
// network of a ClusterNetwork: the bonded cards' MACs in the order of spec.nics, and the mode.
// No MACs means the host's cards are not bonded for that network (yet). A bonded card without a
// MAC is an error naming it: the host's bond names its cards by MAC.
func FabricBondOf(nic *netv1.NIC, clusterNetwork, network string) (FabricBond, error) {
	var bond FabricBond
	if nic.Status.ClusterNetwork != clusterNetwork {
		return bond, nil
	}
	for i, a := range nic.Status.NICs {
		if a == nil || a.LAG == nil || i >= len(nic.Spec.NICs) || !carriesNetwork(a, network) {
			continue
		}
		card := nic.Spec.NICs[i]
		if card.MAC == "" {
			return FabricBond{}, fmt.Errorf("NIC %s spec.nics[%d] (switch %s port %s) has no mac; the host's bond names its cards by MAC: set it",
				nic.Name, i, card.NetworkDevice.Switch.Name, card.NetworkDevice.Switch.Port.String())
		}
		bond.MACs = append(bond.MACs, card.MAC)
		bond.Mode, bond.LACPRate = "802.3ad", string(a.LAG.LACPRate)
		if a.LAG.Mode == netv1.LAGStatic {
			bond.Mode, bond.LACPRate = "active-backup", ""
		}
	}
	return bond, nil
}

func carriesNetwork(a *netv1.NICAssignment, network string) bool {
	return a.Network == network || slices.ContainsFunc(a.Networks, func(n netv1.NetworkStatus) bool { return n.Name == network })
}
