package fabric

import (
	"fmt"
	"net/netip"
)

// Check says what is wrong with a rule a switch driver is about to write, naming the field and
// the fix: its direction, action and protocol, and a remote that is not a CIDR or has host bits
// set (a switch shows 10.1.2.3/8 as 10.0.0.0/8, so the list would never read back as asked).
func (r ACLRule) Check() error {
	if r.Direction != DirectionIngress && r.Direction != DirectionEgress {
		return fmt.Errorf("direction %q: use ingress or egress", r.Direction)
	}
	if r.Action != ActionAllow && r.Action != ActionDeny {
		return fmt.Errorf("action %q: use allow or deny", r.Action)
	}
	if _, err := ParseProtocol(r.Protocol); err != nil {
		return err
	}
	if r.Remote == "" {
		return nil
	}
	p, err := netip.ParsePrefix(r.Remote)
	if err != nil {
		return fmt.Errorf("remote %q is not a CIDR such as 10.0.0.0/8", r.Remote)
	}
	if p.Masked() != p {
		return fmt.Errorf("remote %s has host bits set; write %s", r.Remote, p.Masked())
	}
	return nil
}

// OSesWithIngressOnlyACLs are the switch operating systems whose port access lists filter only
// what the host sends (ingress), and why: a list with an egress rule, or a deny default (which
// closes egress too), is refused on them (ACLFits); a list of ingress rules with the default
// allow is kept exactly, egress passing unfiltered as the model asks.
var OSesWithIngressOnlyACLs = map[string]string{
	"nxos": "NX-OS port access lists (ip port access-group, ipv6 port traffic-filter) filter only what a port receives",
}

// ACLLimit is what a switch OS's port access lists can keep of the model beyond ingress-only
// (OSesWithIngressOnlyACLs): why, and which lists it must refuse.
type ACLLimit struct {
	// Why is the OS's reason, quoted in every refusal.
	Why string
	// EgressIPv4Only: an egress rule needs an IPv4 remote (the OS filters no IPv6 outbound on a
	// port alone), and the default must be allow (a deny default would close IPv6 egress too).
	EgressIPv4Only bool
	// EgressSinglePort: an egress tcp or udp rule names one port, not a range.
	EgressSinglePort bool
	// NoAllowAll: a rule that allows all traffic (protocol all, no remote or a /0 one) is
	// refused, as the OS would ignore it and let the rules after it decide.
	NoAllowAll bool
}

// OSesWithLimitedACLs are the switch operating systems whose port access lists keep only part of
// the model, and how (ACLFits refuses the rest, naming the fix).
//
// Cumulus (NVUE, Cumulus Linux 5.x on Spectrum): "nv set acl NAME type ipv4|ipv6", rules "nv set
// acl NAME rule N match ip protocol|source-ip|dest-ip", "match ip tcp|udp dest-port P", "action
// permit|deny", bound with "nv set interface P acl NAME inbound|outbound". NVIDIA documents for
// Spectrum that IPv6 rules are matched in the ingress table only, so an outbound IPv6 list would
// filter what the switch sends every port, not just the host's; that port ranges are taken on
// ingress rules only; and that a rule matching everything with action permit is ignored.
// Traffic no rule matches passes (no implicit deny), so the default allow needs no rule.
var OSesWithLimitedACLs = map[string]ACLLimit{
	"cumulus": {
		Why: "NVUE on Spectrum matches IPv6 rules in the ingress table only, takes port ranges on ingress rules only, " +
			"and ignores a rule that matches everything and accepts",
		EgressIPv4Only: true, EgressSinglePort: true, NoAllowAll: true,
	},
}

// ACLFits says whether networkOS os can keep the list a as the model means it: nil, or why not
// and what to change. It is the per-list check both sides make: a driver before it sends
// anything, the controller before it offers a host (a network's rules, its default, and VLAN
// set when the host carries the network tagged). It reads OSesWithoutACLs,
// OSesWithoutTrunkACLs, OSesWithIngressOnlyACLs and OSesWithLimitedACLs.
func ACLFits(os string, a ACL) error {
	if why := OSesWithoutACLs[os]; why != "" {
		return fmt.Errorf("networkOS %s binds no access list (%s): remove the acl or use a switch that can", os, why)
	}
	if why := OSesWithoutTrunkACLs[os]; a.VLAN != 0 && why != "" {
		return fmt.Errorf("networkOS %s cannot scope an access list to one VLAN of a trunk (%s): carry the network untagged (portMode access) or remove the acl", os, why)
	}
	if lim, ok := OSesWithLimitedACLs[os]; ok {
		return lim.fits(os, a)
	}
	why := OSesWithIngressOnlyACLs[os]
	if why == "" {
		return nil
	}
	for i, r := range a.Rules {
		if r.Direction == DirectionEgress {
			return fmt.Errorf("acl[%d] is an egress rule, but networkOS %s filters ingress only (%s): drop the egress rules", i, os, why)
		}
	}
	if a.DefaultDeny {
		return fmt.Errorf("aclDefault deny would also close egress, but networkOS %s filters ingress only (%s): "+
			"set aclDefault allow and end the rules with an ingress deny all", os, why)
	}
	return nil
}

// fits checks a list against the limit (rules that do not parse are left to ACLRule.Check).
func (l ACLLimit) fits(os string, a ACL) error {
	for i, r := range a.Rules {
		p, errP := ParseProtocol(r.Protocol)
		remote, errR := netip.ParsePrefix(r.Remote)
		if errP != nil || (r.Remote != "" && errR != nil) {
			continue
		}
		if l.NoAllowAll && r.Action == ActionAllow && p.Name == "all" && (r.Remote == "" || remote.Bits() == 0) {
			return fmt.Errorf("acl[%d] allows all traffic, but networkOS %s would ignore it (%s): drop it and the %s rules after it, "+
				"which it shadows (the default allow passes what no rule matches)", i, os, l.Why, r.Direction)
		}
		if r.Direction != DirectionEgress {
			continue
		}
		if l.EgressIPv4Only && (r.Remote == "" || !remote.Addr().Is4()) {
			return fmt.Errorf("acl[%d] is an egress rule without an IPv4 remote, but networkOS %s filters only IPv4 outbound on a port (%s): "+
				"give it an IPv4 remote (such as 10.0.0.0/8) or drop it", i, os, l.Why)
		}
		if l.EgressSinglePort && p.FirstPort != p.LastPort {
			return fmt.Errorf("acl[%d] is an egress rule on ports %d-%d, but networkOS %s takes port ranges on ingress rules only (%s): "+
				"write one egress rule per port", i, p.FirstPort, p.LastPort, os, l.Why)
		}
	}
	if l.EgressIPv4Only && a.DefaultDeny {
		return fmt.Errorf("aclDefault deny would close IPv6 egress too, but networkOS %s filters only IPv4 outbound on a port (%s): "+
			"set aclDefault allow and end the rules with deny rules", os, l.Why)
	}
	return nil
}
