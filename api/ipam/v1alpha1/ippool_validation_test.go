package v1alpha1_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
)

// Each case is a pool a user might write. The refusals are the messages kubectl shows.
func TestIPPoolAdmission(t *testing.T) {
	runAdmissionCases(t, "IPPool", []admissionCase{
		// Pools that must be accepted.
		{name: "IPv4 range with subnet, gateway and DNS", spec: `
namePrefix: prov
prefix: 24
gateway: 192.168.0.1
dnsServers: [8.8.8.8, "2001:4860:4860::8888"]
pools:
- {start: 192.168.0.10, end: 192.168.0.250, subnet: 192.168.0.0/24}`},
		{name: "IPv6 range with subnet, gateway and DNS", spec: `
namePrefix: prov
pools:
- {start: "2001:db8::10", end: "2001:db8::ff", subnet: "2001:db8::/64", prefix: 64, gateway: "2001:db8::1", dnsServers: ["2001:db8::53"]}`},
		{name: "IPv6 in upper case and uncompressed form", spec: `
namePrefix: prov
pools:
- {start: "2001:DB8:0:0::10", end: "2001:0db8::00ff", subnet: "2001:DB8::/64"}`},
		{name: "IPv4 end with more digits than start is still after it", spec: `
namePrefix: prov
pools:
- {start: 10.0.0.9, end: 10.0.0.10}`},
		{name: "IPv6 end with a longer group is still after start", spec: `
namePrefix: prov
pools:
- {start: "2001:db8::ffff", end: "2001:db8::1:0"}`},
		{name: "a single address: start equals end", spec: `
namePrefix: prov
pools:
- {start: "::1", end: "0:0:0:0:0:0:0:1"}`},
		{name: "subnet alone", spec: `
namePrefix: prov
pools:
- {subnet: 10.1.0.0/16}`},
		{name: "dual stack: one entry per family, each with its own gateway and prefix", spec: `
namePrefix: prov
pools:
- {start: 10.0.0.10, end: 10.0.0.20, prefix: 24, gateway: 10.0.0.1}
- {start: "fd00::10", end: "fd00::20", prefix: 64, gateway: "fd00::1"}`},
		{name: "top-level prefix above 32 used only by IPv6 entries", spec: `
namePrefix: prov
prefix: 64
pools:
- {start: 10.0.0.10, end: 10.0.0.20, prefix: 24}
- {start: "fd00::10", end: "fd00::20"}`},
		{name: "random allocation, pre-allocations, exclusions and a grace period", spec: `
namePrefix: prov
allocationStrategy: random
pools:
- {subnet: 192.168.0.0/24}
preAllocations: {host-0-pool: 192.168.0.50, host-1-pool: "fd00::50"}
excludedAddresses: [192.168.0.7, 192.168.0.20-192.168.0.29, 192.168.0.64/28, "fd00::1-fd00::ff", "fd00:1::/64"]
reuseGracePeriod: 1h30m`},
		{name: "IPv6 with a dotted IPv4 tail", spec: `
namePrefix: nat64
pools:
- {start: "64:ff9b::192.0.2.1", end: "64:ff9b::192.0.2.99", prefix: 96}`},
		{name: "grace period of zero", spec: `
namePrefix: prov
reuseGracePeriod: "0"`},

		// Malformed values.
		{name: "start is not an address", spec: `
namePrefix: prov
pools:
- {start: 192.168.0.300, end: 192.168.0.20}`,
			want: `spec.pools[0].start: Invalid value: "192.168.0.300": start must be an IPv4 or IPv6 address such as 192.168.0.10 or 2001:db8::10`},
		{name: "IPv4 with leading zeros is refused, as ip() reads it ambiguously", spec: `
namePrefix: prov
pools:
- {start: 192.168.0.010}`,
			want: `spec.pools[0].start: Invalid value: "192.168.0.010": start must be an IPv4 or IPv6 address`},
		{name: "end is a malformed IPv6 address", spec: `
namePrefix: prov
pools:
- {start: "2001:db8::1", end: "2001:db8:::ff"}`,
			want: `spec.pools[0].end: Invalid value: "2001:db8:::ff": end must be an IPv4 or IPv6 address`},
		{name: "entry gateway is not an address", spec: `
namePrefix: prov
pools:
- {start: 10.0.0.10, gateway: router}`,
			want: `spec.pools[0].gateway: Invalid value: "router": gateway must be an IPv4 or IPv6 address`},
		{name: "entry DNS server is not an address", spec: `
namePrefix: prov
pools:
- {start: 10.0.0.10, dnsServers: [8.8.8.8, dns.example.com]}`,
			want: `spec.pools[0].dnsServers[1]: Invalid value: "dns.example.com": each dnsServers entry must be an IPv4 or IPv6 address`},
		{name: "top-level DNS server is not an address", spec: `
namePrefix: prov
dnsServers: ["2001:db8::zz"]`,
			want: `spec.dnsServers[0]: Invalid value: "2001:db8::zz": each dnsServers entry must be an IPv4 or IPv6 address`},
		{name: "top-level gateway is not an address", spec: `
namePrefix: prov
gateway: 10.0.0`,
			want: `spec.gateway: Invalid value: "10.0.0": gateway must be an IPv4 or IPv6 address`},
		{name: "subnet mask too long for IPv4", spec: `
namePrefix: prov
pools:
- {subnet: 10.0.0.0/33}`,
			want: `spec.pools[0].subnet: Invalid value: "10.0.0.0/33": must be a network in CIDR notation such as 192.168.0.0/24 or 2001:db8::/64`},
		{name: "subnet without a mask", spec: `
namePrefix: prov
pools:
- {subnet: "2001:db8::"}`,
			want: `spec.pools[0].subnet: Invalid value: "2001:db8::": must be a network in CIDR notation`},
		{name: "pre-allocated value is not an address", spec: `
namePrefix: prov
preAllocations: {host-0-pool: 192.168.0.5, host-1-pool: 192.168.0.256}`,
			want: `spec.preAllocations: Invalid value: every preAllocations value must be an IPv4 or IPv6 address`},
		{name: "one address pre-allocated to two claims (ip-address-manager issue 1440)", spec: `
namePrefix: prov
preAllocations: {host-0-pool: 192.168.0.5, host-1-pool: 192.168.0.5}`,
			want: `spec.preAllocations: Invalid value: preAllocations gives one address to two claims; give each claim its own address`},
		{name: "one IPv6 address pre-allocated to two claims, spelled two ways", spec: `
namePrefix: prov
preAllocations: {host-0-pool: "fd00::50", host-1-pool: "FD00:0:0::0050"}`,
			want: `spec.preAllocations: Invalid value: preAllocations gives one address to two claims`},

		// Prefix bounds.
		{name: "entry prefix above 128", spec: `
namePrefix: prov
pools:
- {start: "fd00::10", prefix: 129}`,
			want: `spec.pools[0].prefix: Invalid value: 129: spec.pools[0].prefix in body should be less than or equal to 128`},
		{name: "negative top-level prefix", spec: `
namePrefix: prov
prefix: -1`,
			want: `spec.prefix: Invalid value: -1: spec.prefix in body should be greater than or equal to 0`},
		{name: "entry prefix above 32 for IPv4", spec: `
namePrefix: prov
pools:
- {start: 10.0.0.10, end: 10.0.0.20, prefix: 33}`,
			want: `spec.pools[0].prefix: Invalid value: prefix must be between 0 and 32 for IPv4 addresses`},
		{name: "entry prefix above 32 for an IPv4 subnet", spec: `
namePrefix: prov
pools:
- {subnet: 10.0.0.0/24, prefix: 64}`,
			want: `spec.pools[0].prefix: Invalid value: prefix must be between 0 and 32 for IPv4 addresses`},
		{name: "top-level prefix above 32 inherited by an IPv4 entry", spec: `
namePrefix: prov
prefix: 64
pools:
- {start: "fd00::10", end: "fd00::20"}
- {start: 10.0.0.10, end: 10.0.0.20}`,
			want: `spec.prefix: Invalid value: prefix must be between 0 and 32: it applies to IPv4 addresses`},
		{name: "an entry prefix of 0 inherits the top-level one, as upstream reads it", spec: `
namePrefix: prov
prefix: 48
pools:
- {start: 10.0.0.10, end: 10.0.0.20, prefix: 0}`,
			want: `spec.prefix: Invalid value: prefix must be between 0 and 32: it applies to IPv4 addresses`},
		{name: "top-level prefix above 32 with an IPv4 gateway", spec: `
namePrefix: prov
prefix: 48
gateway: 10.0.0.1`,
			want: `spec.prefix: Invalid value: prefix must be between 0 and 32: it applies to IPv4 addresses`},

		// One address family per entry.
		{name: "IPv4 start with IPv6 end", spec: `
namePrefix: prov
pools:
- {start: 10.0.0.10, end: "fd00::20"}`,
			want: `spec.pools[0]: Invalid value: start, end, subnet and gateway must all be IPv4 or all IPv6; put each address family in its own pool entry`},
		{name: "IPv6 gateway in an IPv4 entry", spec: `
namePrefix: prov
pools:
- {subnet: 10.0.0.0/24, gateway: "fd00::1"}`,
			want: `spec.pools[0]: Invalid value: start, end, subnet and gateway must all be IPv4 or all IPv6`},
		{name: "IPv4 subnet around an IPv6 range", spec: `
namePrefix: prov
pools:
- {start: "fd00::10", end: "fd00::20", subnet: 10.0.0.0/8}`,
			want: `spec.pools[0]: Invalid value: start, end, subnet and gateway must all be IPv4 or all IPv6`},
		{name: "top-level IPv4 gateway inherited by an IPv6 entry", spec: `
namePrefix: prov
gateway: 10.0.0.1
pools:
- {start: 10.0.0.10, end: 10.0.0.20}
- {start: "fd00::10", end: "fd00::20"}`,
			want: `spec.gateway: Invalid value: gateway must be of the same address family as the pool entries that use it`},

		// Range shape.
		{name: "IPv4 end before start, though a text comparison would put it after", spec: `
namePrefix: prov
pools:
- {start: 10.0.0.10, end: 10.0.0.9}`,
			want: `spec.pools[0].end: Invalid value: end must not be before start; swap start and end`},
		{name: "IPv6 end before start", spec: `
namePrefix: prov
pools:
- {start: "2001:db8::10", end: "2001:db8::f"}`,
			want: `spec.pools[0].end: Invalid value: end must not be before start; swap start and end`},
		{name: "IPv6 end before start, compressed differently", spec: `
namePrefix: prov
pools:
- {start: "2001:db8:0:1::", end: "2001:db8::ffff:ffff:ffff:ffff"}`,
			want: `spec.pools[0].end: Invalid value: end must not be before start; swap start and end`},
		{name: "second entry reversed", spec: `
namePrefix: prov
pools:
- {start: 10.0.0.10, end: 10.0.0.20}
- {start: 10.0.1.20, end: 10.0.1.10}`,
			want: `spec.pools[1].end: Invalid value: end must not be before start`},
		{name: "start outside subnet", spec: `
namePrefix: prov
pools:
- {start: 10.0.1.10, subnet: 10.0.0.0/24}`,
			want: `spec.pools[0].start: Invalid value: start must be inside subnet; change start or widen subnet`},
		{name: "IPv6 end outside subnet", spec: `
namePrefix: prov
pools:
- {start: "fd00::10", end: "fd00:0:0:1::20", subnet: "fd00::/64"}`,
			want: `spec.pools[0].end: Invalid value: end must be inside subnet; change end or widen subnet`},
		{name: "entry with neither start nor subnet", spec: `
namePrefix: prov
pools:
- {end: 10.0.0.20, gateway: 10.0.0.1}`,
			want: `spec.pools[0]: Invalid value: a pool entry needs start or subnet`},

		// namePrefix.
		{name: "namePrefix missing", spec: `
pools:
- {subnet: 10.0.0.0/24}`,
			want: `spec.namePrefix: Required value`},
		{name: "namePrefix with capitals and underscore", spec: `
namePrefix: Prov_Net`,
			want: `spec.namePrefix: Invalid value: "Prov_Net": namePrefix must be lowercase letters, digits and '-', starting and ending with a letter or digit`},
		{name: "namePrefix ending with a dash", spec: `
namePrefix: prov-`,
			want: `spec.namePrefix: Invalid value: "prov-": namePrefix must be lowercase letters`},
		{name: "namePrefix longer than a DNS label", spec: `
namePrefix: ` + longName,
			want: `spec.namePrefix: Too long: may not be more than 63 bytes`},

		// metalwire additions.
		{name: "excluded range with the higher address first", spec: `
namePrefix: prov
excludedAddresses: [10.0.0.7, 10.0.0.29-10.0.0.20]`,
			want: `spec.excludedAddresses[1]: Invalid value: "10.0.0.29-10.0.0.20": each excludedAddresses entry must be an address (192.168.0.7), a range of one address family with the lower address first`},
		{name: "excluded IPv6 range reversed", spec: `
namePrefix: prov
excludedAddresses: ["fd00::ff-fd00::1"]`,
			want: `spec.excludedAddresses[0]: Invalid value: "fd00::ff-fd00::1": each excludedAddresses entry`},
		{name: "excluded range across families", spec: `
namePrefix: prov
excludedAddresses: ["10.0.0.1-fd00::1"]`,
			want: `spec.excludedAddresses[0]: Invalid value: "10.0.0.1-fd00::1": each excludedAddresses entry`},
		{name: "excluded entry that is a host name", spec: `
namePrefix: prov
excludedAddresses: [router.example.com]`,
			want: `spec.excludedAddresses[0]: Invalid value: "router.example.com": each excludedAddresses entry`},
		{name: "excluded CIDR with a bad mask", spec: `
namePrefix: prov
excludedAddresses: [10.0.0.0/40]`,
			want: `spec.excludedAddresses[0]: Invalid value: "10.0.0.0/40": each excludedAddresses entry`},
		{name: "negative grace period", spec: `
namePrefix: prov
reuseGracePeriod: -5m`,
			want: `spec.reuseGracePeriod: Invalid value: "-5m": reuseGracePeriod must be a non-negative duration such as 30s, 5m or 1h30m`},
		{name: "grace period in words", spec: `
namePrefix: prov
reuseGracePeriod: 5 minutes`,
			want: `spec.reuseGracePeriod: Invalid value: "5 minutes": reuseGracePeriod must be a non-negative duration`},
		{name: "unknown allocation strategy", spec: `
namePrefix: prov
allocationStrategy: roundrobin`,
			want: `spec.allocationStrategy: Unsupported value: "roundrobin": supported values: "sequential", "random"`},
	})
}

const longName = "prov-0123456789-0123456789-0123456789-0123456789-0123456789-abcd"

// An object without a spec is refused: nothing could be done with it (upstream's schema lets it
// through).
func TestSpecIsRequired(t *testing.T) {
	for _, kind := range []string{"IPPool", "IPClaim", "IPAddress"} {
		t.Run(kind, func(t *testing.T) {
			g := NewWithT(t)
			u := object(t, kind, "{}")
			delete(u.Object, "spec")
			expectRefused(g, env.Client.Create(context.Background(), u), "spec: Required value")
		})
	}
}
