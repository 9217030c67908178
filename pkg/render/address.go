package render

import (
	"math/big"
	"net"
	"net/netip"
	"strings"
)

// addressRange is the seed-era inline address: start + index*step, bounded by end and subnet.
type addressRange struct {
	start, end, subnet *string
	step               int32
}

// at computes the address of index, and the subnet's prefix length (-1 without a subnet).
func (r addressRange) at(field string, index int) (netip.Addr, int, error) {
	prefixLen := -1
	var subnet netip.Prefix
	if r.subnet != nil {
		p, err := netip.ParsePrefix(*r.subnet)
		if err != nil {
			return netip.Addr{}, 0, invalid(field+".subnet", "%q is not a subnet in CIDR notation; write it like 192.168.0.0/24 or 2001:db8::/64", *r.subnet)
		}
		subnet = p.Masked()
		prefixLen = p.Bits()
	}
	var start netip.Addr
	switch {
	case r.start != nil:
		a, err := netip.ParseAddr(*r.start)
		if err != nil {
			return netip.Addr{}, 0, invalid(field+".start", "%q is not an IP address; write it like 192.168.0.10 or 2001:db8::10", *r.start)
		}
		start = a.Unmap()
	case r.subnet != nil:
		// The subnet's first address is the network itself; hosts start at the second.
		start = subnet.Addr().Next()
		if !start.IsValid() || !subnet.Contains(start) {
			return netip.Addr{}, 0, invalid(field+".subnet", "%s has no second address to start from; give start, or a larger subnet", subnet)
		}
	default:
		return netip.Addr{}, 0, invalid(field, "needs start or subnet: give the first address to hand out, or the subnet to take it from")
	}
	if r.subnet != nil && subnet.Addr().Is4() != start.Is4() {
		return netip.Addr{}, 0, invalid(field+".start", "%s and subnet %s are of different IP families; use one family in an address range", start, subnet)
	}
	step := r.step
	if step == 0 {
		step = 1 // the CRD default, missing when a template is read from a file
	}
	if step < 0 {
		return netip.Addr{}, 0, invalid(field+".step", "%d is negative; give a step of 1 or more", step)
	}
	if index < 0 {
		return netip.Addr{}, 0, invalid(field, "index %d is negative; indexes start at 0", index)
	}
	addr, ok := addOffset(start, new(big.Int).Mul(big.NewInt(int64(index)), big.NewInt(int64(step))))
	if !ok {
		return netip.Addr{}, 0, invalid(field, "index %d with step %d runs past the last IP address after %s; lower step or use an IP pool", index, step, start)
	}
	if r.end != nil {
		end, err := netip.ParseAddr(*r.end)
		if err != nil {
			return netip.Addr{}, 0, invalid(field+".end", "%q is not an IP address; write it like 192.168.0.100 or 2001:db8::100", *r.end)
		}
		end = end.Unmap()
		if end.Is4() != start.Is4() {
			return netip.Addr{}, 0, invalid(field+".end", "%s and start %s are of different IP families; use one family in an address range", end, start)
		}
		if addr.Compare(end) > 0 {
			return netip.Addr{}, 0, invalid(field+".end", "index %d gives %s, past end %s: raise end, or take addresses from an IP pool (ipAddressFromIPPool)", index, addr, end)
		}
	}
	if r.subnet != nil && !subnet.Contains(addr) {
		return netip.Addr{}, 0, invalid(field+".subnet", "index %d gives %s, outside subnet %s: give an end inside the subnet, or take addresses from an IP pool", index, addr, subnet)
	}
	return addr, prefixLen, nil
}

// addOffset returns a+offset, or false when that leaves the address family's space.
func addOffset(a netip.Addr, offset *big.Int) (netip.Addr, bool) {
	raw := a.AsSlice()
	n := new(big.Int).SetBytes(raw)
	n.Add(n, offset)
	if n.BitLen() > len(raw)*8 {
		return netip.Addr{}, false
	}
	out := n.FillBytes(make([]byte, len(raw)))
	res, ok := netip.AddrFromSlice(out)
	return res, ok
}

// netmask writes a prefix length as network_data.json wants it: dotted for IPv4
// (255.255.255.0), the shortest IPv6 form for IPv6 (ffff:ffff:ffff:ffff::).
func netmask(prefixLen int, ipv4 bool) string {
	if ipv4 {
		m := net.CIDRMask(prefixLen, 32)
		return net.IPv4(m[0], m[1], m[2], m[3]).String()
	}
	return net.IP(net.CIDRMask(prefixLen, 128)).String()
}

// parseMAC accepts six hex pairs separated by colons or hyphens and returns them lower-case with
// colons, the form cloud-init, netplan and nmstate compare against.
func parseMAC(s string) (string, bool) {
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 || (strings.Count(s, ":") != 5 && strings.Count(s, "-") != 5) {
		return "", false
	}
	return hw.String(), true
}

// macHint is the fix shown with a bad MAC.
const macHint = "write six hex pairs separated by colons, like 52:54:00:12:34:56"

// parseAddr parses an address of the given family (4 or 6), for the field's message.
func parseAddr(field, s string, family int) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, invalid(field, "%q is not an IP address; write it like %s", s, familyExample(family))
	}
	a = a.Unmap()
	if family == 4 && !a.Is4() || family == 6 && !a.Is6() {
		return netip.Addr{}, invalid(field, "%s is not an IPv%d address; write it like %s", s, family, familyExample(family))
	}
	return a, nil
}

func familyExample(family int) string {
	switch family {
	case 4:
		return "192.168.0.1"
	case 6:
		return "2001:db8::1"
	}
	return "192.168.0.1 or 2001:db8::1"
}

func familyOf(ipv4 bool) int {
	if ipv4 {
		return 4
	}
	return 6
}

// checkPrefix refuses a prefix length the family cannot have, and IPv4 /32: its netmask
// 255.255.255.255 is not allowed by the network_data.json schema Ironic enforces.
func checkPrefix(field string, prefixLen int, ipv4 bool) error {
	limit := 128
	if ipv4 {
		limit = 32
	}
	if prefixLen < 0 || prefixLen > limit {
		return invalid(field, "%d is not a prefix length of an IPv%d network; give 0 to %d", prefixLen, familyOf(ipv4), limit)
	}
	if ipv4 && prefixLen == 32 {
		return invalid(field, "prefix 32 gives netmask 255.255.255.255, which the network_data.json schema Ironic enforces does not allow; use 31 or less (for a host route, route the smallest subnet holding it)")
	}
	return nil
}
