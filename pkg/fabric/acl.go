package fabric

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Access lists on Open vSwitch. A switch port's ACL is a list of ordered rules and a default;
// Open vSwitch has no ACL table, so each rule becomes OpenFlow flows above the bridge's NORMAL
// flow. Every flow carries a cookie derived from the host and the network, so the flows of one
// host's network are found, compared and removed exactly, and flows metalwire did not write
// (other cookies) are never touched.

// Direction is which way a rule's traffic crosses the switch port: ingress is what the host
// sends into the switch, egress what the switch sends out to the host.
const (
	DirectionIngress = "ingress"
	DirectionEgress  = "egress"
)

// Actions of a rule.
const (
	ActionAllow = "allow"
	ActionDeny  = "deny"
)

// Protocol is an ACL rule's protocol, parsed: all traffic, ICMP, or TCP/UDP to a port range.
type Protocol struct {
	// Name is "all", "icmp", "tcp" or "udp".
	Name string
	// FirstPort and LastPort bound the destination ports of tcp and udp (both 0: any port).
	FirstPort, LastPort uint16
}

// Named protocols: the service each stands for.
var namedProtocols = map[string]Protocol{
	"all":   {Name: "all"},
	"icmp":  {Name: "icmp"},
	"ssh":   {Name: "tcp", FirstPort: 22, LastPort: 22},
	"http":  {Name: "tcp", FirstPort: 80, LastPort: 80},
	"https": {Name: "tcp", FirstPort: 443, LastPort: 443},
}

// ParseProtocol reads a rule's protocol: all, icmp, ssh, http, https, tcp:N, udp:N, tcp:N-M or
// udp:N-M (ports 1-65535, N <= M).
func ParseProtocol(s string) (Protocol, error) {
	if p, ok := namedProtocols[s]; ok {
		return p, nil
	}
	name, ports, ok := strings.Cut(s, ":")
	if !ok || (name != "tcp" && name != "udp") {
		return Protocol{}, fmt.Errorf("protocol %q: use all, icmp, ssh, http, https, tcp:N, udp:N, tcp:N-M or udp:N-M", s)
	}
	first, last, isRange := strings.Cut(ports, "-")
	if !isRange {
		last = first
	}
	lo, errLo := strconv.ParseUint(first, 10, 16)
	hi, errHi := strconv.ParseUint(last, 10, 16)
	switch {
	case errLo != nil || errHi != nil || lo == 0 || hi == 0:
		return Protocol{}, fmt.Errorf("protocol %q: ports are numbers from 1 to 65535", s)
	case lo > hi:
		return Protocol{}, fmt.Errorf("protocol %q: the range starts after it ends; write the lower port first", s)
	}
	return Protocol{Name: name, FirstPort: uint16(lo), LastPort: uint16(hi)}, nil
}

// PortMask is one OpenFlow transport-port match: the ports p with p&Mask == Value.
type PortMask struct{ Value, Mask uint16 }

// PortMasks covers the ports first..last with the fewest value/mask matches (OpenFlow matches
// ports by mask, not by range): 1024-65535 is six matches, a single port one.
func PortMasks(first, last uint16) []PortMask {
	var out []PortMask
	lo, hi := uint32(first), uint32(last)
	for lo <= hi {
		// The largest aligned block starting at lo that does not pass hi.
		size := uint32(1)
		for lo%(size*2) == 0 && lo+size*2-1 <= hi && size*2 <= 1<<16 {
			size *= 2
		}
		// lo <= hi <= 65535 and 1 <= size <= 65536: both fit 16 bits (a mask of 0 is "any").
		out = append(out, PortMask{Value: uint16(lo), Mask: uint16(0x10000 - size)}) //nolint:gosec // bounded above
		lo += size
	}
	return out
}

// CookiePrefix marks every flow metalwire writes: the cookie's top 16 bits ("mw").
const (
	CookiePrefix uint64 = 0x6d77 << 48
	// CookiePrefixMask selects the prefix of a cookie.
	CookiePrefixMask uint64 = 0xffff << 48
)

// ACLCookie is the cookie of the flows of one host's network: the prefix and 40 bits of a hash
// of both names (the bits its ACLName spells, so each gives the other).
func ACLCookie(host, network string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(host + "\x00" + network))
	return CookiePrefix | h.Sum64()&0xffffffffff
}

// ACLName is the name of the access list of a host's network on a switch: stable, one per host
// and network, and a valid list name on every switch OS metalwire drives (13 letters and digits).
func ACLName(host, network string) string { return ACLNameOfCookie(ACLCookie(host, network)) }

