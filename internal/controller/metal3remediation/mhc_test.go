package metal3remediation

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// TestMachineHealthCheckCreatesRemediations: Cluster API's MachineHealthCheck, with
// remediation.templateRef naming a Metal3RemediationTemplate, creates a Metal3Remediation for an
// unhealthy Machine (here marked with cluster.x-k8s.io/remediate-machine, which needs no
// workload cluster), named and owned as the Machine with the template's spec, and the host is
// rebooted.
func TestMachineHealthCheckCreatesRemediations(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, "")

	tmpl := &infrav1.Metal3RemediationTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "reboot"},
		Spec: infrav1.Metal3RemediationTemplateSpec{Template: infrav1.Metal3RemediationTemplateResource{
			Spec: infrav1.Metal3RemediationSpec{Strategy: &infrav1.RemediationStrategy{
				Type: infrav1.RebootRemediationStrategy, RetryLimit: 3, TimeoutSeconds: 300,
			}},
		}},
	}
	g.Expect(env.Client.Create(ctx, tmpl)).To(Succeed())
	mhc := &clusterv1.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "workers"},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: "c1",
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
			Checks: clusterv1.MachineHealthCheckChecks{UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
				{Type: "Ready", Status: "Unknown", TimeoutSeconds: new(int32(300))},
			}},
			Remediation: clusterv1.MachineHealthCheckRemediation{TemplateRef: clusterv1.MachineHealthCheckRemediationTemplateReference{
				APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3RemediationTemplate", Name: "reboot",
			}},
		},
	}
	g.Expect(env.Client.Create(ctx, mhc)).To(Succeed())

	machine := &clusterv1.Machine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(f.machine), machine)).To(Succeed())
	orig := machine.DeepCopy()
	machine.Annotations = map[string]string{clusterv1.RemediateMachineAnnotation: ""}
	g.Expect(env.Client.Patch(ctx, machine, client.MergeFrom(orig))).To(Succeed())

	rem := &infrav1.Metal3Remediation{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: machine.Name}, rem)).To(Succeed())
	}, 2*eventually, poll).Should(Succeed(), "the MachineHealthCheck creates the remediation")
	g.Expect(rem.Spec).To(Equal(tmpl.Spec.Template.Spec))
	g.Expect(rem.OwnerReferences).To(ContainElement(HaveField("UID", machine.UID)))

	g.Eventually(func(g Gomega) {
		g.Expect(f.getHost(g).Annotations).To(HaveKey(rebootAnnotationPrefix + string(rem.UID)))
	}, eventually, poll).Should(Succeed(), "the host is rebooted")
}
