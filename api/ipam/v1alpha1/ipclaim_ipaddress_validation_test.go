package v1alpha1_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

func TestIPClaimAdmission(t *testing.T) {
	runAdmissionCases(t, "IPClaim", []admissionCase{
		{name: "claim on a pool", spec: `
pool: {name: pool-1, namespace: default}`},
		{name: "pool without a name", spec: `
pool: {namespace: default}`,
			want: `spec.pool: Invalid value: pool.name must name the IPPool to take an address from`},
		{name: "pool with an empty name", spec: `
pool: {name: ""}`,
			want: `spec.pool: Invalid value: pool.name must name the IPPool to take an address from`},
		{name: "no pool at all", spec: `{}`,
			want: `spec.pool: Required value`},
	})
}

func TestIPAddressAdmission(t *testing.T) {
	runAdmissionCases(t, "IPAddress", []admissionCase{
		{name: "IPv4 address", spec: `
address: 192.168.0.10
prefix: 24
gateway: 192.168.0.1
dnsServers: [8.8.8.8]
pool: {name: pool-1}
claim: {name: claim-1}`},
		{name: "IPv6 address", spec: `
address: "2001:db8::10"
prefix: 64
gateway: "2001:db8::1"
dnsServers: ["2001:db8::53", 8.8.8.8]
pool: {name: pool-1}
claim: {name: claim-1}`},
		{name: "address missing", spec: `
pool: {name: pool-1}
claim: {name: claim-1}`,
			want: `spec.address: Required value`},
		{name: "address is not an IP", spec: `
address: 192.168.0.1/24
pool: {name: pool-1}
claim: {name: claim-1}`,
			want: `spec.address: Invalid value: "192.168.0.1/24": address must be an IPv4 or IPv6 address such as 192.168.0.10 or 2001:db8::10`},
		{name: "DNS server is not an IP", spec: `
address: 10.0.0.10
dnsServers: [resolver]
pool: {name: pool-1}
claim: {name: claim-1}`,
			want: `spec.dnsServers[0]: Invalid value: "resolver": each dnsServers entry must be an IPv4 or IPv6 address`},
		{name: "IPv6 gateway for an IPv4 address", spec: `
address: 10.0.0.10
gateway: "fd00::1"
pool: {name: pool-1}
claim: {name: claim-1}`,
			want: `spec.gateway: Invalid value: gateway must be of the same address family as address`},
		{name: "prefix above 32 for an IPv4 address", spec: `
address: 10.0.0.10
prefix: 64
pool: {name: pool-1}
claim: {name: claim-1}`,
			want: `spec.prefix: Invalid value: prefix must be between 0 and 32 for an IPv4 address`},
		{name: "prefix above 128", spec: `
address: "fd00::10"
prefix: 200
pool: {name: pool-1}
claim: {name: claim-1}`,
			want: `spec.prefix: Invalid value: 200: spec.prefix in body should be less than or equal to 128`},
		{name: "pool without a name", spec: `
address: 10.0.0.10
pool: {namespace: default}
claim: {name: claim-1}`,
			want: `spec.pool: Invalid value: pool.name must name the IPPool this address comes from`},
		{name: "claim without a name", spec: `
address: 10.0.0.10
pool: {name: pool-1}
claim: {name: ""}`,
			want: `spec.claim: Invalid value: claim.name must name the claim this address was given to`},
	})
}

// The fields that name an address, its pool and its claim cannot change after creation; the rest
// can. Each change is tried on a fresh copy of the stored object, as a user's kubectl edit would.
func TestImmutableFields(t *testing.T) {
	ctx := context.Background()

	pool := &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "pool-", Namespace: namespace},
		Spec: ipamv1.IPPoolSpec{
			NamePrefix: "prov",
			Pools:      []ipamv1.Pool{{Start: addr("10.0.0.10"), End: addr("10.0.0.20")}},
		},
	}
	claim := &ipamv1.IPClaim{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "claim-", Namespace: namespace},
		Spec:       ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: "pool-1", Namespace: namespace}},
	}
	address := &ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "prov-", Namespace: namespace},
		Spec: ipamv1.IPAddressSpec{
			Address: "10.0.0.10",
			Prefix:  24,
			Pool:    corev1.ObjectReference{Name: "pool-1", Namespace: namespace},
			Claim:   corev1.ObjectReference{Name: "claim-1", Namespace: namespace},
		},
	}
	for _, obj := range []client.Object{pool, claim, address} {
		NewWithT(t).Expect(env.Client.Create(ctx, obj)).To(Succeed())
	}

	cases := []struct {
		name   string
		object client.Object
		change func(client.Object)
		want   string
	}{
		{name: "pool namePrefix", object: pool,
			change: func(o client.Object) { o.(*ipamv1.IPPool).Spec.NamePrefix = "other" },
			want:   `spec.namePrefix: Invalid value: "other": namePrefix is immutable: existing IPAddresses are named after it; create a new IPPool to use another prefix`},
		{name: "pool ranges may change", object: pool,
			change: func(o client.Object) {
				p := o.(*ipamv1.IPPool)
				p.Spec.Pools = append(p.Spec.Pools, ipamv1.Pool{Subnet: subnet("10.0.1.0/24")})
			}},
		{name: "claim pool", object: claim,
			change: func(o client.Object) { o.(*ipamv1.IPClaim).Spec.Pool.Name = "pool-2" },
			want:   `spec.pool: Invalid value: pool.name is immutable: the claim already holds an address from that pool; delete the claim and create a new one for another pool`},
		{name: "claim labels may change", object: claim,
			change: func(o client.Object) { o.SetLabels(map[string]string{ipamv1.PoolNameLabel: "pool-1"}) }},
		{name: "address", object: address,
			change: func(o client.Object) { o.(*ipamv1.IPAddress).Spec.Address = "10.0.0.11" },
			want:   `spec.address: Invalid value: "10.0.0.11": address is immutable: the object is named after it; delete the IPAddress and claim again instead`},
		{name: "address pool", object: address,
			change: func(o client.Object) { o.(*ipamv1.IPAddress).Spec.Pool.Name = "pool-2" },
			want:   `spec.pool: Invalid value: pool.name is immutable: the address belongs to that pool`},
		{name: "address claim", object: address,
			change: func(o client.Object) { o.(*ipamv1.IPAddress).Spec.Claim.Name = "claim-2" },
			want:   `spec.claim: Invalid value: claim.name is immutable: the pool keys its allocations by claim`},
		{name: "address gateway may change", object: address,
			change: func(o client.Object) { o.(*ipamv1.IPAddress).Spec.Gateway = addr("10.0.0.1") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := tc.object.DeepCopyObject().(client.Object)
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tc.object), obj)).To(Succeed())
			tc.change(obj)
			err := env.Client.Update(ctx, obj)
			if tc.want == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			expectRefused(g, err, tc.want)
		})
	}
}

func addr(s string) *ipamv1.IPAddressStr {
	a := ipamv1.IPAddressStr(s)
	return &a
}

func subnet(s string) *ipamv1.IPSubnetStr {
	n := ipamv1.IPSubnetStr(s)
	return &n
}
