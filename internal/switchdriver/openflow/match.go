package openflow

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	of "antrea.io/libOpenflow/openflow15"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Ethernet types and IP protocols of fabric.Flow's Proto keywords.
const (
	ethIPv4 = 0x0800
	ethIPv6 = 0x86dd

	protoICMP   = 1
	protoTCP    = 6
	protoUDP    = 17
	protoICMPv6 = 58
)

// protoMatch is what a Proto keyword matches: an Ethernet type and, for all but ip and ipv6, an
// IP protocol.
type protoMatch struct {
	ethType uint16
	ipProto uint8
}

var protoMatches = map[string]protoMatch{
	"ip": {ethIPv4, 0}, "ipv6": {ethIPv6, 0},
	"icmp": {ethIPv4, protoICMP}, "icmp6": {ethIPv6, protoICMPv6},
	"tcp": {ethIPv4, protoTCP}, "tcp6": {ethIPv6, protoTCP},
	"udp": {ethIPv4, protoUDP}, "udp6": {ethIPv6, protoUDP},
}

// flowMatch builds the OXM match of f, fields in prerequisite order (Open vSwitch checks each
// field's prerequisites as it reads them). ports gives in_port's number.
func flowMatch(f fabric.Flow, ports map[string]PortInfo) (*of.Match, error) {
	m := of.NewMatch()
	switch {
	case (f.InPort == "") == (f.DLDst == ""):
		return nil, fmt.Errorf("set exactly one of inPort and dlDst (has %q and %q)", f.InPort, f.DLDst)
	case f.InPort != "":
		p, ok := ports[f.InPort]
		if !ok {
			return nil, fmt.Errorf("in_port %q: no such port on the bridge; its ports: %s", f.InPort, portNames(ports))
		}
		m.AddField(*of.NewInPortField(p.Number))
	default:
		mac, err := net.ParseMAC(f.DLDst)
		if err != nil || len(mac) != 6 {
			return nil, fmt.Errorf("dl_dst %q: not a MAC address such as 52:54:00:12:34:56", f.DLDst)
		}
		m.AddField(*of.NewEthDstField(mac, nil))
	}
	if f.VLAN != 0 {
		if f.VLAN < 1 || f.VLAN > 4094 {
			return nil, fmt.Errorf("dl_vlan %d: VLANs are 1 to 4094", f.VLAN)
		}
		// OpenFlow 1.3+ matches a tagged frame's VLAN with the "present" bit set (NewVlanIdField
		// sets it), as ovs-ofctl's dl_vlan=N does.
		m.AddField(*of.NewVlanIdField(uint16(f.VLAN), nil))
	}
	if f.Proto == "" {
		if f.NWSrc != "" || f.NWDst != "" || f.TPDst != nil {
			return nil, fmt.Errorf("addresses and ports need a protocol (ip, ipv6, tcp, ...)")
		}
		return m, nil
	}
	pm, ok := protoMatches[f.Proto]
	if !ok {
		return nil, fmt.Errorf("proto %q: use ip, ipv6, icmp, icmp6, tcp, tcp6, udp or udp6", f.Proto)
	}
	m.AddField(*of.NewEthTypeField(pm.ethType))
	if pm.ipProto != 0 {
		m.AddField(*of.NewIpProtoField(pm.ipProto))
	}
	for _, a := range []struct {
		cidr string
		dst  bool
	}{{f.NWSrc, false}, {f.NWDst, true}} {
		if a.cidr == "" {
			continue
		}
		field, err := addrField(a.cidr, pm.ethType == ethIPv6, a.dst)
		if err != nil {
			return nil, err
		}
		m.AddField(*field)
	}
	if f.TPDst != nil {
		if pm.ipProto != protoTCP && pm.ipProto != protoUDP {
			return nil, fmt.Errorf("tp_dst needs tcp, tcp6, udp or udp6, not %q", f.Proto)
		}
		m.AddField(portField(pm.ipProto, *f.TPDst))
	}
	return m, nil
}

