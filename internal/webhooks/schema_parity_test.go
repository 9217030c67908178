package webhooks_test

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/testenv"
)

// TestSchemaMatchesUpstream compares metalwire's CRDs with upstream's, for every kind both
// serve: the v1beta2 schema of the infrastructure kinds and the v1alpha1 schema of
// ipam.metal3.io, field by field (types, enums, defaults, list types, required, bounds), plus the
// short names. Every difference must be listed, with its reason, in docs/versions.md's table
// of differences; a difference not listed fails, and so does a listed one that no longer is.
func TestSchemaMatchesUpstream(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	documented := documentedDifferences(t, filepath.Join(root, "docs", "versions.md"))
	found := map[string]bool{}
	for group, version := range map[string]string{infraGroup: "v1beta2", "ipam.metal3.io": "v1alpha1"} {
		for kind, up := range upstreamCRDs(t, group) {
			ours := ourCRD(t, root, up.Name)
			for _, n := range up.Spec.Names.ShortNames {
				if !slicesContains(ours.Spec.Names.ShortNames, n) {
					found[kind+" shortNames: missing ("+n+")"] = true
				}
			}
			upSchema, oursSchema := versionSchema(up, version), versionSchema(ours, version)
			if upSchema == nil || oursSchema == nil {
				found[kind+" "+version+": missing (a version upstream serves)"] = true
				continue
			}
			for _, d := range schemaDifferences("", upSchema, oursSchema) {
				if strings.HasPrefix(d, ":") {
					d = "(object)" + d // the object itself
				}
				found[kind+" "+strings.TrimPrefix(d, ".")] = true
			}
		}
	}
	var undocumented, stale []string
	for d := range found {
		if !matchesAny(documented, differenceKey(d)) {
			undocumented = append(undocumented, d)
		}
	}
	for k := range documented {
		if !foundKey(found, k) {
			stale = append(stale, k)
		}
	}
	sort.Strings(undocumented)
	sort.Strings(stale)
	if len(undocumented) > 0 {
		t.Errorf("metalwire's schema differs from upstream's where docs/versions.md does not say why; match upstream or add a row (kind, field, aspect, reason) to its table of differences:\n%s", strings.Join(undocumented, "\n"))
	}
	if len(stale) > 0 {
		t.Errorf("docs/versions.md lists differences from upstream's schema that are gone; remove the rows:\n%s", strings.Join(stale, "\n"))
	}
}

// differenceKey is what a documented row names: the kind, the field path and the aspect.
func differenceKey(d string) string {
	if i := strings.LastIndex(d, " ("); i >= 0 {
		return d[:i]
	}
	return d
}

// A documented row's kind and field may be patterns (path.Match: `*` matches any text, dots
// included), one row for a family of differences with one reason.
func rowMatches(row, key string) bool {
	pattern := strings.NewReplacer("[", `\[`, "]", `\]`).Replace(row)
	ok, err := path.Match(pattern, key)
	return err == nil && ok
}

func matchesAny(rows map[string]bool, key string) bool {
	for row := range rows {
		if rowMatches(row, key) {
			return true
		}
	}
	return false
}

func foundKey(found map[string]bool, row string) bool {
	for d := range found {
		if rowMatches(row, differenceKey(d)) {
			return true
		}
	}
	return false
}

var differenceRow = regexp.MustCompile("^\\| `([A-Za-z0-9*]+)` \\| `([^`]+)` \\| ([a-zA-Z]+) \\|")

// documentedDifferences reads the rows of docs/versions.md's table of differences from
// upstream's schema: | `Kind` | `field.path` | aspect | reason |.
func documentedDifferences(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if m := differenceRow.FindStringSubmatch(line); m != nil {
			out[m[1]+" "+m[2]+": "+m[3]] = true
		}
	}
	return out
}

func ourCRD(t *testing.T, root, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	plural, group, _ := strings.Cut(name, ".")
	data, err := os.ReadFile(filepath.Join(root, "config", "crd", "bases", group+"_"+plural+".yaml"))
	if err != nil {
		t.Fatalf("metalwire has no CRD %s: %v", name, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

func versionSchema(crd *apiextensionsv1.CustomResourceDefinition, version string) *apiextensionsv1.JSONSchemaProps {
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Schema != nil {
			return v.Schema.OpenAPIV3Schema
		}
	}
	return nil
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
