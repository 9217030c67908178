package clusternetwork

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// hostView is what the ClusterNetwork makes of one NIC object (one host).
type hostView struct {
	nic *netv1.NIC
	// cabling is why the NIC cannot be used ("" when it can).
	cabling string
	// placement is the networks each card carries (nil: none); nil when the host does not fit.
	placement [][]string
	misfit    string
	// lags are the bonds the host's cards are in, by card (nil: on its own port).
	lags []*netv1.CardLAG
	// lagRefused says the host's cards cannot be bonded as a network asks (misfit says why).
	lagRefused bool
	// policyRefused says a switch of the host cannot apply a network's acl or portStatus down
	// (misfit says why).
	policyRefused bool
}

// viewHost validates a NIC against its NetworkDevice and places the networks on its cards.
func viewHost(nic *netv1.NIC, nd *netv1.NetworkDevice, cn *netv1.ClusterNetwork) hostView {
	v := hostView{nic: nic}
	switches := make([]string, 0, len(nd.Spec.Switches))
	for _, s := range nd.Spec.Switches {
		switches = append(switches, s.Name)
	}
	for i, c := range nic.Spec.NICs {
		if nd.SwitchNamed(c.NetworkDevice.Switch.Name) == nil {
			v.cabling = fmt.Sprintf("NIC %s: spec.nics[%d].networkDevice.switch.name: %q is not a switch of NetworkDevice %s (switches: %s); correct the name or add the switch",
				nic.Name, i, c.NetworkDevice.Switch.Name, nd.Name, strings.Join(switches, ", "))
			return v
		}
		if c.SmartNIC != nil && nd.SwitchNamed(c.SmartNIC.Switch) == nil {
			v.cabling = fmt.Sprintf("NIC %s: spec.nics[%d].smartNIC.switch: %q is not a switch of NetworkDevice %s (switches: %s); add the card's switch to the NetworkDevice or correct the name",
				nic.Name, i, c.SmartNIC.Switch, nd.Name, strings.Join(switches, ", "))
			return v
		}
	}
	cards := make([]fabric.Card, len(nic.Spec.NICs))
	for i, c := range nic.Spec.NICs {
		cards[i] = fabric.Card{Speed: int(c.Capability.Speed), SmartNIC: c.Capability.SmartNIC}
	}
	needs := make([]fabric.NetworkNeed, len(cn.Spec.Networks))
	for i, n := range cn.Spec.Networks {
		needs[i] = fabric.NetworkNeed{Name: n.Name, Speed: int(n.NICHint.Speed), SmartNIC: n.NICHint.SmartNIC, Cards: int(n.LinkAggregation), Trunk: n.PortMode == netv1.PortModeTrunk}
	}
	p, err := fabric.Place(cards, needs)
	if err != nil {
		v.misfit = err.Error()
		return v
	}
	lags, err := bondsOf(nic, nd, cn, p)
	if err != nil {
		v.misfit, v.lagRefused = err.Error(), true
		return v
	}
	if err := policiesFit(nic, nd, cn, p); err != nil {
		v.misfit, v.policyRefused = err.Error(), true
		return v
	}
	v.placement, v.lags = p, lags
	return v
}

// policiesFit checks that every switch a host's network is placed on can apply what the network
// asks of its ports: its acl and portStatus down. A host that would be half-configured is
// refused, naming the network, the host, the switch, its networkOS and why.
func policiesFit(nic *netv1.NIC, nd *netv1.NetworkDevice, cn *netv1.ClusterNetwork, placement [][]string) error {
	for _, n := range cn.Spec.Networks {
		if len(n.ACL) == 0 && n.PortStatus != netv1.PortDown {
			continue
		}
		for i, networks := range placement {
			if !slices.Contains(networks, n.Name) {
				continue
			}
			sw := nic.Spec.NICs[i].NetworkDevice.Switch.Name
			if sn := nic.Spec.NICs[i].SmartNIC; sn != nil {
				sw = sn.Switch // the card's switch applies them, on its host port
			}
			os := ""
			if s := nd.SwitchNamed(sw); s != nil {
				os = string(s.NetworkOS)
			}
			if len(n.ACL) > 0 {
				if err := fabric.ACLFits(os, networkACL(n)); err != nil {
					return fmt.Errorf("host %s: network %s has an acl, but its card %d is on switch %s: %w",
						nic.Spec.Node, n.Name, i, sw, err)
				}
			}
			if why := fabric.OSesWithoutPortState[os]; n.PortStatus == netv1.PortDown && why != "" {
				return fmt.Errorf("host %s: network %s has portStatus down, but its card %d is on switch %s, whose networkOS %s cannot shut a port (%s): set portStatus up or remove the host from the network",
					nic.Spec.Node, n.Name, i, sw, os, why)
			}
		}
	}
	return nil
}

