package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// Defaults the CRD applies at admission, applied again here for templates read from files.
const (
	defaultMTU = 1500
	minMTU     = 68
	maxMTU     = 9000
)

var (
	ethernetTypes = []string{"phy", "bridge", "dvs", "hw_veb", "hyperv", "ovs", "tap", "vhostuser", "vif"}
	bondModes     = []string{"802.3ad", "balance-rr", "active-backup", "balance-xor", "broadcast", "balance-tlb", "balance-alb"}
	xmitPolicies  = []string{"layer2", "layer2+3", "layer3+4"}
)

// linkSpec is one template link, whatever its kind, with what rendering needs.
type linkSpec struct {
	field        string // networkData.links.bonds[0]
	kind         string // ethernet, bond, bridge, vlan
	id           string
	mac          *infrav1.NetworkLinkEthernetMac
	members      []infrav1.LinkID // bond and bridge members; the VLAN's parent
	membersField string
}

// linkSet indexes a template's links by id and resolves their MACs.
type linkSet struct {
	specs []linkSpec
	byID  map[string]int
	macs  map[string]string
	f     *Facts
	root  string // networkData or preprovisioningNetworkData, for messages
}

func newLinkSet(root string, l *infrav1.NetworkDataLinks, f *Facts) (*linkSet, error) {
	s := &linkSet{byID: map[string]int{}, macs: map[string]string{}, f: f, root: root}
	add := func(ls linkSpec) error {
		if ls.id == "" {
			return invalid(ls.field+".id", "is empty; give the link an id that networks, bonds and VLANs can refer to")
		}
		if j, dup := s.byID[ls.id]; dup {
			return invalid(ls.field+".id", "%q is also the id of %s; give each link its own id", ls.id, s.specs[j].field)
		}
		s.byID[ls.id] = len(s.specs)
		s.specs = append(s.specs, ls)
		return nil
	}
	// Template order is bonds, ethernets, vlans, bridges: the order they are written in.
	for i := range l.Bonds {
		b := &l.Bonds[i]
		field := fmt.Sprintf("%s.links.bonds[%d]", s.root, i)
		if err := add(linkSpec{field: field, kind: "bond", id: string(b.ID), mac: b.MACAddress, members: b.BondLinks, membersField: field + ".bondLinks"}); err != nil {
			return nil, err
		}
	}
	for i := range l.Ethernets {
		e := &l.Ethernets[i]
		if err := add(linkSpec{field: fmt.Sprintf("%s.links.ethernets[%d]", s.root, i), kind: "ethernet", id: string(e.ID), mac: e.MACAddress}); err != nil {
			return nil, err
		}
	}
	for i := range l.Vlans {
		v := &l.Vlans[i]
		field := fmt.Sprintf("%s.links.vlans[%d]", s.root, i)
		if err := add(linkSpec{field: field, kind: "vlan", id: string(v.ID), mac: v.MACAddress, members: []infrav1.LinkID{v.VlanLink}, membersField: field + ".vlanLink"}); err != nil {
			return nil, err
		}
	}
	for i := range l.Bridges {
		b := &l.Bridges[i]
		field := fmt.Sprintf("%s.links.bridges[%d]", s.root, i)
		if err := add(linkSpec{field: field, kind: "bridge", id: string(b.ID), mac: b.MACAddress, members: b.BridgeLinks, membersField: field + ".bridgeLinks"}); err != nil {
			return nil, err
		}
	}
	// Every reference must name a link of this template before any MAC is looked at, so the
	// message is about the reference, not a MAC that cannot be derived.
	for _, ls := range s.specs {
		for j, m := range ls.members {
			field := ls.membersField
			if ls.kind != "vlan" {
				field = fmt.Sprintf("%s[%d]", field, j)
			}
			if err := s.check(field, string(m)); err != nil {
				return nil, err
			}
			if string(m) == ls.id {
				return nil, invalid(field, "%q is the link itself; a %s cannot be its own member", m, ls.kind)
			}
			if err := s.checkMemberKind(field, ls.kind, string(m)); err != nil {
				return nil, err
			}
		}
		if ls.kind == "bond" && len(ls.members) == 0 {
			return nil, invalid(ls.membersField, "is empty; list the ids of the links the bond aggregates")
		}
	}
	return s, nil
}

