package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// ParseNetworkData reads a network_data.json, as JSON or as the YAML CAPM3 stores in the
// networkData Secret, back into the model the writers render from.
func ParseNetworkData(b []byte) (*NetworkData, error) {
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("network data: %w", err)
	}
	nd := &NetworkData{}
	if err := json.Unmarshal(j, nd); err != nil {
		return nil, fmt.Errorf("network data: %w", err)
	}
	return nd, nil
}

// UnmarshalJSON reads a network_data.json link: the keys MarshalJSON writes. Keys of bond and
// bridge settings (bond_*, bridge_*) other than the ones modelled go to Params.
func (l *Link) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	str := func(key string) (s string) { _ = json.Unmarshal(raw[key], &s); return s }
	*l = Link{Type: str("type"), ID: str("id"), Name: str("name")}
	_ = json.Unmarshal(raw["mtu"], &l.MTU)
	switch l.Type {
	case LinkVLAN:
		l.MAC, l.VLANLink = str("vlan_mac_address"), str("vlan_link")
		if err := json.Unmarshal(raw["vlan_id"], &l.VLANID); err != nil {
			return fmt.Errorf("link %s: vlan_id: %w", l.ID, err)
		}
	case LinkBond:
		l.MAC, l.BondMode, l.BondXmitHashPolicy = str("ethernet_mac_address"), str("bond_mode"), str("bond_xmit_hash_policy")
		_ = json.Unmarshal(raw["bond_links"], &l.BondLinks)
	default:
		l.MAC = str("ethernet_mac_address")
		if members, ok := raw["bridge_links"]; ok {
			l.Bridge = true
			_ = json.Unmarshal(members, &l.BridgeLinks)
		}
	}
	modelled := []string{"bond_mode", "bond_links", "bond_xmit_hash_policy", "bridge_links"}
	for k, v := range raw {
		if (strings.HasPrefix(k, "bond_") || strings.HasPrefix(k, "bridge_")) && !slices.Contains(modelled, k) {
			if l.Params == nil {
				l.Params = map[string]json.RawMessage{}
			}
			l.Params[k] = v
		}
	}
	return nil
}

// Cards says how the network data uses each physical card (every link that is not a bond, a
// VLAN or a bridge): whether the host sends untagged frames on it, the VLANs it tags, and the
// bond it is in. Bridges are seen through: a VLAN or an address on a bridge is on its members.
// The result is what fabric.Agree compares with the switch ports.
func (n *NetworkData) Cards() []fabric.HostCard {
	byID := make(map[string]Link, len(n.Links))
	for _, l := range n.Links {
		byID[l.ID] = l
	}
	// carriers resolves a link to the physical cards and bonds whose frames carry it untagged.
	var carriers func(id string, seen map[string]bool) []string
	carriers = func(id string, seen map[string]bool) []string {
		l, ok := byID[id]
		if !ok || seen[id] || l.Type == LinkVLAN {
			return nil
		}
		seen[id] = true
		if !l.Bridge {
			return []string{id}
		}
		var out []string
		for _, m := range l.BridgeLinks {
			out = append(out, carriers(m, seen)...)
		}
		return out
	}
	untagged := map[string]bool{}
	for _, nw := range n.Networks {
		for _, c := range carriers(nw.Link, map[string]bool{}) {
			untagged[c] = true
		}
	}
	tagged := map[string][]int{}
	for _, l := range n.Links {
		if l.Type != LinkVLAN {
			continue
		}
		for _, c := range carriers(l.VLANLink, map[string]bool{}) {
			if !slices.Contains(tagged[c], l.VLANID) {
				tagged[c] = append(tagged[c], l.VLANID)
			}
		}
	}
	bondOf := map[string]*fabric.HostBond{}
	for _, l := range n.Links {
		if l.Type != LinkBond {
			continue
		}
		b := &fabric.HostBond{Name: l.ID, Mode: l.BondMode}
		for _, m := range l.BondLinks {
			b.Members = append(b.Members, byID[m].MAC)
			bondOf[m] = b
		}
	}
	var out []fabric.HostCard
	for _, l := range n.Links {
		if l.Type == LinkBond || l.Type == LinkVLAN || l.Bridge {
			continue
		}
		card := fabric.HostCard{MAC: l.MAC, Name: cmp.Or(l.Name, l.ID), Untagged: untagged[l.ID], Tagged: tagged[l.ID], Bond: bondOf[l.ID]}
		if card.Bond != nil {
			card.Untagged = card.Untagged || untagged[card.Bond.Name]
			for _, v := range tagged[card.Bond.Name] {
				if !slices.Contains(card.Tagged, v) {
					card.Tagged = append(card.Tagged, v)
				}
			}
		}
		slices.Sort(card.Tagged)
		out = append(out, card)
	}
	return out
}