// networkACL is the list a network asks of a port, as fabric.ACLFits checks it: its rules, its
// default, and (any) VLAN when the network is carried tagged.
func networkACL(n netv1.Network) fabric.ACL {
	a := fabric.ACL{DefaultDeny: n.ACLDefault == netv1.ACLDeny}
	if n.PortMode == netv1.PortModeTrunk {
		a.VLAN = 1 // the check asks only whether the list is scoped to one VLAN of a trunk
	}
	for _, r := range n.ACL {
		a.Rules = append(a.Rules, fabric.ACLRule{Direction: string(r.Direction), Protocol: r.Protocol, Action: string(r.Action), Remote: r.Remote})
	}
	return a
}

// bondsOf gives each card of a host the bond it is in: the cards of a network with
// linkAggregation 2 or more are one bond (cards that trunk networks share are one bond, named
// after the first network on them). A bond whose cards cannot be bonded (fabric.PlanLAG) fails
// the host.
func bondsOf(nic *netv1.NIC, nd *netv1.NetworkDevice, cn *netv1.ClusterNetwork, placement [][]string) ([]*netv1.CardLAG, error) {
	var out []*netv1.CardLAG
	pairs := make([]fabric.MLAGPair, 0, len(nd.Spec.MLAGPairs))
	for _, p := range nd.Spec.MLAGPairs {
		if len(p.Switches) == 2 {
			pairs = append(pairs, fabric.MLAGPair{Name: p.Name, Switches: [2]string{p.Switches[0], p.Switches[1]}, Domain: int(p.Domain)})
		}
	}
	osOf := func(sw string) string {
		if s := nd.SwitchNamed(sw); s != nil {
			return string(s.NetworkOS)
		}
		return ""
	}
	for _, n := range cn.Spec.Networks {
		if n.LinkAggregation < 2 {
			continue
		}
		var cards []int
		var ports []fabric.BondCard
		for i, networks := range placement {
			if slices.Contains(networks, n.Name) {
				cards = append(cards, i)
				sp := nic.Spec.NICs[i].NetworkDevice.Switch
				ports = append(ports, fabric.BondCard{Switch: sp.Name, Port: sp.Port.String()})
			}
		}
		if out == nil {
			out = make([]*netv1.CardLAG, len(placement))
		}
		if len(cards) == 0 || out[cards[0]] != nil {
			continue // the cards are in the bond of an earlier network already
		}
		for _, i := range cards {
			if nic.Spec.NICs[i].SmartNIC != nil {
				return nil, fmt.Errorf("host %s: network %s bonds card %d, a SmartNIC whose own switch stands between the host and the top-of-rack port; a bond through a card's switch is not made: set linkAggregation 1 for this network or remove the card's smartNIC",
					nic.Spec.Node, n.Name, i)
			}
		}
		plan, err := fabric.PlanLAG(nic.Spec.Node, n.Name, ports, pairs, osOf)
		if err != nil {
			return nil, err
		}
		for _, c := range ports {
			agg := aggregatesOf(nd.SwitchNamed(c.Switch))
			if err := fabric.BondRefusal(nic.Spec.Node, n.Name, c.Switch, osOf(c.Switch), agg, n.LAG != nil && n.LAG.Mode == netv1.LAGStatic); err != nil {
				return nil, err
			}
		}
		lag := &netv1.CardLAG{Name: plan.Name, Mode: netv1.LAGLACP, LACPRate: netv1.LACPSlow}
		if n.LAG != nil {
			lag.Mode, lag.LACPRate = cmp.Or(n.LAG.Mode, netv1.LAGLACP), cmp.Or(n.LAG.LACPRate, netv1.LACPSlow)
		}
		if lag.Mode == netv1.LAGStatic {
			lag.LACPRate = ""
		}
		if plan.MLAG != nil {
			lag.MLAGPair = plan.MLAG.Name
		}
		for _, i := range cards {
			out[i] = lag
		}
	}
	return out, nil
}