// check returns an error unless id is a link of the template.
func (s *linkSet) check(field, id string) error {
	if _, ok := s.byID[id]; ok {
		return nil
	}
	return invalid(field, "%q is not a link of this template; links: %s", id, s.ids())
}

// checkMemberKind applies the admission rules again, so a template read from a file gets the
// same answer: bonds aggregate ethernets; bridges take ethernets, bonds and VLANs.
func (s *linkSet) checkMemberKind(field, kind, member string) error {
	mk := s.specs[s.byID[member]].kind
	switch {
	case kind == "bond" && mk != "ethernet":
		return invalid(field, "%q is a %s; a bond aggregates ethernets: %s", member, mk, s.idsOf("ethernet"))
	case kind == "bridge" && mk == "bridge":
		return invalid(field, "%q is a bridge; a bridge takes ethernets, bonds and VLANs, not other bridges", member)
	}
	return nil
}

func (s *linkSet) idsOf(kind string) string {
	var ids []string
	for _, ls := range s.specs {
		if ls.kind == kind {
			ids = append(ids, ls.id)
		}
	}
	if len(ids) == 0 {
		return "(none)"
	}
	return strings.Join(ids, ", ")
}

func (s *linkSet) ids() string {
	if len(s.specs) == 0 {
		return "(none)"
	}
	ids := make([]string, len(s.specs))
	for i, ls := range s.specs {
		ids[i] = ls.id
	}
	return strings.Join(ids, ", ")
}

// mac resolves a link's MAC: its own macAddress, else its first member's (bond, bridge) or its
// parent's (VLAN). path holds the links being resolved, to report a loop instead of recursing.
func (s *linkSet) mac(id string, path []string) (string, error) {
	if m, ok := s.macs[id]; ok {
		return m, nil
	}
	ls := s.specs[s.byID[id]]
	if slices.Contains(path, id) {
		return "", invalid(ls.field+".macAddress", "the links %s -> %s take their MAC from each other; give one of them a macAddress", strings.Join(path, " -> "), id)
	}
	var mac string
	var err error
	switch {
	case ls.mac != nil:
		mac, err = s.explicitMAC(ls.field+".macAddress", ls.mac)
	case ls.kind == "ethernet":
		err = invalid(ls.field+".macAddress", "is missing; set string, fromHostInterface (a NIC name of the host), fromAnnotation or fromBootMAC")
	case len(ls.members) == 0:
		err = invalid(ls.field+".macAddress", "is missing and the %s has no members to take a MAC from; set macAddress or list its links", ls.kind)
	default:
		mac, err = s.mac(string(ls.members[0]), append(path, id))
	}
	if err != nil {
		return "", err
	}
	s.macs[id] = mac
	return mac, nil
}

func (s *linkSet) explicitMAC(field string, m *infrav1.NetworkLinkEthernetMac) (string, error) {
	switch {
	case m.String != nil:
		mac, ok := parseMAC(string(*m.String))
		if !ok {
			return "", invalid(field+".string", "%q is not a MAC address; %s", *m.String, macHint)
		}
		return mac, nil
	case m.FromHostInterface != nil:
		return nicMAC(field+".fromHostInterface", *m.FromHostInterface, s.f)
	case ptr.Deref(m.FromBootMAC, false):
		return bootMAC(field+".fromBootMAC", s.f)
	case m.FromAnnotation != nil:
		af := field + ".fromAnnotation"
		v, err := annotationValue(af, m.FromAnnotation.Object, m.FromAnnotation.Annotation, s.f)
		if err != nil {
			return "", err
		}
		if v == "" {
			return "", invalid(af, "annotation %q on the %s is missing or empty; set it to the interface's MAC address", m.FromAnnotation.Annotation, m.FromAnnotation.Object)
		}
		mac, ok := parseMAC(v)
		if !ok {
			return "", invalid(af, "annotation %q on the %s holds %q, which is not a MAC address; %s", m.FromAnnotation.Annotation, m.FromAnnotation.Object, v, macHint)
		}
		return mac, nil
	}
	return "", invalid(field, "is empty; set string, fromHostInterface, fromAnnotation or fromBootMAC")
}