// addrField is an IPv4 or IPv6 source or destination match of a CIDR.
func addrField(cidr string, v6, dst bool) (*of.MatchField, error) {
	name := map[bool]string{false: "nw_src", true: "nw_dst"}[dst]
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, fmt.Errorf("%s %q: not a CIDR such as 10.0.0.0/8", name, cidr)
	}
	if prefix.Addr().Is6() != v6 {
		return nil, fmt.Errorf("%s %q: not an %s address, as the flow's protocol is", name, cidr, map[bool]string{false: "IPv4", true: "IPv6"}[v6])
	}
	prefix = prefix.Masked()
	addr := net.IP(prefix.Addr().AsSlice())
	mask := net.IP(net.CIDRMask(prefix.Bits(), prefix.Addr().BitLen()))
	switch {
	case !v6 && !dst:
		return of.NewIpv4SrcField(addr, &mask), nil
	case !v6:
		return of.NewIpv4DstField(addr, &mask), nil
	case !dst:
		return of.NewIpv6SrcField(addr, &mask), nil
	}
	return of.NewIpv6DstField(addr, &mask), nil
}

// portField is a masked TCP or UDP destination port match (OpenFlow's spec has no mask for
// ports, Open vSwitch accepts one).
func portField(ipProto uint8, pm fabric.PortMask) of.MatchField {
	field := uint8(of.OXM_FIELD_TCP_DST)
	if ipProto == protoUDP {
		field = of.OXM_FIELD_UDP_DST
	}
	return of.MatchField{
		Class: of.OXM_CLASS_OPENFLOW_BASIC, Field: field, HasMask: true, Length: 4,
		Value: of.NewPortField(pm.Value), Mask: of.NewPortField(pm.Mask),
	}
}

// readFlow turns a flow the switch reports back into a fabric.Flow; names maps port numbers
// to names. A flow with a field or action metalwire never writes is an error naming it, so a
// caller never mistakes it for one of its own.
func readFlow(d *of.FlowDesc, names map[uint32]string) (fabric.Flow, error) {
	f := fabric.Flow{Cookie: d.Cookie, Priority: int(d.Priority)}
	if d.TableId != 0 {
		return f, fmt.Errorf("flow cookie=%#x is in table %d; metalwire writes table 0 only", d.Cookie, d.TableId)
	}
	var ethType uint16
	var ipProto uint8
	for _, mf := range d.Match.Fields {
		if mf.Class != of.OXM_CLASS_OPENFLOW_BASIC {
			return f, fmt.Errorf("flow cookie=%#x matches OXM class %#x field %d, which metalwire never writes", d.Cookie, mf.Class, mf.Field)
		}
		switch v := mf.Value.(type) {
		case *of.InPortField:
			f.InPort = names[v.InPort]
			if f.InPort == "" {
				f.InPort = fmt.Sprintf("ofport:%d", v.InPort) // a port removed since: never equal to a name
			}
		case *of.EthDstField:
			if mf.HasMask {
				return f, fmt.Errorf("flow cookie=%#x matches a masked eth_dst, which metalwire never writes", d.Cookie)
			}
			f.DLDst = v.EthDst.String() // empty with libOpenflow v0.15.0: Flows reads it from the message (ethDsts)
		case *of.VlanIdField:
			if mf.HasMask || v.VlanId&of.OFPVID_PRESENT == 0 {
				return f, fmt.Errorf("flow cookie=%#x matches vlan_vid %#x (masked: %v), which metalwire never writes", d.Cookie, v.VlanId, mf.HasMask)
			}
			f.VLAN = int(v.VlanId &^ of.OFPVID_PRESENT)
		case *of.EthTypeField:
			ethType = v.EthType
		case *of.IpProtoField:
			ipProto = v.Protocol
		case *of.Ipv4SrcField:
			f.NWSrc = cidrString(v.Ipv4Src, mf.Mask)
		case *of.Ipv4DstField:
			f.NWDst = cidrString(v.Ipv4Dst, mf.Mask)
		case *of.Ipv6SrcField:
			f.NWSrc = cidrString(v.Ipv6Src, mf.Mask)
		case *of.Ipv6DstField:
			f.NWDst = cidrString(v.Ipv6Dst, mf.Mask)
		case *of.PortField:
			if mf.Field != of.OXM_FIELD_TCP_DST && mf.Field != of.OXM_FIELD_UDP_DST {
				return f, fmt.Errorf("flow cookie=%#x matches OXM field %d, which metalwire never writes", d.Cookie, mf.Field)
			}
			pm := fabric.PortMask{Value: v.Port, Mask: 0xffff}
			if m, ok := mf.Mask.(*of.PortField); ok && mf.HasMask {
				pm.Mask = m.Port
			}
			f.TPDst = &pm
		default:
			return f, fmt.Errorf("flow cookie=%#x matches OXM field %d, which metalwire never writes", d.Cookie, mf.Field)
		}
	}
	f.Proto = protoKeyword(ethType, ipProto)
	if ethType != 0 && f.Proto == "" {
		return f, fmt.Errorf("flow cookie=%#x matches eth_type %#x ip_proto %d, which metalwire never writes", d.Cookie, ethType, ipProto)
	}
	drop, err := isDrop(d.Instructions)
	if err != nil {
		return f, fmt.Errorf("flow cookie=%#x: %w", d.Cookie, err)
	}
	f.Drop = drop
	return f, nil
}

