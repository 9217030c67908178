package v1beta2_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

const remediationHeader = `apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Remediation
`

// TestMetal3RemediationAdmission: strategies as users write them, and the refusals docs/remediation.md
// lists, the same for a remediation and under a template's spec.template.spec.
func TestMetal3RemediationAdmission(t *testing.T) {
	cases := []admissionCase{
		{name: "reboot with limits", given: `
spec:
  strategy: {type: Reboot, retryLimit: 3, timeoutSeconds: 300}
`},
		{name: "defaults", given: `
spec:
  strategy: {type: Reboot}
`},
		{name: "unknown strategy", given: `
spec:
  strategy: {type: Restart}
`, want: []string{"spec.strategy.type", "Unsupported value"}},
		{name: "retryLimit 0", given: `
spec:
  strategy: {type: Reboot, retryLimit: 0}
`, want: []string{"spec.strategy.retryLimit", "should be greater than or equal to 1"}},
		{name: "timeout too short", given: `
spec:
  strategy: {type: Reboot, timeoutSeconds: 30}
`, want: []string{"spec.strategy.timeoutSeconds", "should be greater than or equal to 100"}},
	}
	direct := make([]admissionCase, len(cases))
	templated := make([]admissionCase, len(cases))
	for i, c := range cases {
		direct[i] = c
		direct[i].given = remediationHeader + c.given
		templated[i] = c
		templated[i].given = "apiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nkind: Metal3RemediationTemplate\nspec:\n  template:\n" + indent(c.given, 4)
		if len(c.want) > 0 {
			// The same field, one level down.
			templated[i].want = append([]string{"spec.template." + c.want[0]}, c.want[1:]...)
		}
	}
	t.Run("Metal3Remediation", func(t *testing.T) { runAdmissionCases(t, "m3r-admission", direct) })
	t.Run("Metal3RemediationTemplate", func(t *testing.T) { runAdmissionCases(t, "m3rt-admission", templated) })
}

// TestMetal3RemediationDefaults: an unset retryLimit and timeoutSeconds read as upstream's 1 and
// 600.
func TestMetal3RemediationDefaults(t *testing.T) {
	g := NewWithT(t)
	rem := &infrav1.Metal3Remediation{Spec: infrav1.Metal3RemediationSpec{Strategy: &infrav1.RemediationStrategy{Type: infrav1.RebootRemediationStrategy}}}
	rem.Namespace, rem.Name = "default", "m3r-defaults"
	g.Expect(env.Client.Create(context.Background(), rem)).To(Succeed())
	got := &infrav1.Metal3Remediation{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(rem), got)).To(Succeed())
	g.Expect(got.Spec.Strategy.RetryLimit).To(Equal(int32(1)))
	g.Expect(got.Spec.Strategy.TimeoutSeconds).To(Equal(int32(600)))
}