// renderLinks writes the links in upstream's order (bonds, ethernets, VLANs), then bridges, which
// upstream does not have: a template without bridges renders exactly as in CAPM3.
func renderLinks(l *infrav1.NetworkDataLinks, s *linkSet) ([]Link, error) {
	out := make([]Link, 0, len(s.specs))
	for i := range l.Bonds {
		b := &l.Bonds[i]
		field := fmt.Sprintf("%s.links.bonds[%d]", s.root, i)
		link, err := s.common(field, string(b.ID), string(b.Name), b.MTU)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(bondModes, b.BondMode) {
			return nil, invalid(field+".bondMode", "%q is not a bond mode; use one of %s%s", b.BondMode, strings.Join(bondModes, ", "), didYouMean(b.BondMode))
		}
		if b.BondXmitHashPolicy != "" && !slices.Contains(xmitPolicies, b.BondXmitHashPolicy) {
			return nil, invalid(field+".bondXmitHashPolicy", "%q is not a transmit hash policy; use one of %s", b.BondXmitHashPolicy, strings.Join(xmitPolicies, ", "))
		}
		link.Type, link.BondMode, link.BondXmitHashPolicy = LinkBond, b.BondMode, b.BondXmitHashPolicy
		link.BondLinks = linkIDs(b.BondLinks)
		reserved := []string{"bond_mode", "bond_links", "bond_xmit_hash_policy"}
		params := make([]param, len(b.Parameters))
		for j, p := range b.Parameters {
			params[j] = param{p.Name, p.Value}
		}
		if link.Params, err = renderParams(field+".parameters", "bond_", params, reserved); err != nil {
			return nil, err
		}
		out = append(out, link)
	}
	for i := range l.Ethernets {
		e := &l.Ethernets[i]
		field := fmt.Sprintf("%s.links.ethernets[%d]", s.root, i)
		if !slices.Contains(ethernetTypes, e.Type) {
			return nil, invalid(field+".type", "%q is not a network_data.json link type; use phy for a physical NIC, or one of %s", e.Type, strings.Join(ethernetTypes[1:], ", "))
		}
		link, err := s.common(field, string(e.ID), string(e.Name), e.MTU)
		if err != nil {
			return nil, err
		}
		link.Type = e.Type
		out = append(out, link)
	}
	for i := range l.Vlans {
		v := &l.Vlans[i]
		field := fmt.Sprintf("%s.links.vlans[%d]", s.root, i)
		id, err := s.vlanID(field, v)
		if err != nil {
			return nil, err
		}
		link, err := s.common(field, string(v.ID), string(v.Name), v.MTU)
		if err != nil {
			return nil, err
		}
		link.Type, link.VLANID, link.VLANLink = LinkVLAN, int(id), string(v.VlanLink)
		out = append(out, link)
	}
	for i := range l.Bridges {
		b := &l.Bridges[i]
		field := fmt.Sprintf("%s.links.bridges[%d]", s.root, i)
		link, err := s.common(field, string(b.ID), string(b.Name), b.MTU)
		if err != nil {
			return nil, err
		}
		link.Type, link.Bridge, link.BridgeLinks = LinkBridge, true, linkIDs(b.BridgeLinks)
		params := make([]param, 0, len(b.Parameters)+1)
		if b.AcceptRA != nil {
			params = append(params, param{"accept_ra", &apiextensionsv1.JSON{Raw: []byte(strconv.FormatBool(*b.AcceptRA))}})
		}
		for _, p := range b.Parameters {
			params = append(params, param{p.Name, p.Value})
		}
		if link.Params, err = renderParams(field+".parameters", "bridge_", params, []string{"bridge_links"}); err != nil {
			return nil, err
		}
		out = append(out, link)
	}
	return out, nil
}

