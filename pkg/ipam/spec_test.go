package ipam

import (
	"math"
	"math/big"
	"net/netip"
	"testing"

	. "github.com/onsi/gomega"
)

func TestParseRanges(t *testing.T) {
	tests := []struct {
		name  string
		given Spec
		want  []string
	}{
		{
			name:  "subnet only: network and broadcast stay out",
			given: subnet24(),
			want:  []string{"10.0.0.1-10.0.0.254"},
		},
		{
			name:  "start and end, prefix from the top level",
			given: Spec{Prefix: 24, Pools: []Range{{Start: "10.0.0.10", End: "10.0.0.20"}}},
			want:  []string{"10.0.0.10-10.0.0.20"},
		},
		{
			name:  "start only runs to the end of start/prefix, broadcast excluded",
			given: Spec{Prefix: 24, Pools: []Range{{Start: "10.0.0.200"}}},
			want:  []string{"10.0.0.200-10.0.0.254"},
		},
		{
			name:  "entry prefix overrides the top-level prefix",
			given: Spec{Prefix: 24, Pools: []Range{{Start: "10.0.0.3", Prefix: 28}}},
			want:  []string{"10.0.0.3-10.0.0.14"},
		},
		{
			name:  "start and subnet: start to the end of the subnet",
			given: Spec{Pools: []Range{{Start: "10.0.0.100", Subnet: "10.0.0.0/24"}}},
			want:  []string{"10.0.0.100-10.0.0.254"},
		},
		{
			name:  "end and subnet: first host to end",
			given: Spec{Pools: []Range{{End: "10.0.0.9", Subnet: "10.0.0.0/24"}}},
			want:  []string{"10.0.0.1-10.0.0.9"},
		},
		{
			name:  "start, end and subnet covering the whole subnet: network and broadcast stay out",
			given: Spec{Pools: []Range{{Start: "10.0.0.0", End: "10.0.0.255", Subnet: "10.0.0.0/24"}}},
			want:  []string{"10.0.0.1-10.0.0.254"},
		},
		{
			name:  "subnet with host bits is read as its network, as upstream",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.77/29"}}},
			want:  []string{"10.0.0.73-10.0.0.78"},
		},
		{
			name:  "entry gateway is never handed out",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.0/29", Gateway: "10.0.0.1"}}},
			want:  []string{"10.0.0.2-10.0.0.6"},
		},
		{
			name: "top-level gateway applies to entries without their own",
			given: Spec{Gateway: "10.0.0.6", Pools: []Range{
				{Subnet: "10.0.0.0/29"},
				{Subnet: "10.0.1.0/29", Gateway: "10.0.1.1"},
			}},
			want: []string{"10.0.0.1-10.0.0.5", "10.0.1.2-10.0.1.6"},
		},
		{
			name: "excluded address, range and CIDR",
			given: Spec{
				Pools:             []Range{{Subnet: "10.0.0.0/24"}},
				ExcludedAddresses: []string{"10.0.0.5", "10.0.0.10 - 10.0.0.19", "10.0.0.128/25"},
			},
			want: []string{"10.0.0.1-10.0.0.4", "10.0.0.6-10.0.0.9", "10.0.0.20-10.0.0.127"},
		},
		{
			name: "overlapping and adjacent exclusions merge",
			given: Spec{
				Prefix:            24,
				Pools:             []Range{{Start: "10.0.0.1", End: "10.0.0.20"}},
				ExcludedAddresses: []string{"10.0.0.3-10.0.0.6", "10.0.0.5-10.0.0.8", "10.0.0.9", "10.0.0.20"},
			},
			want: []string{"10.0.0.1-10.0.0.2", "10.0.0.10-10.0.0.19"},
		},
		{
			name:  "entries keep their listed order, not address order",
			given: Spec{Prefix: 24, Pools: []Range{{Start: "10.0.1.10", End: "10.0.1.12"}, {Start: "10.0.0.10", End: "10.0.0.12"}}},
			want:  []string{"10.0.1.10-10.0.1.12", "10.0.0.10-10.0.0.12"},
		},
		{
			name:  "a /31 is point-to-point: both addresses usable (RFC 3021)",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.4/31"}}},
			want:  []string{"10.0.0.4-10.0.0.5"},
		},
		{
			name:  "a /32 is one address",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.4/32"}}},
			want:  []string{"10.0.0.4"},
		},
		{
			name:  "IPv6 subnet: subnet-router anycast (network) address out, no broadcast",
			given: Spec{Pools: []Range{{Subnet: "fd00::/120"}}},
			want:  []string{"fd00::1-fd00::ff"},
		},
		{
			name:  "IPv6 start and end with gateway inside",
			given: Spec{Prefix: 64, Pools: []Range{{Start: "2001:db8::10", End: "2001:db8::20", Gateway: "2001:db8::11"}}},
			want:  []string{"2001:db8::10", "2001:db8::12-2001:db8::20"},
		},
		{
			name:  "IPv6 /127 is point-to-point (RFC 6164)",
			given: Spec{Pools: []Range{{Subnet: "fd00::/127"}}},
			want:  []string{"fd00::-fd00::1"},
		},
		{
			name:  "IPv4-mapped IPv6 is read as IPv4, as net.ParseIP does",
			given: Spec{Prefix: 24, Pools: []Range{{Start: "::ffff:10.0.0.1", End: "10.0.0.3"}}},
			want:  []string{"10.0.0.1-10.0.0.3"},
		},
		{
			name:  "no entries: an empty pool",
			given: Spec{},
			want:  []string{},
		},
		{
			name: "everything excluded: an empty pool",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.0/30"}},
				ExcludedAddresses: []string{"10.0.0.0/30"}},
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p, err := Parse(tt.given)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(runs(p)).To(Equal(tt.want))
			// The numbered positions and a walk address by address must agree.
			g.Expect(p.Size().Int64()).To(BeEquivalentTo(len(enumerate(p))))
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		given Spec
		want  string
	}{
		{
			name:  "an end that is not an address names the field",
			given: Spec{Prefix: 24, Pools: []Range{{Subnet: "10.0.1.0/24"}, {Start: "10.0.0.1", End: "10.0.0.300"}}},
			want:  "pools[1].end: 10.0.0.300 is not an IP address",
		},
		{
			name:  "end before start",
			given: Spec{Prefix: 24, Pools: []Range{{Start: "10.0.0.9", End: "10.0.0.1"}}},
			want:  "pools[0].end: 10.0.0.1 is before start 10.0.0.9; swap start and end",
		},
		{
			name:  "an entry mixing families",
			given: Spec{Prefix: 24, Pools: []Range{{Start: "10.0.0.1", End: "fd00::9"}}},
			want:  "pools[0].end: fd00::9 is IPv6 but pools[0].start is IPv4; an entry holds one address family",
		},
		{
			name:  "a gateway of the other family",
			given: Spec{Gateway: "fd00::1", Pools: []Range{{Subnet: "10.0.0.0/24"}}},
			want:  "gateway: fd00::1 is IPv6 but pools[0].subnet is IPv4; an entry holds one address family",
		},
		{
			name:  "entries of two families",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.0/24"}, {Subnet: "fd00::/64"}}},
			want:  "pools[1]: is IPv6 but pools[0] is IPv4; use one pool per address family",
		},
		{
			name:  "start outside its subnet",
			given: Spec{Pools: []Range{{Start: "10.0.1.5", Subnet: "10.0.0.0/24"}}},
			want:  "pools[0].start: 10.0.1.5 is outside subnet 10.0.0.0/24; move start into the subnet or widen it",
		},
		{
			name:  "end outside its subnet",
			given: Spec{Pools: []Range{{Start: "10.0.0.5", End: "10.0.1.5", Subnet: "10.0.0.0/24"}}},
			want:  "pools[0].end: 10.0.1.5 is outside subnet 10.0.0.0/24; move end into the subnet or widen it",
		},
		{
			name:  "an entry with nothing",
			given: Spec{Pools: []Range{{Gateway: "10.0.0.1"}}},
			want:  "pools[0]: has no addresses; set start and end, or a subnet",
		},
		{
			name:  "end without start or subnet",
			given: Spec{Prefix: 24, Pools: []Range{{End: "10.0.0.9"}}},
			want:  "pools[0].start: required with end; set start, or a subnet to start from",
		},
		{
			name:  "start alone without a prefix has no end",
			given: Spec{Pools: []Range{{Start: "10.0.0.9"}}},
			want:  "pools[0].end: required when start has no subnet or prefix; set end, subnet or prefix",
		},
		{
			name:  "start and end without any prefix",
			given: Spec{Pools: []Range{{Start: "10.0.0.1", End: "10.0.0.9"}}},
			want:  "pools[0].prefix: unknown: set prefix on the entry or at the top level, or give a subnet",
		},
		{
			name:  "an IPv4 prefix longer than 32",
			given: Spec{Pools: []Range{{Start: "10.0.0.1", End: "10.0.0.9", Prefix: 33}}},
			want:  "pools[0].prefix: 33 is not a prefix length for IPv4; use 1-32",
		},
		{
			name:  "a top-level prefix too long for the entry's family",
			given: Spec{Prefix: 64, Pools: []Range{{Start: "10.0.0.1", End: "10.0.0.9"}}},
			want:  "prefix: 64 is not a prefix length for IPv4; use 1-32",
		},
		{
			name:  "a bad top-level default is reported once",
			given: Spec{Prefix: 64, Pools: []Range{{Start: "10.0.0.1", End: "10.0.0.9"}, {Start: "10.0.1.1", End: "10.0.1.9"}}},
			want:  "prefix: 64 is not a prefix length for IPv4; use 1-32",
		},
		{
			name:  "an IPv4-mapped subnet shorter than the mapping",
			given: Spec{Pools: []Range{{Subnet: "::ffff:10.0.0.0/64"}}},
			want:  "pools[0].subnet: ::ffff:10.0.0.0/64 mixes IPv4 and IPv6; write the IPv4 subnet, like 10.0.0.0/24",
		},
		{
			name:  "a negative prefix",
			given: Spec{Prefix: -1, Pools: []Range{{Subnet: "10.0.0.0/24"}}},
			want:  "prefix: -1 is not a prefix length; use 1-32 for IPv4 or 1-128 for IPv6",
		},
		{
			name:  "a subnet that is not one",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.0"}}},
			want:  "pools[0].subnet: 10.0.0.0 is not a subnet; write it as address/length, like 10.0.0.0/24",
		},
		{
			name:  "an address with a zone",
			given: Spec{Prefix: 64, Pools: []Range{{Start: "fe80::1%eth0", End: "fe80::9"}}},
			want:  `pools[0].start: fe80::1%eth0 has a zone; remove "%eth0"`,
		},
		{
			name:  "a bad DNS server",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.0/24", DNSServers: []string{"8.8.8.8", "dns.example"}}}},
			want:  "pools[0].dnsServers[1]: dns.example is not an IP address",
		},
		{
			name:  "overlapping entries",
			given: Spec{Prefix: 24, Pools: []Range{{Start: "10.0.0.10", End: "10.0.0.20"}, {Start: "10.0.0.15", End: "10.0.0.30"}}},
			want:  "pools[1]: 10.0.0.15-10.0.0.30 overlaps pools[0] (10.0.0.10-10.0.0.20); make the ranges disjoint",
		},
		{
			name:  "an exclusion that is none of the three forms",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.0/24"}}, ExcludedAddresses: []string{"10.0.0.1", "ten"}},
			want:  `excludedAddresses[1]: "ten" is not an address, a range a-b, or a CIDR`,
		},
		{
			name:  "a reversed exclusion range",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.0/24"}}, ExcludedAddresses: []string{"10.0.0.9-10.0.0.1"}},
			want:  `excludedAddresses[0]: "10.0.0.9-10.0.0.1" ends before it starts; swap the two addresses`,
		},
		{
			name:  "an exclusion of the other family",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.0/24"}}, ExcludedAddresses: []string{"fd00::/64"}},
			want:  `excludedAddresses[0]: "fd00::/64" is IPv6 but the pool is IPv4`,
		},
		{
			name:  "an unknown strategy",
			given: Spec{Strategy: "roundrobin", Pools: []Range{{Subnet: "10.0.0.0/24"}}},
			want:  `allocationStrategy: "roundrobin" is not a strategy; use "sequential" or "random"`,
		},
		{
			name:  "a negative grace period",
			given: Spec{ReuseGracePeriod: -1, Pools: []Range{{Subnet: "10.0.0.0/24"}}},
			want:  "reuseGracePeriod: -1ns is negative; use 0 to reuse addresses at once",
		},
		{
			name:  "a preallocation on the gateway",
			given: Spec{Gateway: "10.0.0.1", Pools: []Range{{Subnet: "10.0.0.0/24"}}, PreAllocations: map[string]string{"m1": "10.0.0.1"}},
			want:  "preAllocations[m1]: 10.0.0.1 is the gateway of pools[0]; pick an address of the pool",
		},
		{
			name:  "a preallocation outside the pool",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.0/24"}}, PreAllocations: map[string]string{"m1": "10.0.5.1"}},
			want:  "preAllocations[m1]: 10.0.5.1 is outside every range of spec.pools (10.0.0.0/24); pick an address of the pool",
		},
		{
			name:  "a preallocation on an excluded address",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.0/24"}}, ExcludedAddresses: []string{"10.0.0.0/28"}, PreAllocations: map[string]string{"m1": "10.0.0.3"}},
			want:  "preAllocations[m1]: 10.0.0.3 is excluded by excludedAddresses[0]; pick an address of the pool",
		},
		{
			name:  "a preallocation on the broadcast address",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.0/24"}}, PreAllocations: map[string]string{"m1": "10.0.0.255"}},
			want:  "preAllocations[m1]: 10.0.0.255 is the broadcast address of 10.0.0.0/24 (pools[0]); pick an address of the pool",
		},
		{
			name:  "two claims pinned to one address",
			given: Spec{Pools: []Range{{Subnet: "10.0.0.0/24"}}, PreAllocations: map[string]string{"a": "10.0.0.7", "b": "10.0.0.7"}},
			want:  `preAllocations[b]: 10.0.0.7 is also pinned to claim "a"; give each claim its own address`,
		},
		{
			name:  "the whole IPv6 space does not fit a count",
			given: Spec{Pools: []Range{{Start: "::", End: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Prefix: 64}}},
			want:  "pools: spans the whole IPv6 address space; narrow the ranges",
		},
		{
			name: "every problem at once",
			given: Spec{Pools: []Range{
				{Start: "10.0.0.x", Subnet: "10.0.0.0/24"},
				{Start: "10.0.1.1", End: "10.0.1.300", Prefix: 24},
			}},
			want: "pools[0].start: 10.0.0.x is not an IP address; pools[1].end: 10.0.1.300 is not an IP address",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := Parse(tt.given)
			g.Expect(err).To(MatchError(tt.want))
			var fields FieldErrors
			g.Expect(err).To(BeAssignableToTypeOf(fields))
		})
	}
}

