package v1alpha1_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// namespace holds every object these tests create; names come from generateName, so tests
// never collide.
const namespace = "default"

// admissionCase is one manifest a user might write and what the API server must answer: want is
// empty when the object must be accepted, otherwise the text (field path and message) the
// refusal must contain.
type admissionCase struct {
	name string
	spec string
	want string
}

// object builds a manifest of the given kind from the YAML of its spec.
func object(t *testing.T, kind, spec string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("ipam.metal3.io/v1alpha1")
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetGenerateName(strings.ToLower(kind) + "-")
	content := map[string]any{}
	if err := yaml.Unmarshal([]byte(spec), &content); err != nil {
		t.Fatalf("test spec is not YAML: %v\n%s", err, spec)
	}
	u.Object["spec"] = content
	return u
}

// runAdmissionCases creates one object per case and checks the API server's answer. A refused
// object must be refused for exactly one reason: one mistake should give the user one message,
// not a cascade from rules that trip over the same bad value.
func runAdmissionCases(t *testing.T, kind string, cases []admissionCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(context.Background(), object(t, kind, tc.spec))
			if tc.want == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			expectRefused(g, err, tc.want)
		})
	}
}

// expectRefused checks that err is the API server refusing an object for one reason, with a
// message containing want.
func expectRefused(g Gomega, err error, want string) {
	g.ExpectWithOffset(1, err).To(HaveOccurred(), "the API server accepted the object; want a refusal saying %q", want)
	g.ExpectWithOffset(1, apierrors.IsInvalid(err)).To(BeTrue(), "want a validation error, got %v", err)
	g.ExpectWithOffset(1, err.Error()).To(ContainSubstring(want))
	var status *apierrors.StatusError
	g.ExpectWithOffset(1, errors.As(err, &status)).To(BeTrue(), "want an API status, got %v", err)
	g.ExpectWithOffset(1, reasons(status)).To(HaveLen(1), "want one reason, got:%s", causes(status))
}

// reasons are the causes of a refusal, without the note the API server adds when a schema error
// (a missing or too long field) kept it from running the CEL rules.
func reasons(status *apierrors.StatusError) []metav1.StatusCause {
	var out []metav1.StatusCause
	for _, c := range status.ErrStatus.Details.Causes {
		if !strings.Contains(c.Message, "some validation rules were not checked") {
			out = append(out, c)
		}
	}
	return out
}

func causes(status *apierrors.StatusError) string {
	var b strings.Builder
	for _, c := range status.ErrStatus.Details.Causes {
		fmt.Fprintf(&b, "\n  %s: %s", c.Field, c.Message)
	}
	return b.String()
}

func ptrTo[T any](v T) *T { return &v }