// common fills what every link has: id, name, MTU and MAC.
func (s *linkSet) common(field, id, name string, mtu infrav1.MTU) (Link, error) {
	if mtu == 0 {
		mtu = defaultMTU
	}
	if mtu < minMTU || mtu > maxMTU {
		return Link{}, invalid(field+".mtu", "%d is outside %d..%d; give the MTU in bytes, such as 1500 or 9000", mtu, minMTU, maxMTU)
	}
	mac, err := s.mac(id, nil)
	if err != nil {
		return Link{}, err
	}
	return Link{ID: id, Name: name, MTU: int(mtu), MAC: mac}, nil
}

func linkIDs(ids []infrav1.LinkID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

func didYouMean(mode string) string {
	if mode == "802.1ad" {
		return " (802.1ad is VLAN stacking; LACP is 802.3ad)"
	}
	return ""
}

// param is one extra bond or bridge setting from the template.
type param struct {
	name  string
	value *apiextensionsv1.JSON
}

// renderParams writes settings as <prefix><name>, refusing ones that would overwrite a structured
// field (bond_mode, ...), repeat, or have no value.
func renderParams(field, prefix string, params []param, reserved []string) (map[string]json.RawMessage, error) {
	if len(params) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(params))
	for i, p := range params {
		pf := fmt.Sprintf("%s[%d]", field, i)
		key := prefix + strings.TrimPrefix(p.name, prefix)
		if p.name == "" || key == prefix {
			return nil, invalid(pf+".name", "is empty; give the setting's name without the %s prefix, such as miimon", prefix)
		}
		if slices.Contains(reserved, key) {
			return nil, invalid(pf+".name", "%q would overwrite %s, which has its own field; set that field instead", p.name, key)
		}
		if _, dup := out[key]; dup {
			return nil, invalid(pf+".name", "%q is given twice; keep one", p.name)
		}
		if p.value == nil || len(p.value.Raw) == 0 {
			return nil, invalid(pf+".value", "is missing; give the setting a value, such as 100")
		}
		if !json.Valid(p.value.Raw) {
			return nil, invalid(pf+".value", "%q is not a JSON value; quote strings", p.value.Raw)
		}
		out[key] = json.RawMessage(p.value.Raw)
	}
	return out, nil
}

// vlanID is a VLAN link's tag: its vlanID, or the id its ClusterNetwork network was assigned
// (vlanIDFrom), which the caller resolved into the facts.
func (s *linkSet) vlanID(field string, v *infrav1.NetworkDataLinkVlan) (int32, error) {
	switch {
	case v.VlanID != nil && v.VlanIDFrom != nil:
		return 0, invalid(field, "sets both vlanID and vlanIDFrom; keep one")
	case v.VlanID != nil:
		if *v.VlanID < 0 || *v.VlanID > 4094 {
			return 0, invalid(field+".vlanID", "%d is not a VLAN id; give 0 to 4094", *v.VlanID)
		}
		return *v.VlanID, nil
	case v.VlanIDFrom != nil:
		ref := VLANRef{ClusterNetwork: v.VlanIDFrom.ClusterNetwork, Network: v.VlanIDFrom.Network}
		id, ok := s.f.VLANs[ref]
		if !ok {
			return 0, &Error{Field: field + ".vlanIDFrom", Reason: ReasonVLANUnresolved, VLAN: ref,
				Detail: fmt.Sprintf("no VLAN id is known for network %s of ClusterNetwork %s", ref.Network, ref.ClusterNetwork)}
		}
		if id < 1 || id > 4094 {
			return 0, invalid(field+".vlanIDFrom", "network %s of ClusterNetwork %s has VLAN id %d, not a VLAN id (1 to 4094)", ref.Network, ref.ClusterNetwork, id)
		}
		return id, nil
	}
	return 0, invalid(field, "has neither vlanID nor vlanIDFrom; give the VLAN tag, or the ClusterNetwork network to take it from")
}