func TestParseEntryValues(t *testing.T) {
	g := NewWithT(t)
	p := mustParse(t, Spec{
		Prefix:     24,
		Gateway:    "10.0.0.1",
		DNSServers: []string{"10.0.0.53"},
		Pools: []Range{
			{Start: "10.0.0.10", End: "10.0.0.20"},
			{Subnet: "10.0.1.0/26", Gateway: "10.0.1.1", DNSServers: []string{"1.1.1.1", "8.8.8.8"}},
			{Subnet: "10.0.2.0/25", Prefix: 23},
		},
	})
	tests := []struct {
		name  string
		given string
		want  Entry
	}{
		{
			name:  "defaults apply",
			given: "10.0.0.15",
			want: Entry{Index: 0, First: addr("10.0.0.10"), Last: addr("10.0.0.20"), Prefix: 24,
				Gateway: addr("10.0.0.1"), DNSServers: addrs("10.0.0.53")},
		},
		{
			name:  "entry gateway and DNS override; prefix defaults to the top level",
			given: "10.0.1.5",
			want: Entry{Index: 1, First: addr("10.0.1.0"), Last: addr("10.0.1.63"), Subnet: netip.MustParsePrefix("10.0.1.0/26"),
				Prefix: 24, Gateway: addr("10.0.1.1"), DNSServers: addrs("1.1.1.1", "8.8.8.8")},
		},
		{
			name:  "entry prefix overrides",
			given: "10.0.2.5",
			want: Entry{Index: 2, First: addr("10.0.2.0"), Last: addr("10.0.2.127"), Subnet: netip.MustParsePrefix("10.0.2.0/25"),
				Prefix: 23, Gateway: addr("10.0.0.1"), DNSServers: addrs("10.0.0.53")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := p.Entry(addr(tt.given))
			g.Expect(ok).To(BeTrue())
			g.Expect(got).To(Equal(tt.want))
		})
	}
	_, ok := p.Entry(addr("10.0.3.1"))
	g.Expect(ok).To(BeFalse())

	// Without any prefix, a subnet's own length is the prefix.
	q := mustParse(t, Spec{Pools: []Range{{Subnet: "10.0.0.0/22"}}})
	e, _ := q.Entry(addr("10.0.1.1"))
	g.Expect(e.Prefix).To(Equal(22))
}

