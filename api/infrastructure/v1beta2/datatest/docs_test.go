package datatest

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/testenv"
)

// The API reference pages promise what users see. These tests hold the pages to it: every
// example marked `<!-- test: applies -->` applies, every example marked
// `<!-- test: refused <field>: <message> -->` is refused with that message, and every message the
// validation tests assert is listed on the kind's page.

var docPages = []string{
	"metal3datatemplate.md",
	"metal3data.md",
	"metal3preprovisioningdatatemplate.md",
}

// docExample is a YAML block of a page and what the page says the API server does with it.
type docExample struct {
	line    int
	yaml    string
	refused string // "<field>: <message>"; empty when the example applies
}

func readDocPage(t *testing.T, page string) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(filepath.Join(root, "docs", "api", page))
	if err != nil {
		t.Fatalf("reading the API reference page: %v", err)
	}
	return string(content)
}

// examplesOf finds the marked YAML blocks of a page.
func examplesOf(page string) []docExample {
	var (
		examples []docExample
		current  *docExample
		marked   *docExample
		body     strings.Builder
	)
	scanner := bufio.NewScanner(strings.NewReader(page))
	for n := 1; scanner.Scan(); n++ {
		line := scanner.Text()
		switch {
		case current != nil && line == "```":
			current.yaml = body.String()
			examples = append(examples, *current)
			current = nil
		case current != nil:
			body.WriteString(line + "\n")
		case strings.HasPrefix(line, "<!-- test: applies -->"):
			marked = &docExample{line: n}
		case strings.HasPrefix(line, "<!-- test: refused "):
			want := strings.TrimSuffix(strings.TrimPrefix(line, "<!-- test: refused "), " -->")
			marked = &docExample{line: n, refused: want}
		case marked != nil && line == "```yaml":
			current, marked = marked, nil
			body.Reset()
		}
	}
	return examples
}

func TestDocExamples(t *testing.T) {
	for _, page := range docPages {
		t.Run(page, func(t *testing.T) {
			examples := examplesOf(readDocPage(t, page))
			if len(examples) == 0 {
				t.Fatalf("%s has no tested example", page)
			}
			ns := newNamespace(t)
			for _, ex := range examples {
				for _, doc := range bytes.Split([]byte(ex.yaml), []byte("\n---\n")) {
					g := NewWithT(t)
					obj := &unstructured.Unstructured{}
					g.Expect(yaml.Unmarshal(doc, &obj.Object)).To(Succeed(), "%s:%d is not YAML", page, ex.line)
					obj.SetNamespace(ns) // the pages use their own namespace; tests stay apart
					// Strict, as `kubectl apply` warns: a misspelt field in an example is an error,
					// not silently pruned.
					err := env.Client.Create(context.Background(), obj, client.FieldValidation("Strict"))
					if ex.refused == "" {
						g.Expect(err).NotTo(HaveOccurred(), "%s:%d: the example must apply", page, ex.line)
						continue
					}
					field, message, ok := strings.Cut(ex.refused, ": ")
					g.Expect(ok).To(BeTrue(), "%s:%d: write <!-- test: refused <field>: <message> -->", page, ex.line)
					expectRefused(g, err, field, message)
				}
			}
		})
	}
}

// TestDocsListEveryMessage keeps each page's error table complete: a message a validation test
// asserts must be on the page of its kind.
func TestDocsListEveryMessage(t *testing.T) {
	messages := map[string][]string{}
	for _, cases := range [][]templateCase{metaDataRefusals, linkRefusals, networkRefusals} {
		for _, tc := range cases {
			messages["metal3datatemplate.md"] = append(messages["metal3datatemplate.md"], tc.message)
		}
	}
	messages["metal3datatemplate.md"] = append(messages["metal3datatemplate.md"], metaDataImmutable, networkDataImmutable)
	messages["metal3data.md"] = []string{
		indexImmutable, claimImmutable, dataTemplateImmut, claimTemplateImmut,
		"claim.name is required: name the Metal3DataClaim, in the same namespace",
		"template.name is required: name the Metal3DataTemplate, in the same namespace",
		"template.name is required: name the Metal3DataTemplate, in the claim's namespace, to take an index from",
	}
	messages["metal3preprovisioningdatatemplate.md"] = []string{preprovMACMsg, preprovPoolMsg}

	for page, want := range messages {
		content := readDocPage(t, page)
		for _, m := range want {
			if !strings.Contains(content, m) {
				t.Errorf("%s does not list the message %q", page, m)
			}
		}
	}
}

// TestRealisticTemplateApplies applies the reference page's main example (bonds, a VLAN, static
// IPv4 and IPv6 from pools, DHCP, routes, DNS) and reads back what the controllers will render
// from: nothing lost, defaults filled in.
func TestRealisticTemplateApplies(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	examples := examplesOf(readDocPage(t, "metal3datatemplate.md"))
	g.Expect(examples).NotTo(BeEmpty())
	tpl := &infrav1.Metal3DataTemplate{}
	g.Expect(yaml.UnmarshalStrict([]byte(examples[0].yaml), tpl)).To(Succeed(), "the example has a field the Go types do not know")
	tpl.Namespace = newNamespace(t)
	g.Expect(env.Client.Create(ctx, tpl)).To(Succeed())

	got := &infrav1.Metal3DataTemplate{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tpl), got)).To(Succeed())
	nd := got.Spec.NetworkData
	g.Expect(nd.Links.Bonds).To(HaveLen(1))
	g.Expect(nd.Links.Bonds[0].BondLinks).To(Equal([]infrav1.LinkID{"enp2s0f0", "enp2s0f1"}))
	g.Expect(nd.Links.Bonds[0].Parameters).To(HaveLen(2))
	g.Expect(string(nd.Links.Bonds[0].Parameters[0].Value.Raw)).To(Equal("100"))
	g.Expect(nd.Links.Vlans[0].VlanLink).To(Equal(infrav1.LinkID("bond0")))
	g.Expect(nd.Links.Ethernets[0].MTU).To(Equal(infrav1.MTU(1500)), "an unset mtu defaults to 1500")
	g.Expect(nd.Links.Ethernets[1].MTU).To(Equal(infrav1.MTU(9000)))
	g.Expect(nd.Networks.IPv4[0].IPAddressFromIPPool).To(Equal("public-v4"))
	g.Expect(nd.Networks.IPv6[0].IPAddressFromIPPool).To(Equal("public-v6"))
	g.Expect(nd.Networks.IPv4DHCP[0].Link).To(Equal(infrav1.LinkID("provisioning")))
	g.Expect(*nd.Networks.IPv4[0].Routes[0].Gateway.FromIPPool).To(Equal("public-v4"))
	g.Expect(nd.Services.DNS).To(Equal([]infrav1.IPAddress{"192.0.2.53", "2001:db8:100::53"}))
	g.Expect(got.Spec.MetaData.Indexes[0].Step).To(Equal(int32(1)), "an unset step defaults to 1")
}
