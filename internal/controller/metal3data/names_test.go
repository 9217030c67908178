package metal3data

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/pkg/render"
)

func TestAddressClaimName(t *testing.T) {
	pool := render.NewPoolRef("", "", "provisioning")
	capiPool := render.NewPoolRef("ipam.cluster.x-k8s.io", "InClusterIPPool", "baremetal")
	tests := []struct {
		name    string
		pool    render.PoolRef
		ipReuse bool
		want    string
	}{
		{name: "by Metal3Data, as CAPM3", pool: pool, want: "workers-3-provisioning"},
		{name: "by host with IP reuse", pool: pool, ipReuse: true, want: "node-7-provisioning"},
		{name: "any provider's pool is named alike", pool: capiPool, want: "workers-3-baremetal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(AddressClaimName("workers-3", "node-7", tt.pool, tt.ipReuse)).To(Equal(tt.want))
		})
	}
}

func TestHostKey(t *testing.T) {
	tests := []struct {
		name, given      string
		wantNS, wantName string
		wantOK           bool
	}{
		{name: "namespace and name", given: "metal3/node-1", wantNS: "metal3", wantName: "node-1", wantOK: true},
		{name: "bare name is in the machine's namespace", given: "node-1", wantNS: "default", wantName: "node-1", wantOK: true},
		{name: "empty: no host yet", given: ""},
		{name: "half a key", given: "metal3/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ns, name, ok := hostKey(tt.given, "default")
			g.Expect(ok).To(Equal(tt.wantOK))
			g.Expect(ns).To(Equal(tt.wantNS))
			g.Expect(name).To(Equal(tt.wantName))
		})
	}
}