// ACLCookieOfName is the cookie of the list named name (an ACLName): the prefix and its 40 bits.
// A name not made by ACLName gives the bare prefix, which no list's flows carry.
func ACLCookieOfName(name string) uint64 {
	v, err := strconv.ParseUint(strings.TrimPrefix(name, "acl"), 16, 40)
	if err != nil || !strings.HasPrefix(name, "acl") {
		return CookiePrefix
	}
	return CookiePrefix | v
}

// ACLNameOfCookie is the name of the list whose flows carry cookie: a switch that keeps flows
// (Open vSwitch) names what it reads back by it.
func ACLNameOfCookie(cookie uint64) string { return fmt.Sprintf("acl%010x", cookie&0xffffffffff) }

// Flow is one OpenFlow flow of an ACL, described as ovs-ofctl reads it (OfctlSpec) and as an
// OpenFlow driver builds its match.
type Flow struct {
	Cookie   uint64
	Priority int
	// InPort matches frames the port's host sends (ingress); DLDst frames sent to the host's
	// MAC (egress). Exactly one is set.
	InPort string
	DLDst  string
	// VLAN matches frames tagged with it (a trunk network's); 0: any.
	VLAN int
	// Proto is "" (any frame), or ip, ipv6, icmp, icmp6, tcp, tcp6, udp, udp6.
	Proto string
	// NWSrc and NWDst are the remote CIDR (egress: source; ingress: destination); "" for any.
	NWSrc, NWDst string
	// TPDst is the destination port match of tcp and udp (nil: any).
	TPDst *PortMask
	// Drop is a deny; an allow hands the frame to NORMAL switching.
	Drop bool
}

// OfctlSpec writes the flow as `ovs-ofctl add-flow` reads it.
func (f Flow) OfctlSpec() string {
	parts := []string{fmt.Sprintf("cookie=%#x", f.Cookie), fmt.Sprintf("priority=%d", f.Priority)}
	if f.InPort != "" {
		parts = append(parts, fmt.Sprintf("in_port=%q", f.InPort))
	}
	if f.DLDst != "" {
		parts = append(parts, "dl_dst="+strings.ToLower(f.DLDst))
	}
	if f.VLAN != 0 {
		parts = append(parts, fmt.Sprintf("dl_vlan=%d", f.VLAN))
	}
	if f.Proto != "" {
		parts = append(parts, f.Proto)
	}
	src, dst := "nw_src", "nw_dst"
	if strings.HasSuffix(f.Proto, "6") {
		src, dst = "ipv6_src", "ipv6_dst"
	}
	if f.NWSrc != "" {
		parts = append(parts, src+"="+f.NWSrc)
	}
	if f.NWDst != "" {
		parts = append(parts, dst+"="+f.NWDst)
	}
	if f.TPDst != nil {
		parts = append(parts, fmt.Sprintf("tp_dst=%#x/%#x", f.TPDst.Value, f.TPDst.Mask))
	}
	action := "NORMAL"
	if f.Drop {
		action = "drop"
	}
	return strings.Join(parts, ",") + ",actions=" + action
}

// PortACL is what an access list needs to know of the port it is bound to.
type PortACL struct {
	// Port is the switch port's name; HostMACs the MACs the host's traffic is addressed to
	// (its cards on the port).
	Port     string
	HostMACs []string
	// Members are the ports the frames of a bond come in on (Port is then the bond's name and
	// matches nothing itself); empty for a port.
	Members []string
	// VLAN: the rules match frames of this VLAN only (a trunk network); 0: any.
	VLAN int
	// Cookie marks the flows (ACLCookie of the host and network).
	Cookie uint64
	// Rules in order, then the default: deny all when DefaultDeny, else allow.
	Rules       []ACLRule
	DefaultDeny bool
}

// Priorities: rules from aclTopPriority down, one step each, the default last; all above the
// bridge's NORMAL flow (priority 0).
const aclTopPriority = 30000

// ACLFlows turns a port's access list into flows, in priority order. An invalid rule is an
// error naming it.
func ACLFlows(a PortACL) ([]Flow, error) {
	var out []Flow
	prio := aclTopPriority
	for i, r := range a.Rules {
		flows, err := ruleFlows(a, r)
		if err != nil {
			return nil, fmt.Errorf("acl[%d]: %w", i, err)
		}
		for _, f := range flows {
			f.Priority = prio
			out = append(out, f)
		}
		prio--
	}
	for _, dir := range []string{DirectionIngress, DirectionEgress} {
		for _, f := range directionFlows(a, dir) {
			f.Priority, f.Drop = prio, a.DefaultDeny
			out = append(out, f)
		}
	}
	return out, nil
}