func TestPoolSize(t *testing.T) {
	pow2 := func(n uint) *big.Int { return new(big.Int).Lsh(big.NewInt(1), n) }
	minus1 := func(b *big.Int) *big.Int { return b.Sub(b, big.NewInt(1)) }
	tests := []struct {
		name      string
		given     Spec
		want      *big.Int
		wantInt64 int64
		wantText  string
	}{
		{name: "IPv4 /24", given: subnet24(), want: big.NewInt(254), wantInt64: 254, wantText: "254"},
		{name: "IPv4 /16", given: Spec{Pools: []Range{{Subnet: "10.1.0.0/16"}}}, want: big.NewInt(65534), wantInt64: 65534, wantText: "65534"},
		{
			name:      "IPv4 /8 with a gateway and an excluded /24",
			given:     Spec{Gateway: "10.0.0.1", ExcludedAddresses: []string{"10.9.9.0/24"}, Pools: []Range{{Subnet: "10.0.0.0/8"}}},
			want:      big.NewInt(1<<24 - 2 - 1 - 256),
			wantInt64: 1<<24 - 2 - 1 - 256,
			wantText:  "16776957",
		},
		{
			name:      "IPv6 /64: 2^64-1 exact, saturated as int64",
			given:     Spec{Pools: []Range{{Subnet: "2001:db8::/64"}}},
			want:      minus1(pow2(64)),
			wantInt64: math.MaxInt64,
			wantText:  "18446744073709551615",
		},
		{
			name:      "IPv6 /48 with a gateway: 2^80-2",
			given:     Spec{Pools: []Range{{Subnet: "2001:db8::/48", Gateway: "2001:db8::1"}}},
			want:      pow2(80).Sub(pow2(80), big.NewInt(2)),
			wantInt64: math.MaxInt64,
			wantText:  "1208925819614629174706174",
		},
		{
			name:      "all of IPv6 but :: is the largest pool",
			given:     Spec{Prefix: 64, Pools: []Range{{Start: "::1", End: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}}},
			want:      minus1(pow2(128)),
			wantInt64: math.MaxInt64,
			wantText:  minus1(pow2(128)).String(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p := mustParse(t, tt.given)
			g.Expect(p.Size().Big()).To(Equal(tt.want))
			g.Expect(p.Size().Int64()).To(Equal(tt.wantInt64))
			g.Expect(p.Size().String()).To(Equal(tt.wantText))
		})
	}
}

func TestPoolContains(t *testing.T) {
	p := mustParse(t, Spec{
		Gateway:           "10.0.0.1",
		ExcludedAddresses: []string{"10.0.0.100-10.0.0.110"},
		Pools:             []Range{{Subnet: "10.0.0.0/24"}},
	})
	tests := []struct {
		name  string
		given string
		want  bool
	}{
		{"first host after the gateway", "10.0.0.2", true},
		{"last host", "10.0.0.254", true},
		{"gateway", "10.0.0.1", false},
		{"network", "10.0.0.0", false},
		{"broadcast", "10.0.0.255", false},
		{"excluded range start", "10.0.0.100", false},
		{"excluded range end", "10.0.0.110", false},
		{"just after the excluded range", "10.0.0.111", true},
		{"other subnet", "10.0.1.5", false},
		{"other family", "fd00::5", false},
		{"IPv4-mapped form of a pool address", "::ffff:10.0.0.5", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(p.Contains(addr(tt.given))).To(Equal(tt.want))
		})
	}
}
