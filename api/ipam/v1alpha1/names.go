package v1alpha1

import (
	"net/netip"
	"strings"
)

// IPAddressName is the name of the IPAddress object (metal3 or Cluster API) for address ip from a
// pool with the given namePrefix: "<namePrefix>-<address with '.' and ':' replaced by '-'>",
// with trailing '-' trimmed so the name ends with a letter or digit.
//
// The address is first put in canonical form (RFC 5952 for IPv6: lowercase, leading zeros
// dropped, the longest run of zero groups compressed to "::"; zone dropped), so every spelling
// of one address gives one name. That is what makes the name a lock: the API server refuses a
// second IPAddress for the same address. Canonical compressed IPv6 is also the form upstream
// names its IPAddresses with, so names stay the same after taking over an upstream
// installation.
//
// The mapping is one to one: '-' never occurs in an address, and a trimmed trailing "--" can
// only come from a trailing "::" (a canonical address with fewer groups and no "::" is not
// valid). Examples: 192.168.0.10 -> pool-192-168-0-10, 2001:db8::1 -> pool-2001-db8--1,
// 2001:db8:: -> pool-2001-db8.
//
// A string that is not an IP address is lowercased and converted the same way, so a caller
// never gets a name with characters an object name cannot hold; callers should pass validated
// addresses.
func IPAddressName(namePrefix, ip string) string {
	if addr, err := netip.ParseAddr(ip); err == nil {
		return string(AppendIPAddressName(make([]byte, 0, len(namePrefix)+1+len(ip)), namePrefix, addr))
	}
	return strings.TrimRight(namePrefix+"-"+addressSeparators.Replace(strings.ToLower(ip)), "-")
}

// AppendIPAddressName appends the name IPAddressName gives addr to b and returns the extended
// slice, for a caller that compares the names of many addresses without making a string of each.
func AppendIPAddressName(b []byte, namePrefix string, addr netip.Addr) []byte {
	start := len(b)
	b = append(b, namePrefix...)
	b = append(b, '-')
	text := len(b)
	b = addr.WithZone("").AppendTo(b)
	for i := text; i < len(b); i++ {
		if b[i] == '.' || b[i] == ':' {
			b[i] = '-'
		}
	}
	for len(b) > start && b[len(b)-1] == '-' {
		b = b[:len(b)-1]
	}
	return b
}

// addressSeparators turns an address's separators into '-'; a Replacer is safe to share.
var addressSeparators = strings.NewReplacer(".", "-", ":", "-")
