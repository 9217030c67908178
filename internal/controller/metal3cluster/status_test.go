package metal3cluster

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

func TestEndpointCondition(t *testing.T) {
	tests := []struct {
		name       string
		given      infrav1.APIEndpoint
		wantStatus metav1.ConditionStatus
		wantMsg    string
	}{
		{"valid", infrav1.APIEndpoint{Host: "192.168.111.249", Port: 6443}, metav1.ConditionTrue, ""},
		{"empty", infrav1.APIEndpoint{}, metav1.ConditionFalse, "spec.controlPlaneEndpoint: not set"},
		{"no host", infrav1.APIEndpoint{Port: 6443}, metav1.ConditionFalse, "spec.controlPlaneEndpoint.host: not set"},
		{"no port", infrav1.APIEndpoint{Host: "api.example.com"}, metav1.ConditionFalse, "spec.controlPlaneEndpoint.port: not set for host api.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := endpointCondition(tt.given)
			g.Expect(c.Type).To(Equal(infrav1.BaremetalInfrastructureReadyCondition))
			g.Expect(c.Status).To(Equal(tt.wantStatus))
			g.Expect(c.Message).To(HavePrefix(tt.wantMsg))
			if tt.wantStatus == metav1.ConditionFalse {
				g.Expect(c.Reason).To(Equal(infrav1.ControlPlaneEndpointFailedReason))
			}
		})
	}
}

func TestReadyCondition(t *testing.T) {
	g := NewWithT(t)
	ready := func(infra metav1.Condition) *metav1.Condition {
		m3c := &infrav1.Metal3Cluster{}
		conditions.Set(m3c, ownerCondition(true))
		conditions.Set(m3c, infra)
		g.Expect(readySummary.Summarise(m3c)).To(Succeed())
		return conditions.Get(m3c, infrav1.Metal3ClusterReadyCondition)
	}
	ok := endpointCondition(infrav1.APIEndpoint{Host: "h", Port: 1})
	bad := endpointCondition(infrav1.APIEndpoint{})
	g.Expect(ready(ok).Status).To(Equal(metav1.ConditionTrue))
	g.Expect(ready(bad).Message).To(Equal(bad.Message))
	// What a user reads while the cluster goes: Ready False, upstream's reason word, the message given.
	deleting := deletingCondition("the Metal3Cluster is being deleted")
	g.Expect([]string{deleting.Type, string(deleting.Status), deleting.Reason, deleting.Message}).
		To(Equal([]string{"Ready", "False", "Deleting", "the Metal3Cluster is being deleted"}))
}
