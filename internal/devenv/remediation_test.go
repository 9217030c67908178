package devenv_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// TestDevModeRemediatesAMachine: in dev mode, a MachineHealthCheck with a
// Metal3RemediationTemplate remediates a Machine marked cluster.x-k8s.io/remediate-machine: the
// simulated host is powered off through the reboot annotation and on again.
func TestDevModeRemediatesAMachine(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	// The MachineDeployment's machine, on a provisioned host.
	var machine clusterv1.Machine
	var hostName string
	g.Eventually(func(g Gomega) {
		machines := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, machines, client.InNamespace("default"))).To(Succeed())
		g.Expect(machines.Items).To(HaveLen(1))
		machine = machines.Items[0]
		m3m := &infrav1.Metal3Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: machine.Spec.InfrastructureRef.Name}, m3m)).To(Succeed())
		_, hostName, _ = strings.Cut(m3m.Annotations[infrav1.HostAnnotation], "/")
		g.Expect(hostName).NotTo(BeEmpty())
		h := &bmov1.BareMetalHost{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: hostName}, h)).To(Succeed())
		g.Expect(h.Status.Provisioning.State).To(Equal(bmov1.StateProvisioned))
		g.Expect(h.Status.PoweredOn).To(BeTrue())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	host := func(g Gomega) *bmov1.BareMetalHost {
		h := &bmov1.BareMetalHost{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: hostName}, h)).To(Succeed())
		return h
	}

	g.Expect(env.Client.Create(ctx, &infrav1.Metal3RemediationTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "demo-reboot"},
		Spec: infrav1.Metal3RemediationTemplateSpec{Template: infrav1.Metal3RemediationTemplateResource{
			Spec: infrav1.Metal3RemediationSpec{Strategy: &infrav1.RemediationStrategy{Type: infrav1.RebootRemediationStrategy}},
		}},
	})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &clusterv1.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "demo-workers"},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: "demo",
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{"cluster.x-k8s.io/deployment-name": "demo-workers"}},
			Remediation: clusterv1.MachineHealthCheckRemediation{TemplateRef: clusterv1.MachineHealthCheckRemediationTemplateReference{
				APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3RemediationTemplate", Name: "demo-reboot",
			}},
		},
	})).To(Succeed())
	orig := machine.DeepCopy()
	if machine.Annotations == nil {
		machine.Annotations = map[string]string{}
	}
	machine.Annotations[clusterv1.RemediateMachineAnnotation] = ""
	g.Expect(env.Client.Patch(ctx, &machine, client.MergeFrom(orig))).To(Succeed())

	rem := &infrav1.Metal3Remediation{}
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: machine.Name}, rem)
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed(), "the MachineHealthCheck creates the remediation")
	g.Eventually(func(g Gomega) {
		h := host(g)
		g.Expect(h.Status.PoweredOn).To(BeTrue())
		for k := range h.Annotations {
			g.Expect(k).NotTo(HavePrefix("reboot.metal3.io"))
		}
		got := &infrav1.Metal3Remediation{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(rem), got)).To(Succeed())
		g.Expect(got.Status.Phase).To(Equal(infrav1.PhaseWaiting))
		// The power cycle is over: the remediation saw the host off and on again (the simulated
		// BMO can cycle it faster than a poll sees it off, so its record is what is checked).
		g.Expect(got.Status.LastRemediated).NotTo(BeNil())
		progressing := conditions.Get(got, infrav1.RemediationProgressingCondition)
		g.Expect(progressing).NotTo(BeNil())
		g.Expect(progressing.Message).To(ContainSubstring("on again"))
	}, 60*time.Second, 100*time.Millisecond).Should(Succeed(), "the simulated BMO powers the host off and on again")
}
