package v1beta2_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/testenv"
)

// env is the one API server the package's tests share. There must be no other TestMain in this
// package: tests of every kind here use env.
var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// admissionCase is a manifest as a user writes it, and what the API server must answer:
// accepted when want is empty, else refused as Invalid with every want in the message.
type admissionCase struct {
	name  string
	given string
	want  []string
}

// runAdmissionCases applies each manifest as kubectl does (strict field validation, so unknown
// fields are errors rather than silently dropped) under a fresh name, and checks the answer.
func runAdmissionCases(t *testing.T, prefix string, cases []admissionCase) {
	t.Helper()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := &unstructured.Unstructured{}
			g.Expect(yaml.Unmarshal([]byte(tc.given), &obj.Object)).To(Succeed())
			obj.SetNamespace("default")
			obj.SetName(fmt.Sprintf("%s-%d", prefix, i))

			err := env.Client.Create(context.Background(), obj, client.FieldValidation("Strict"))
			if len(tc.want) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(HaveOccurred())
			t.Logf("refused as a user sees it: %v", err)
			g.Expect(apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)).To(BeTrue(), "want Invalid or BadRequest, got %v", err)
			for _, want := range tc.want {
				g.Expect(err.Error()).To(ContainSubstring(want))
			}
		})
	}
}

// indent shifts a YAML fragment right, to reuse one spec under spec.template.spec.
func indent(fragment string, spaces int) string {
	pad := strings.Repeat(" ", spaces)
	lines := strings.Split(strings.TrimRight(fragment, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
