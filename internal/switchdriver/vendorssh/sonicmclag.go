package vendorssh

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// SONiC's MCLAG. A switch has at most one MCLAG domain (MCLAG_DOMAIN: its source_ip, peer_ip and
// peer_link) and its members are port-channels (MCLAG_INTERFACE, keyed DOMAIN|PortChannelN),
// neither of which carries a label. So:
//
//   - the domain is metalwire's only as the NetworkDevice declares it (mlagPairs[].domain and
//     .sonic, fabric.Endpoint.MCLAG): "sudo config mclag add DOMAIN SOURCE PEER PEERLINK" makes
//     it or, when it exists, sets it to the declared values (sonic-utilities modifies an existing
//     domain of that id, and refuses a second domain, with its own words). It is sent once per
//     batch, before the first member is added, and never removed: the domain is the pair's, not
//     a bond's;
//   - a member is metalwire's when its port-channel is one of the switch's aggregates range,
//     which is already the bond's (soniclag.go). It reads back as the declared pair's MLAG half
//     when its domain is the declared one and that domain's row is as declared; otherwise as a
//     half of an unknown pair, which the next pass puts right (the domain sent again, the member
//     moved to the declared domain).

// sonicDomain is one MCLAG_DOMAIN row.
type sonicDomain struct {
	SourceIP string `json:"source_ip"`
	PeerIP   string `json:"peer_ip"`
	PeerLink string `json:"peer_link"`
}

// sonicMCLAGs reads MCLAG_DOMAIN and MCLAG_INTERFACE: per port-channel, the MLAG half it is
// (fabric.Endpoint.MCLAG's when its domain is the declared one and set as declared).
func sonicMCLAGs(ep fabric.Endpoint, domainOut, interfaceOut string) (map[string]*fabric.MLAG, error) {
	var domains map[string]sonicDomain
	if err := sonicJSON(domainOut, &domains); err != nil {
		return nil, fmt.Errorf("sonic-cfggen MCLAG_DOMAIN: %w", err)
	}
	var rows map[string]any
	if err := sonicJSON(interfaceOut, &rows); err != nil {
		return nil, fmt.Errorf("sonic-cfggen MCLAG_INTERFACE: %w", err)
	}
	out := map[string]*fabric.MLAG{}
	for key := range rows {
		d, pc, ok := strings.Cut(key, "|")
		id, err := strconv.Atoi(d)
		if !ok || err != nil {
			return nil, fmt.Errorf("sonic-cfggen MCLAG_INTERFACE: key %q is not <domain>|<port-channel>", key)
		}
		out[pc] = &fabric.MLAG{Domain: id}
		if m := ep.MCLAG; m != nil && m.Domain == id && domains[d] == (sonicDomain{SourceIP: m.SourceAddress, PeerIP: m.PeerAddress, PeerLink: m.PeerLink}) {
			out[pc] = m.MLAG()
		}
	}
	return out, nil
}

// mclag writes the MCLAG part of a bond change for port-channel pc, whose current MLAG half is
// cur (nil: none) and wanted one want (nil: none). It runs after the port-channel exists (and
// before it is deleted, see dropChannel): SONiC refuses a member whose port-channel is missing.
//
//	sudo config mclag add DOMAIN SOURCE PEER PEERLINK   (once per batch, when a member is added
//	                                                    or the domain reads back otherwise)
//	sudo config mclag member del DOMAIN PC              (a member of another domain, or no
//	                                                    longer wanted)
//	sudo config mclag member add DOMAIN PC
func (r *sonicRender) mclag(pc string, cur, want *fabric.MLAG, ep fabric.Endpoint) {
	if cur != nil && (want == nil || cur.Domain != want.Domain) {
		r.add(fmt.Sprintf("sudo config mclag member del %d %s", cur.Domain, pc))
		cur = nil
	}
	if want == nil || (cur != nil && *cur == *want) {
		return
	}
	if !r.domainSent {
		m := ep.MCLAG
		r.add(fmt.Sprintf("sudo config mclag add %d %s %s %s", m.Domain, m.SourceAddress, m.PeerAddress, m.PeerLink))
		r.domainSent = true
	}
	if cur == nil {
		r.add(fmt.Sprintf("sudo config mclag member add %d %s", want.Domain, pc))
	}
}

// checkMCLAG refuses an MLAG half the switch's declared domain cannot carry: none declared
// (mlagPairs[].sonic missing), or another pair or domain than the declared one.
func checkMCLAG(ep fabric.Endpoint, want *fabric.MLAG) error {
	m := ep.MCLAG
	switch {
	case m == nil:
		return fmt.Errorf("switch %s is half of MLAG pair %s, but no SONiC MCLAG domain is declared for it: set the NetworkDevice's mlagPairs[%s].sonic (each switch's sourceAddress and peerLink)",
			ep.Switch, want.Pair, want.Pair)
	case m.Pair != want.Pair || m.Domain != want.Domain || m.Peer != want.Peer:
		return fmt.Errorf("switch %s's SONiC MCLAG domain is pair %s's (domain %d, peer %s), not pair %s's (domain %d, peer %s): a SONiC switch has one MCLAG domain; put the switch in one pair",
			ep.Switch, m.Pair, m.Domain, m.Peer, want.Pair, want.Domain, want.Peer)
	}
	return nil
}
