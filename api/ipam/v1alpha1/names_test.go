package v1alpha1_test

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

func TestIPAddressName(t *testing.T) {
	cases := []struct {
		name   string
		prefix string
		ip     string
		want   string
	}{
		{name: "IPv4", prefix: "prov", ip: "192.168.0.10", want: "prov-192-168-0-10"},
		{name: "IPv6 compressed", prefix: "prov", ip: "2001:db8::1", want: "prov-2001-db8--1"},
		{name: "IPv6 written out in capitals gives the same name", prefix: "prov", ip: "2001:0DB8:0000:0000:0000:0000:0000:0001", want: "prov-2001-db8--1"},
		{name: "IPv6 compressed elsewhere gives the same name", prefix: "prov", ip: "2001:db8:0::0:1", want: "prov-2001-db8--1"},
		{name: "IPv6 ending in :: loses the trailing dashes", prefix: "prov", ip: "2001:db8::", want: "prov-2001-db8"},
		{name: "IPv6 starting with ::", prefix: "prov", ip: "::1", want: "prov---1"},
		{name: "a lone zero group is not compressed", prefix: "prov", ip: "1:0:3:4:5:6:7:8", want: "prov-1-0-3-4-5-6-7-8"},
		{name: "zone dropped", prefix: "prov", ip: "fe80::1%eth0", want: "prov-fe80--1"},
		{name: "dashed prefix", prefix: "cluster-1-prov", ip: "10.0.0.1", want: "cluster-1-prov-10-0-0-1"},
		{name: "not an address: lowercased and converted", prefix: "prov", ip: "Not.An:IP", want: "prov-not-an-ip"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(ipamv1.IPAddressName(tc.prefix, tc.ip)).To(Equal(tc.want))
		})
	}
}

// The name is what stops two claims from getting one address, so distinct addresses must get
// distinct names, every spelling of one address the same name, and every name must be accepted
// by the API server as an object name.
func TestIPAddressNameIsOneToOneAndValid(t *testing.T) {
	g := NewWithT(t)
	rng := rand.New(rand.NewPCG(1, 2))
	// Groups biased to zero, so that "::" lands at the start, middle and end of addresses.
	group := func() uint16 {
		switch rng.IntN(4) {
		case 0, 1:
			return 0
		case 2:
			return uint16(rng.IntN(16))
		default:
			return uint16(rng.Uint32())
		}
	}
	owner := map[string]netip.Addr{}
	for range 20000 {
		var a netip.Addr
		if rng.IntN(4) == 0 {
			a = netip.AddrFrom4([4]byte{byte(rng.IntN(3)), byte(rng.IntN(256)), 0, byte(rng.IntN(256))})
		} else {
			var b [16]byte
			for i := 0; i < 16; i += 2 {
				v := group()
				b[i], b[i+1] = byte(v>>8), byte(v)
			}
			a = netip.AddrFrom16(b)
		}
		name := ipamv1.IPAddressName("prov", a.String())
		g.Expect(validation.IsDNS1123Subdomain(name)).To(BeEmpty(), "name %q for %s", name, a)
		if prev, seen := owner[name]; seen {
			g.Expect(prev).To(Equal(a), "%s and %s both named %q", prev, a, name)
		}
		owner[name] = a
		g.Expect(string(ipamv1.AppendIPAddressName([]byte("a-"), "prov", a))).To(Equal("a-"+name), "appended after other bytes")
		if a.Is6() {
			g.Expect(ipamv1.IPAddressName("prov", a.StringExpanded())).To(Equal(name), "expanded spelling of %s", a)
		}
	}
}