// directionFlows are the bare flows of one direction: the port's frames, or each host MAC's.
func directionFlows(a PortACL, dir string) []Flow {
	if dir == DirectionIngress {
		ports := a.Members
		if len(ports) == 0 {
			ports = []string{a.Port}
		}
		out := make([]Flow, 0, len(ports))
		for _, p := range ports {
			out = append(out, Flow{Cookie: a.Cookie, InPort: p, VLAN: a.VLAN})
		}
		return out
	}
	out := make([]Flow, 0, len(a.HostMACs))
	for _, mac := range a.HostMACs {
		out = append(out, Flow{Cookie: a.Cookie, DLDst: mac, VLAN: a.VLAN})
	}
	return out
}

func ruleFlows(a PortACL, r ACLRule) ([]Flow, error) {
	if r.Direction != DirectionIngress && r.Direction != DirectionEgress {
		return nil, fmt.Errorf("direction %q: use ingress or egress", r.Direction)
	}
	if r.Action != ActionAllow && r.Action != ActionDeny {
		return nil, fmt.Errorf("action %q: use allow or deny", r.Action)
	}
	proto, err := ParseProtocol(r.Protocol)
	if err != nil {
		return nil, err
	}
	families := []string{"4", "6"}
	remote := r.Remote
	if remote != "" {
		prefix, err := netip.ParsePrefix(remote)
		if err != nil {
			return nil, fmt.Errorf("remote %q: not a CIDR such as 10.0.0.0/8: %w", remote, err)
		}
		// Written as a switch reads it back (10.1.2.3/8 is 10.0.0.0/8), so a pass with nothing
		// changed finds the flows equal.
		remote = prefix.Masked().String()
		families = families[:1]
		if prefix.Addr().Is6() {
			families = []string{"6"}
		}
	}
	var out []Flow
	for _, base := range directionFlows(a, r.Direction) {
		base.Drop = r.Action == ActionDeny
		if proto.Name == "all" && remote == "" {
			out = append(out, base)
			continue
		}
		for _, fam := range families {
			f := base
			f.Proto = protoKeyword(proto.Name, fam)
			if remote != "" {
				if r.Direction == DirectionIngress {
					f.NWDst = remote
				} else {
					f.NWSrc = remote
				}
			}
			if proto.FirstPort == 0 {
				out = append(out, f)
				continue
			}
			for _, pm := range PortMasks(proto.FirstPort, proto.LastPort) {
				g := f
				g.TPDst = &pm
				out = append(out, g)
			}
		}
	}
	return out, nil
}

// protoKeyword is ovs-ofctl's keyword for a protocol of an address family.
func protoKeyword(name, family string) string {
	switch {
	case name == "all" && family == "4":
		return "ip"
	case name == "all":
		return "ipv6"
	case family == "4":
		return name
	}
	return name + "6"
}

// FlowsOf is the list as OpenFlow flows: its own Flows when it was read back as flows, otherwise
// the flows of its rules on its port (each member's, for a bond) and host MACs.
func (a ACL) FlowsOf() ([]Flow, error) {
	if a.Flows != nil {
		return a.Flows, nil
	}
	return ACLFlows(PortACL{Port: a.Port, Members: a.Members, HostMACs: a.HostMACs, VLAN: a.VLAN, Cookie: a.Cookie, Rules: a.Rules, DefaultDeny: a.DefaultDeny})
}

// ACLsOfFlows groups flows read back from a switch that keeps flows (Open vSwitch) into the
// lists they make, by cookie, keeping only the lists named in names: what Read returns for them.
func ACLsOfFlows(flows []Flow, names []string) map[string]ACL {
	out := map[string]ACL{}
	for _, f := range flows {
		name := ACLNameOfCookie(f.Cookie)
		if !slices.Contains(names, name) {
			continue
		}
		a := out[name]
		a.Name, a.Cookie, a.Flows = name, f.Cookie, append(a.Flows, f)
		out[name] = a
	}
	return out
}

