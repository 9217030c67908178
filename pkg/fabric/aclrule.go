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

// ACLFits says whether networkOS os can keep the list a as the model means it: nil, or why not
// and what to change. It is the per-list check both sides make: a driver before it sends
// anything, the controller before it offers a host (a network's rules, its default, and VLAN
// set when the host carries the network tagged). It reads OSesWithoutACLs,
// OSesWithoutTrunkACLs and OSesWithIngressOnlyACLs.
func ACLFits(os string, a ACL) error {
	if why := OSesWithoutACLs[os]; why != "" {
		return fmt.Errorf("networkOS %s binds no access list (%s): remove the acl or use a switch that can", os, why)
	}
	if why := OSesWithoutTrunkACLs[os]; a.VLAN != 0 && why != "" {
		return fmt.Errorf("networkOS %s cannot scope an access list to one VLAN of a trunk (%s): carry the network untagged (portMode access) or remove the acl", os, why)
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
