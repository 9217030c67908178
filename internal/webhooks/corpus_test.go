package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/metalwire/metalwire/internal/testenv"
)

// The corpus (test/fixtures/capm3-corpus) is manifests in the shapes upstream publishes for
// CAPM3 v1beta1 and v1beta2 and for ip-address-manager, written for metalwire. Each object goes
// through what a GitOps tool or a person does with it: applied (server-side, strict field
// validation), read back through both versions, applied again, and the same with kubectl's
// client-side apply. A user notices any of: a field that comes back different or missing, a
// member the manifest never had, a second apply that writes (generation and resourceVersion
// move: Argo CD and Flux re-sync forever), and a v1beta1 object that upstream CAPM3 would refuse.

const (
	infraGroup    = "infrastructure.cluster.x-k8s.io"
	corpusManager = "corpus-gitops"
	lastApplied   = "kubectl.kubernetes.io/last-applied-configuration"
)

// defaulted are the fields the API server fills in from the CRD's defaults (as it does for
// upstream's CRDs): a read-back may hold them where the manifest has nothing.
var defaulted = []string{"mtu", "step", "apiGroup", "kind", "nodeReuse", "retryLimit", "timeoutSeconds", "allocationStrategy"}

func corpus(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, f := range []string{"v1beta1.yaml", "v1beta2.yaml", "ipam.yaml"} {
		for _, u := range readManifests(t, filepath.Join(root, "test", "fixtures", "capm3-corpus", f)) {
			if len(u.Object) > 0 {
				objs = append(objs, u)
			}
		}
	}
	return objs
}

// TestCAPM3CorpusServerSideApply: each corpus object applied server-side reads back through its
// version with nothing changed and nothing added (but the CRD's defaults), through the other
// version with every field in its place, and a second apply of the same manifest writes nothing.
func TestCAPM3CorpusServerSideApply(t *testing.T) {
	// Upstream's schemas are reference files beside the checkout: without them (outside CI) the
	// rest of the test still runs.
	var upstream upstreamSchemas
	t.Run("upstream v1beta1 schemas", func(t *testing.T) { upstream = upstreamV1beta1Schemas(t) })
	for _, manifest := range corpus(t) {
		t.Run(manifest.GetKind()+"/"+manifest.GetAPIVersion()+"/"+manifest.GetName(), func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			obj := manifest.DeepCopy()
			obj.SetNamespace(env.NewNamespace(t))
			g.Expect(serverSideApply(ctx, obj)).To(Succeed())

			first := readAs(ctx, g, obj, obj.GetAPIVersion())
			g.Expect(differences(obj.Object["spec"], first.Object["spec"], "spec", true)).To(BeEmpty(),
				"read back as %s, the object is what was applied", obj.GetAPIVersion())
			checkOtherVersion(ctx, g, obj)
			if v1beta1 := v1beta1View(ctx, g, obj); v1beta1 != nil && upstream != nil {
				g.Expect(upstream.validate(v1beta1)).To(BeEmpty(), "upstream CAPM3's v1beta1 schema accepts the object metalwire serves")
			}

			g.Expect(serverSideApply(ctx, obj.DeepCopy())).To(Succeed())
			again := readAs(ctx, g, obj, obj.GetAPIVersion())
			g.Expect(again.GetResourceVersion()).To(Equal(first.GetResourceVersion()), "a second apply of the same manifest writes nothing")
			g.Expect(again.GetGeneration()).To(Equal(first.GetGeneration()))

			// A v1beta1 client (an older controller, kubectl edit without changes) writes the
			// object back as it read it: nothing changes, so the manifest still applies cleanly.
			if old := v1beta1View(ctx, g, obj); old != nil {
				g.Expect(env.Client.Update(ctx, old)).To(Succeed())
				after := readAs(ctx, g, obj, obj.GetAPIVersion())
				g.Expect(differences(first.Object["spec"], after.Object["spec"], "spec", true)).To(BeEmpty(),
					"a v1beta1 client writing the object back unchanged changes nothing")
				g.Expect(differences(first.Object, after.Object, "", true)).To(BeEmpty(), "nothing of the stored object changes")
				g.Expect(after.GetResourceVersion()).To(Equal(first.GetResourceVersion()), "writing it back unchanged writes nothing")
			}
		})
	}
}

