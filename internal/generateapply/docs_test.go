package generateapply_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/internal/generateapply"
	"github.com/metalwire/metalwire/pkg/generate"
)

// block returns the body of the first fenced block of the language after the heading.
func block(t *testing.T, doc, heading, lang string) string {
	t.Helper()
	i := strings.Index(doc, heading)
	if i < 0 {
		t.Fatalf("docs/generate.md has no %q", heading)
	}
	rest := doc[i:]
	start := strings.Index(rest, "```"+lang+"\n")
	if start < 0 {
		t.Fatalf("no ```%s block after %q", lang, heading)
	}
	rest = rest[start+len("```"+lang+"\n"):]
	end := strings.Index(rest, "```")
	if end < 0 {
		t.Fatalf("the ```%s block after %q is not closed", lang, heading)
	}
	return rest[:end]
}

// The page's example runs as written, and prints what the page shows.
func TestDocsExampleRunsAsWritten(t *testing.T) {
	g := NewWithT(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "generate.md"))
	g.Expect(err).NotTo(HaveOccurred())
	doc := string(data)
	f, err := generate.Parse([]byte(block(t, doc, "## Example", "yaml")))
	g.Expect(err).NotTo(HaveOccurred())

	var want []string
	for _, line := range strings.Split(block(t, doc, "## Example", "console"), "\n") {
		if line != "" && !strings.HasPrefix(line, "$") && !strings.HasPrefix(line, "    --") {
			want = append(want, line)
		}
	}
	ns := env.NewNamespace(t)
	var out bytes.Buffer
	o := generate.Options{Cluster: "demo", Namespace: ns, ImageURL: "http://images.example.com/ubuntu.qcow2", ImageChecksum: "http://images.example.com/ubuntu.qcow2.sha256sum"}
	_, err = generateapply.Run(context.Background(), env.Client, generateapply.Options{File: f, Generate: o, Out: &out})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.ReplaceAll(out.String(), ns+"/", "metal3/")).To(Equal(strings.Join(want, "\n") + "\n"))

	// The files the page shows are what the node gets.
	res, err := f.Generate(generate.State{}, o)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(doc).To(ContainSubstring("```yaml\n" + string(res.Nodes[0].OSNetConfig) + "```"))
	g.Expect(doc).To(ContainSubstring("```yaml\n" + string(res.Nodes[0].Mapping) + "```"))
}