// SameACL says whether a switch's list (have, read back) is the wanted one: the same flows where
// either side is flows, otherwise the same port, members, VLAN and default, the same rules by
// meaning (SameRule), and the same host MACs when both sides carry them (a driver with nowhere
// on the switch to record them reads none back).
func SameACL(want, have ACL) bool {
	if want.Name != have.Name {
		return false
	}
	if want.Flows == nil && have.Flows == nil {
		if len(want.HostMACs) > 0 && len(have.HostMACs) > 0 &&
			!slices.Equal(lowerSorted(want.HostMACs), lowerSorted(have.HostMACs)) {
			return false
		}
		return want.Port == have.Port && want.VLAN == have.VLAN && want.DefaultDeny == have.DefaultDeny &&
			slices.Equal(sortedNames(want.Members), sortedNames(have.Members)) &&
			slices.EqualFunc(want.Rules, have.Rules, SameRule)
	}
	wf, errW := want.FlowsOf()
	hf, errH := have.FlowsOf()
	return errW == nil && errH == nil && slices.Equal(flowSpecs(wf), flowSpecs(hf))
}

// SameRule says whether two rules match the same traffic the same way: the same direction and
// action, the same protocol once parsed (ssh, tcp:22 and tcp:22-22 are one), and the same remote
// network (10.1.2.3/8 is 10.0.0.0/8). A protocol or remote that does not parse is compared as
// written.
func SameRule(a, b ACLRule) bool {
	if a.Direction != b.Direction || a.Action != b.Action {
		return false
	}
	pa, errA := ParseProtocol(a.Protocol)
	pb, errB := ParseProtocol(b.Protocol)
	if errA != nil || errB != nil {
		if a.Protocol != b.Protocol {
			return false
		}
	} else if pa != pb {
		return false
	}
	if a.Remote == b.Remote {
		return true
	}
	ra, errA := netip.ParsePrefix(a.Remote)
	rb, errB := netip.ParsePrefix(b.Remote)
	return errA == nil && errB == nil && ra.Masked() == rb.Masked()
}

// flowSpecs is a set of flows written one way, sorted: what two flow lists are compared by.
func flowSpecs(fs []Flow) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.OfctlSpec())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func lowerSorted(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strings.ToLower(v)
	}
	return sortedNames(out)
}

// Describe reads as a list's configuration: "vlan 1001 2 rules then allow (2 host MACs)".
func (a ACL) Describe() string {
	s := fmt.Sprintf("%d rule(s) then ", len(a.Rules))
	if a.DefaultDeny {
		s += ActionDeny
	} else {
		s += ActionAllow
	}
	if a.VLAN != 0 {
		s = fmt.Sprintf("vlan %d ", a.VLAN) + s
	}
	return s
}

// OSesWithoutACLs are the switch operating systems (networkOS) whose drivers bind no access list,
// and why: a network with an acl on them is refused before anything is configured, and the host
// is not offered. Every other driver is an ACLSetter (checked by switchdriver/builtin's tests).
var OSesWithoutACLs = map[string]string{
	"equinix-metal": "Equinix Metal's API has no per-port access list; filter on the hosts instead",
}

// OSesWithoutTrunkACLs are the switch operating systems whose drivers bind access lists to a
// port (they are ACLSetters) but cannot scope one to a single VLAN of a trunk (ACL.VLAN), and
// why: a network with an acl that a host carries tagged on such a switch is refused before
// anything is configured, and the host is not offered. Their drivers refuse such a list with
// ErrUnsupported naming the OS.
var OSesWithoutTrunkACLs = map[string]string{
	"eos":        "an EOS port access list applies to every VLAN the port carries; IP access lists cannot match a VLAN",
	"dellos10":   "an OS10 port access list applies to every VLAN the port carries; IP access lists cannot match a VLAN",
	"nxos":       "an NX-OS port access list filters every VLAN of the trunk it is bound to",
	"openconfig": "an OpenConfig interface's ingress and egress acl-sets apply to every VLAN the port carries",
	"cumulus":    "an NVUE interface's inbound and outbound access lists apply to every VLAN the interface carries",
	"sonic":      "a SONiC ACL table bound to a port (ACL_TABLE ports) filters every VLAN the port carries; its L3 and L3V6 rules match no VLAN",
	"junos": "a Junos port takes one ethernet-switching filter each way (filter input, filter output) for every VLAN it carries, " +
		"so the lists of the trunk networks sharing a port cannot each be bound",
}

// OSesWithoutPortState are the switch operating systems whose drivers cannot shut a port, and why:
// a network with portStatus down on them is refused before anything is configured, and the host
// is not offered. Every other driver is a PortStateSetter (checked by switchdriver/builtin's tests).
var OSesWithoutPortState = map[string]string{
	"equinix-metal": "Equinix Metal's API cannot shut a device's port; remove the host from the network instead",
}