// wantStatus is the NIC status of a selected host: per card its network and VLAN (every network
// of a trunk carrying several), or null.
func wantStatus(cn *netv1.ClusterNetwork, host string, placement [][]string, lags []*netv1.CardLAG, vlans map[string]int) netv1.NICStatus {
	st := netv1.NICStatus{ClusterNetwork: cn.Name, NICs: make([]*netv1.NICAssignment, len(placement))}
	for i, networks := range placement {
		if len(networks) == 0 {
			continue
		}
		mode := netv1.PortModeAccess
		for _, n := range cn.Spec.Networks {
			if n.Name == networks[0] && n.PortMode == netv1.PortModeTrunk {
				mode = netv1.PortModeTrunk
			}
		}
		a := &netv1.NICAssignment{Network: networks[0], VLANID: vlan32(vlans[networks[0]]), PortMode: mode}
		if len(networks) > 1 {
			for _, n := range networks {
				a.Networks = append(a.Networks, netv1.NetworkStatus{Name: n, VLANID: vlan32(vlans[n])})
			}
		}
		if i < len(lags) && lags[i] != nil {
			a.LAG = lags[i].DeepCopy()
		}
		portPolicies(a, cn, host, networks)
		st.NICs[i] = a
	}
	return st
}

// portPolicies puts on a card's assignment the access lists of its networks and its port state:
// down when any of its networks asks it.
func portPolicies(a *netv1.NICAssignment, cn *netv1.ClusterNetwork, host string, networks []string) {
	for _, n := range cn.Spec.Networks {
		if !slices.Contains(networks, n.Name) {
			continue
		}
		if n.PortStatus == netv1.PortDown {
			a.PortStatus = netv1.PortDown
		}
		if len(n.ACL) == 0 {
			continue
		}
		acl := netv1.CardACL{Network: n.Name, Name: fabric.ACLName(host, n.Name), Default: cmp.Or(n.ACLDefault, netv1.ACLAllow)}
		for _, r := range n.ACL {
			acl.Rules = append(acl.Rules, netv1.CardACLRule(r))
		}
		a.ACLs = append(a.ACLs, acl)
	}
}

// switchPorts is, per switch of the NetworkDevice, what the networkdevice controller recorded it
// configured: by switch name, then port name. Built once per reconcile.
type switchPorts map[string]switchRecord

type switchRecord struct {
	status *netv1.SwitchStatus
	ports  map[string]*netv1.ConfiguredPort
	// acls are the access lists bound on the switch, by name (status.switches[].acls, or a
	// record written before it: ports[].acls).
	acls map[string]netv1.ConfiguredACL
}

func configuredPortsOf(nd *netv1.NetworkDevice) switchPorts {
	out := make(switchPorts, len(nd.Status.Switches))
	for i := range nd.Status.Switches {
		sw := &nd.Status.Switches[i]
		rec := switchRecord{status: sw, ports: make(map[string]*netv1.ConfiguredPort, len(sw.Ports)), acls: sw.BoundACLs()}
		for j := range sw.Ports {
			rec.ports[sw.Ports[j].Name] = &sw.Ports[j]
		}
		if _, seen := out[sw.Name]; !seen {
			out[sw.Name] = rec
		}
	}
	return out
}

// hostState says how far a selected host's ports are, from its NIC status st and what the
// networkdevice controller recorded: ready when every port it needs is recorded as configured
// that way; error when a switch it needs failed; configuring otherwise.
func hostState(nic *netv1.NIC, st netv1.NICStatus, ports switchPorts) netv1.HostNetworkState {
	out := netv1.HostNetworkState{NIC: nic.Name, State: netv1.HostReady}
	var waiting []string
	for i, a := range st.NICs {
		if a == nil || i >= len(nic.Spec.NICs) {
			continue
		}
		sp := nic.Spec.NICs[i].NetworkDevice.Switch
		rec, ok := ports[sp.Name]
		if ok && !rec.status.Reachable {
			return netv1.HostNetworkState{NIC: nic.Name, State: netv1.HostError, Message: fmt.Sprintf("switch %s: %s", sp.Name, rec.status.LastError)}
		}
		if sn := nic.Spec.NICs[i].SmartNIC; sn != nil {
			card, cardOK := ports[sn.Switch]
			if cardOK && !card.status.Reachable {
				return netv1.HostNetworkState{NIC: nic.Name, State: netv1.HostError, Message: fmt.Sprintf("switch %s: %s", sn.Switch, card.status.LastError)}
			}
			// Through the card's switch: the host port as the network asks, the uplink and the
			// top-of-rack port trunking its VLANs.
			if !ok || !trunks(rec.ports[sp.Port.String()], a) {
				waiting = append(waiting, sp.Name+"/"+sp.Port.String())
			}
			if !cardOK || !trunks(card.ports[sn.UplinkPort], a) {
				waiting = append(waiting, sn.Switch+"/"+sn.UplinkPort)
			}
			if !cardOK || !card.carries(sn.HostPort, a) {
				waiting = append(waiting, sn.Switch+"/"+sn.HostPort)
			}
			continue
		}
		switch {
		case a.LAG != nil:
			// A bonded card's VLANs are the bond's; it is ready when its bond has it as a member.
			if !ok || !rec.carries(a.LAG.Name, a) || !slices.Contains(rec.ports[a.LAG.Name].LAG.Members, sp.Port.String()) {
				waiting = append(waiting, sp.Name+"/"+a.LAG.Name+"("+sp.Port.String()+")")
			}
		case !ok || !rec.carries(sp.Port.String(), a):
			waiting = append(waiting, sp.Name+"/"+sp.Port.String())
		}
	}
	if len(waiting) > 0 {
		out.State, out.Message = netv1.HostConfiguring, "waiting for switch ports "+strings.Join(waiting, ", ")
	}
	return out
}

