package metal3machine

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
)

func TestAddresses(t *testing.T) {
	tests := []struct {
		name  string
		given *bmov1.HardwareDetails
		want  clusterv1.MachineAddresses
	}{
		{"not inspected", nil, nil},
		{"NICs with and without IP, and the hostname", &bmov1.HardwareDetails{
			Hostname: "node-0",
			NIC:      []bmov1.NIC{{Name: "eno1", IP: "192.168.0.10"}, {Name: "eno2"}, {Name: "eno3", IP: "fd00::10"}},
		}, clusterv1.MachineAddresses{
			{Type: clusterv1.MachineInternalIP, Address: "192.168.0.10"},
			{Type: clusterv1.MachineInternalIP, Address: "fd00::10"},
			{Type: clusterv1.MachineHostName, Address: "node-0"},
			{Type: clusterv1.MachineInternalDNS, Address: "node-0"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &bmov1.BareMetalHost{Status: bmov1.BareMetalHostStatus{HardwareDetails: tt.given}}
			NewWithT(t).Expect(addresses(h)).To(Equal(tt.want))
		})
	}
}

func TestHostProvisionedCondition(t *testing.T) {
	host := func(state bmov1.ProvisioningState, errMsg string) *bmov1.BareMetalHost {
		h := &bmov1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "h1", Namespace: "ns"}}
		h.Status.Provisioning.State = state
		h.Status.ErrorMessage = errMsg
		return h
	}
	tests := []struct {
		name       string
		given      *bmov1.BareMetalHost
		waitingFor string
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{"provisioned", host(bmov1.StateProvisioned, ""), "", metav1.ConditionTrue, "Ready", ""},
		{"provisioning", host(bmov1.StateProvisioning, ""), "", metav1.ConditionFalse, HostProvisioningReason, "host h1 is being provisioned (state: provisioning)"},
		{"error wins", host(bmov1.StateProvisioning, "Failed to inspect: timeout"), "", metav1.ConditionFalse, HostErrorReason, "host h1 is in error: Failed to inspect: timeout"},
		{"data missing", host(bmov1.StateAvailable, ""), "waiting for rendered data from Metal3DataTemplate t", metav1.ConditionFalse, "NotReady",
			"host h1 is claimed, not provisioned: waiting for rendered data from Metal3DataTemplate t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := hostProvisionedCondition(tt.given, tt.waitingFor)
			g.Expect(c.Status).To(Equal(tt.wantStatus))
			g.Expect(c.Reason).To(Equal(tt.wantReason))
			g.Expect(c.Message).To(ContainSubstring(tt.wantMsg))
		})
	}
}
