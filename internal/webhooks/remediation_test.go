package webhooks_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// TestV1beta1RemediationTemplateApplies: a Metal3RemediationTemplate as CAPM3's v1beta1 docs
// write it (timeout as a duration) applies, reads as v1beta2 with timeoutSeconds, and reads
// back as v1beta1 with the very duration written, even one whole seconds cannot show.
func TestV1beta1RemediationTemplateApplies(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	for name, timeout := range map[string]string{"whole": "10m30s", "fraction": "2m30.5s"} {
		u := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(`
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3RemediationTemplate
spec:
  template:
    spec:
      strategy:
        type: Reboot
        retryLimit: 2
        timeout: `+timeout+`
`), &u.Object)).To(Succeed())
		u.SetNamespace(ns)
		u.SetName(name)
		g.Expect(env.Client.Create(ctx, u)).To(Succeed())

		hub := &infrav1.Metal3RemediationTemplate{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, hub)).To(Succeed())
		strategy := hub.Spec.Template.Spec.Strategy
		g.Expect(strategy).NotTo(BeNil())
		g.Expect(strategy.Type).To(Equal(infrav1.RebootRemediationStrategy))
		g.Expect(strategy.RetryLimit).To(Equal(int32(2)))
		g.Expect(strategy.TimeoutSeconds).To(Equal(map[string]int32{"whole": 630, "fraction": 150}[name]))

		back := &unstructured.Unstructured{}
		back.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
		back.SetKind("Metal3RemediationTemplate")
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, back)).To(Succeed())
		got, _, _ := unstructured.NestedString(back.Object, "spec", "template", "spec", "strategy", "timeout")
		g.Expect(got).To(Equal(timeout), "v1beta1 reads back what it wrote")
	}
}

// TestV1beta1RemediationTimeoutMustBeADuration: v1beta1 keeps a timeout's text as written, so
// the CRD checks that it is a duration; text that is none is refused when applied.
func TestV1beta1RemediationTimeoutMustBeADuration(t *testing.T) {
	g := NewWithT(t)
	u := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal([]byte(`
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Remediation
metadata: {name: bad-timeout}
spec:
  strategy: {type: Reboot, timeout: ten minutes}
`), &u.Object)).To(Succeed())
	u.SetNamespace(env.NewNamespace(t))
	err := env.Client.Create(context.Background(), u)
	g.Expect(err).To(MatchError(ContainSubstring("spec.strategy.timeout")))
	g.Expect(err).To(MatchError(ContainSubstring("timeout must be a duration such as 300s or 5m")))
}