// TestCAPM3CorpusClientSideApply is the corpus through kubectl's client-side apply: the
// last-applied annotation and a three-way JSON merge patch, which kubectl skips when empty.
func TestCAPM3CorpusClientSideApply(t *testing.T) {
	for _, manifest := range corpus(t) {
		t.Run(manifest.GetKind()+"/"+manifest.GetAPIVersion()+"/"+manifest.GetName(), func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			obj := manifest.DeepCopy()
			obj.SetNamespace(env.NewNamespace(t))
			g.Expect(clientSideApply(ctx, obj)).To(Succeed())
			first := readAs(ctx, g, obj, obj.GetAPIVersion())
			g.Expect(differences(obj.Object["spec"], first.Object["spec"], "spec", true)).To(BeEmpty())

			g.Expect(clientSideApply(ctx, obj)).To(Succeed())
			again := readAs(ctx, g, obj, obj.GetAPIVersion())
			g.Expect(again.GetResourceVersion()).To(Equal(first.GetResourceVersion()), "a second kubectl apply of the same manifest writes nothing")
			g.Expect(again.GetGeneration()).To(Equal(first.GetGeneration()))
		})
	}
}

func serverSideApply(ctx context.Context, obj *unstructured.Unstructured) error {
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	target := obj.DeepCopy()
	return env.Client.Patch(ctx, target, client.RawPatch(types.ApplyPatchType, body),
		client.FieldOwner(corpusManager), client.ForceOwnership, client.FieldValidation("Strict"))
}

// clientSideApply does what `kubectl apply` (without --server-side) does with a custom resource.
func clientSideApply(ctx context.Context, obj *unstructured.Unstructured) error {
	modified := obj.DeepCopy()
	config, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	annotations := modified.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[lastApplied] = string(config)
	modified.SetAnnotations(annotations)

	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return err
		}
		return env.Client.Create(ctx, modified, client.FieldValidation("Strict"))
	}
	original := []byte(live.GetAnnotations()[lastApplied])
	modifiedJSON, err := json.Marshal(modified.Object)
	if err != nil {
		return err
	}
	current, err := json.Marshal(live.Object)
	if err != nil {
		return err
	}
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modifiedJSON, current)
	if err != nil {
		return err
	}
	if string(patch) == "{}" {
		return nil // kubectl: "unchanged"
	}
	return env.Client.Patch(ctx, live, client.RawPatch(types.MergePatchType, patch), client.FieldValidation("Strict"))
}

func readAs(ctx context.Context, g Gomega, obj *unstructured.Unstructured, apiVersion string) *unstructured.Unstructured {
	out := &unstructured.Unstructured{}
	out.SetAPIVersion(apiVersion)
	out.SetKind(obj.GetKind())
	g.ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKeyFromObject(obj), out)).To(Succeed())
	return out
}

// v1beta1View reads an infrastructure object as v1beta1, or returns nil for other groups.
func v1beta1View(ctx context.Context, g Gomega, obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj.GroupVersionKind().Group != infraGroup {
		return nil
	}
	return readAs(ctx, g, obj, infraGroup+"/v1beta1")
}

// checkOtherVersion reads the object through the version it was not written in and finds every
// field of the manifest there, at its place in that version.
func checkOtherVersion(ctx context.Context, g Gomega, obj *unstructured.Unstructured) {
	gvk := obj.GroupVersionKind()
	if gvk.Group != infraGroup {
		return
	}
	other, toOther := "v1beta2", renameToV1beta2
	if gvk.Version == "v1beta2" {
		other, toOther = "v1beta1", renameToV1beta1
	}
	back := readAs(ctx, g, obj, infraGroup+"/"+other)
	want := toOther(normalise(obj.Object["spec"]))
	g.ExpectWithOffset(1, differences(want, back.Object["spec"], "spec", false)).To(BeEmpty(),
		"read as %s, every field of the manifest is at its %s place", other, other)
}

// differences lists where got does not hold want: a field missing or different, and with exact,
// a field want does not have (except the CRD's defaults).
func differences(want, got any, path string, exact bool) []string {
	want, got = normalise(want), normalise(got)
	var out []string
	switch w := want.(type) {
	case map[string]any:
		gm, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object %v, got %v", path, w, got)}
		}
		for k, wv := range w {
			gv, ok := gm[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing (want %v)", path, k, wv))
				continue
			}
			out = append(out, differences(wv, gv, path+"."+k, exact)...)
		}
		if exact {
			for k, gv := range gm {
				if _, ok := w[k]; !ok && !slices.Contains(defaulted, k) {
					out = append(out, fmt.Sprintf("%s.%s: added %v, the manifest has no such field", path, k, gv))
				}
			}
		}
	case []any:
		gl, ok := got.([]any)
		if !ok || len(gl) != len(w) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, w, got)}
		}
		for i := range w {
			out = append(out, differences(w[i], gl[i], fmt.Sprintf("%s[%d]", path, i), exact)...)
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			out = append(out, fmt.Sprintf("%s: want %v, got %v", path, want, got))
		}
	}
	sort.Strings(out)
	return out
}