// protoKeyword is the Proto keyword of an Ethernet type and IP protocol ("" for none).
func protoKeyword(ethType uint16, ipProto uint8) string {
	for k, pm := range protoMatches {
		if pm == (protoMatch{ethType, ipProto}) {
			return k
		}
	}
	return ""
}

// cidrString writes an address and its mask as a CIDR (a missing mask is a whole address).
func cidrString(ip net.IP, mask any) string {
	addr, _ := netip.AddrFromSlice(ip)
	addr = addr.Unmap()
	bits := addr.BitLen()
	var m net.IP
	switch v := mask.(type) {
	case *of.Ipv4SrcField:
		m = v.Ipv4Src
	case *of.Ipv4DstField:
		m = v.Ipv4Dst
	case *of.Ipv6SrcField:
		m = v.Ipv6Src
	case *of.Ipv6DstField:
		m = v.Ipv6Dst
	}
	if m != nil {
		if addr.Is4() {
			m = m.To4()
		}
		ones, total := net.IPMask(m).Size()
		if total == 0 { // not a prefix mask: show it whole rather than guess
			return addr.String() + "/" + m.String()
		}
		bits = ones
	}
	return netip.PrefixFrom(addr, bits).String()
}

// isDrop reads a flow's instructions: none is a drop, one apply-actions of output NORMAL an
// allow; anything else metalwire never writes.
func isDrop(instrs []of.Instruction) (bool, error) {
	if len(instrs) == 0 {
		return true, nil
	}
	if len(instrs) == 1 {
		if ia, ok := instrs[0].(*of.InstrActions); ok && ia.Type == of.InstrType_APPLY_ACTIONS && len(ia.Actions) == 1 {
			if out, ok := ia.Actions[0].(*of.ActionOutput); ok && out.Port == of.P_NORMAL {
				return false, nil
			}
		}
	}
	return false, fmt.Errorf("its actions are not output:NORMAL or drop, which is all metalwire writes")
}

// Normalize writes a flow as the switch reports it back (Flows): the CIDRs masked and in
// canonical form, the MAC in lower case, an unmasked port as mask 0xffff. Comparing
// Normalize(desired) with Flows' result is exact.
func Normalize(f fabric.Flow) fabric.Flow {
	f.DLDst = strings.ToLower(f.DLDst)
	if mac, err := net.ParseMAC(f.DLDst); err == nil {
		f.DLDst = mac.String()
	}
	for _, s := range []*string{&f.NWSrc, &f.NWDst} {
		if p, err := netip.ParsePrefix(*s); err == nil {
			*s = p.Masked().String()
		}
	}
	return f
}
