package render

import (
	"fmt"
	"slices"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
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