// normalise gives a value the types encoding/json gives it (float64 numbers).
func normalise(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return v
	}
	return out
}

// renameToV1beta2 moves v1beta1 fields to their v1beta2 places (docs/versions.md's table).
func renameToV1beta2(spec any) any {
	return walk(spec, func(key string, parent map[string]any) {
		switch key {
		case "format":
			if _, image := parent["url"]; image {
				parent["diskFormat"] = parent["format"]
				delete(parent, "format")
			}
		case "ipAddressesFromIPPool", "prefixesFromIPPool", "gatewaysFromIPPool", "dnsServersFromIPPool":
			if _, list := parent[key].([]any); list {
				parent[strings.TrimSuffix(key, "IPPool")+"Pool"] = parent[key]
				delete(parent, key)
			}
		case "failureDomains":
			parent[key] = mapToNamedList(parent[key], "name", nil)
		case "parameters":
			parent[key] = mapToNamedList(parent[key], "name", func(v any) any { return map[string]any{"value": v} })
		case "timeout":
			delete(parent, key) // a duration in v1beta1, whole seconds in v1beta2: TestRemediationTimeoutText
		case "templateReference":
			delete(parent, key) // v1beta1 only, kept in an annotation
		case "ipAddressFromIPPool":
			if parent[key] == "" {
				delete(parent, key) // v1beta2 omits an empty pool name
			}
		case "apiGroup", "kind":
			if parent[key] == "" {
				delete(parent, key) // v1beta2 holds its default instead
			}
		}
	})
}

// renameToV1beta1 is renameToV1beta2 the other way.
func renameToV1beta1(spec any) any {
	return walk(spec, func(key string, parent map[string]any) {
		switch key {
		case "diskFormat":
			parent["format"] = parent[key]
			delete(parent, key)
		case "ipAddressesFromPool", "prefixesFromPool", "gatewaysFromPool", "dnsServersFromPool":
			parent[strings.TrimSuffix(key, "Pool")+"IPPool"] = parent[key]
			delete(parent, key)
		case "failureDomains":
			parent[key] = namedListToMap(parent[key], nil)
		case "parameters":
			parent[key] = namedListToMap(parent[key], func(v map[string]any) any { return v["value"] })
		case "timeoutSeconds":
			delete(parent, key)
		case "fromBootMAC":
			if b, ok := parent[key].(bool); ok && !b {
				delete(parent, key) // v1beta1's fromHostInterfaces has no false
			}
		case "checksum":
			if parent[key] == "" {
				delete(parent, key)
			}
		}
	})
}

// walk calls f for every key of every object in v (children first), on a copy.
func walk(v any, f func(key string, parent map[string]any)) any {
	v = normalise(v)
	var visit func(any)
	visit = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k, c := range x {
				visit(c)
				keys = append(keys, k)
			}
			for _, k := range keys {
				f(k, x)
			}
		case []any:
			for _, c := range x {
				visit(c)
			}
		}
	}
	visit(v)
	return v
}

func mapToNamedList(v any, key string, wrap func(any) any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]any, 0, len(m))
	for _, n := range names {
		item := map[string]any{}
		if wrap != nil {
			item = wrap(m[n]).(map[string]any) //nolint:forcetypeassert // wrap makes objects
		} else if fields, ok := m[n].(map[string]any); ok {
			for k, fv := range fields {
				item[k] = fv
			}
		}
		item[key] = n
		out = append(out, item)
	}
	return out
}

func namedListToMap(v any, unwrap func(map[string]any) any) any {
	l, ok := v.([]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for _, x := range l {
		item, _ := x.(map[string]any)
		name, _ := item["name"].(string)
		if unwrap != nil {
			out[name] = unwrap(item)
			continue
		}
		rest := map[string]any{}
		for k, fv := range item {
			if k != "name" {
				rest[k] = fv
			}
		}
		out[name] = rest
	}
	return out
}
