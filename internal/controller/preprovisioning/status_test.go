package preprovisioning

import (
	"errors"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

func TestBuildStatus(t *testing.T) {
	rendered := func(name string, addrs ...string) hostView {
		return hostView{Name: name, Rendered: true, SecretName: name + "-preprov-networkdata", Addresses: addrs}
	}
	tests := []struct {
		name       string
		given      []hostView
		wantHosts  []string
		wantErrors []infrav1.PreprovisioningHostError
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{name: "no hosts", wantStatus: metav1.ConditionFalse, wantReason: infrav1.PreprovisioningNoHostsReason, wantMsg: "no BareMetalHost references this template"},
		{name: "all rendered, sorted", given: []hostView{rendered("b", "10.0.0.2"), rendered("a", "10.0.0.1")},
			wantHosts: []string{"a", "b"}, wantStatus: metav1.ConditionTrue, wantReason: infrav1.PreprovisioningAllHostsRenderedReason, wantMsg: "2 hosts rendered"},
		{name: "a bad reference is reported from the annotation itself",
			given:      []hostView{rendered("a"), {Name: "b", Ref: reference{Err: errors.New(`"x" is not <resource>.<group>/<name>`)}}},
			wantHosts:  []string{"a"},
			wantErrors: []infrav1.PreprovisioningHostError{{Host: "b", Reason: infrav1.PreprovisioningBadReferenceReason, Message: "annotation " + refAnnotation + `: "x" is not <resource>.<group>/<name>`}},
			wantStatus: metav1.ConditionFalse, wantReason: infrav1.PreprovisioningHostsFailedReason, wantMsg: "1 of 2 hosts not rendered: b (BadReference)"},
		{name: "a failure outranks an older Secret (the host must be looked at)",
			given:      []hostView{{Name: "a", Rendered: true, Last: &outcome{Reason: nameInUseReason, Message: "m"}}},
			wantErrors: []infrav1.PreprovisioningHostError{{Host: "a", Reason: nameInUseReason, Message: "m"}},
			wantStatus: metav1.ConditionFalse, wantReason: infrav1.PreprovisioningHostsFailedReason},
		{name: "waiting hosts are listed with why",
			given:      []hostView{{Name: "a", Last: &outcome{Reason: infrav1.PreprovisioningWaitingForIPAddressesReason, Message: "waiting for addresses: IPClaim a-p created"}}},
			wantErrors: []infrav1.PreprovisioningHostError{{Host: "a", Reason: infrav1.PreprovisioningWaitingForIPAddressesReason, Message: "waiting for addresses: IPClaim a-p created"}},
			wantStatus: metav1.ConditionFalse, wantReason: infrav1.PreprovisioningHostsFailedReason},
		{name: "a host not reconciled yet is pending, not failed",
			given:      []hostView{rendered("a"), {Name: "b"}},
			wantHosts:  []string{"a"},
			wantStatus: metav1.ConditionFalse, wantReason: hostsPendingReason, wantMsg: "1 of 2 hosts not reconciled yet: b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := buildStatus(tt.given)
			names := []string{}
			for _, h := range got.Hosts {
				names = append(names, h.Name)
			}
			if tt.wantHosts == nil {
				tt.wantHosts = []string{}
			}
			g.Expect(names).To(Equal(tt.wantHosts))
			g.Expect(got.Errors).To(Equal(tt.wantErrors))
			g.Expect(got.Condition.Type).To(Equal(infrav1.PreprovisioningReadyCondition))
			g.Expect(got.Condition.Status).To(Equal(tt.wantStatus))
			g.Expect(got.Condition.Reason).To(Equal(tt.wantReason))
			g.Expect(got.Condition.Message).To(ContainSubstring(tt.wantMsg))
		})
	}
}

func TestBuildStatusNamesAtMostTenHosts(t *testing.T) {
	var views []hostView
	for i := range 25 {
		views = append(views, hostView{Name: fmt.Sprintf("h%02d", i), Last: &outcome{Reason: "PoolExhausted", Message: "full"}})
	}
	c := buildStatus(views).Condition
	NewWithT(t).Expect(c.Message).To(HavePrefix("25 of 25 hosts not rendered: h00 (PoolExhausted), "))
	NewWithT(t).Expect(c.Message).To(ContainSubstring("h09 (PoolExhausted) and 15 more"))
}

func TestRenderedAddresses(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  []string
	}{
		{name: "static networks only, in order", given: `
links: [{id: eno1, type: phy, ethernet_mac_address: "52:54:00:00:00:01"}]
networks:
- {id: v4, type: ipv4, link: eno1, ip_address: 192.168.0.10, netmask: 255.255.255.0}
- {id: dhcp, type: ipv4_dhcp, link: eno1}
- {id: v6, type: ipv6, link: eno1, ip_address: "2001:db8::5", netmask: "ffff:ffff:ffff:ffff::"}
`, want: []string{"192.168.0.10", "2001:db8::5"}},
		{name: "JSON works too", given: `{"networks":[{"ip_address":"10.0.0.1"}]}`, want: []string{"10.0.0.1"}},
		{name: "no networks", given: `links: []`, want: nil},
		{name: "not a document", given: `: : :`, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(renderedAddresses([]byte(tt.given))).To(Equal(tt.want))
		})
	}
}