// carries says whether the switch's record has port configured as the card's assignment asks:
// its VLANs, its state and its access lists. A list is named for its host and network and bound
// to that host's port, so the record has it by name for the whole switch; the rules it counts
// and its default tell a list the ClusterNetwork has changed since from the one applied.
func (rec switchRecord) carries(port string, a *netv1.NICAssignment) bool {
	p := rec.ports[port]
	if p == nil || (a.LAG != nil) != (p.LAG != nil) || p.Down != (a.PortStatus == netv1.PortDown) {
		return false
	}
	for _, acl := range a.ACLs {
		c, ok := rec.acls[acl.Name]
		if !ok || int(c.Rules) != len(acl.Rules) || c.DefaultAction() != cmp.Or(acl.Default, netv1.ACLAllow) {
			return false
		}
	}
	if a.PortMode == netv1.PortModeTrunk {
		for _, id := range assignedVLANs(a) {
			if p.PortMode() != netv1.PortModeTrunk || !slices.Contains(p.Trunk, id) {
				return false
			}
		}
		return true
	}
	return p.PortMode() == netv1.PortModeAccess && p.VLAN == a.VLANID
}

// trunks says whether a recorded port (nil: none) carries every VLAN of the card's assignment
// tagged: the ports between a SmartNIC's switch and the top of rack.
func trunks(p *netv1.ConfiguredPort, a *netv1.NICAssignment) bool {
	if p == nil || p.PortMode() != netv1.PortModeTrunk {
		return false
	}
	for _, id := range assignedVLANs(a) {
		if !slices.Contains(p.Trunk, id) {
			return false
		}
	}
	return true
}

// listedHosts is how many entries a condition message names before it counts the rest.
const listedHosts = 20

// hostList joins the first listedHosts entries and counts the others: a condition message stays
// readable (and the status small) when a thousand hosts are configuring; status.states has them
// all.
func hostList(entries []string, sep string) string {
	if len(entries) <= listedHosts {
		return strings.Join(entries, sep)
	}
	return fmt.Sprintf("%s%sand %d more (see status.states)", strings.Join(entries[:listedHosts], sep), sep, len(entries)-listedHosts)
}

// usesVLANs says whether the device still has a recorded port or VLAN among ids.
func usesVLANs(nd *netv1.NetworkDevice, ids map[int32]bool) string {
	for _, sw := range nd.Status.Switches {
		for _, p := range sw.Ports {
			if ids[p.VLAN] {
				return fmt.Sprintf("switch %s port %s still carries VLAN %d", sw.Name, p.Name, p.VLAN)
			}
			for _, v := range p.Trunk {
				if ids[v] {
					return fmt.Sprintf("switch %s port %s still carries VLAN %d", sw.Name, p.Name, v)
				}
			}
		}
		for _, v := range sw.VLANs {
			if ids[v] {
				return fmt.Sprintf("switch %s still has VLAN %d", sw.Name, v)
			}
		}
	}
	return ""
}

// vlan32 narrows a VLAN id (1-4094) for the API's int32 fields.
func vlan32(v int) int32 { return int32(v) } //nolint:gosec // VLAN ids are at most 4094

// assignedVLANs are the VLANs a card carries: its network's, or every network's of a trunk.
func assignedVLANs(a *netv1.NICAssignment) []int32 {
	if len(a.Networks) == 0 {
		return []int32{a.VLANID}
	}
	out := make([]int32, 0, len(a.Networks))
	for _, n := range a.Networks {
		out = append(out, n.VLANID)
	}
	return out
}
