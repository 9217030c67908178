package data

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// shapes are the fields the objects of each kind of the data path carry (paths such as
// metadata.ownerReferences[kind=Metal3Machine].uid or status.conditions[type=Ready].reason), as
// sampled from a namespace after a run. The floor writes the objects the manager writes; a field
// one has and the other lacks makes each write of the floor cheaper or dearer than the manager's,
// and printShapes says so.
type shapes map[string]map[string]bool

// dataKinds are the kinds whose writes the floor makes by hand.
var dataKinds = []schema.GroupVersionKind{
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "Metal3DataClaimList"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "Metal3DataList"},
	{Group: "ipam.metal3.io", Version: "v1alpha1", Kind: "IPClaimList"},
	{Group: "ipam.metal3.io", Version: "v1alpha1", Kind: "IPAddressList"},
	{Group: "", Version: "v1", Kind: "SecretList"},
}

// sampleShapes reads a few objects of each data kind in ns and records their fields.
func sampleShapes(ctx context.Context, c client.Reader, ns string) (shapes, error) {
	out := shapes{}
	for _, gvk := range dataKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		if err := c.List(ctx, list, client.InNamespace(ns), client.Limit(4)); err != nil {
			return nil, fmt.Errorf("sampling %s: %w", gvk.Kind, err)
		}
		kind := strings.TrimSuffix(gvk.Kind, "List")
		out[kind] = map[string]bool{}
		for _, o := range list.Items {
			walkFields("", o.Object, out[kind])
		}
	}
	return out, nil
}

// walkFields records the path of every field under v, lists of objects keyed by their type or
// kind, other lists as []. Bookkeeping the API server adds to every object is left out.
func walkFields(path string, v any, into map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			switch path + k {
			case "metadata.managedFields", "metadata.resourceVersion", "metadata.uid", "metadata.creationTimestamp", "metadata.generation":
				continue
			}
			walkFields(path+k+".", child, into)
		}
	case []any:
		for _, item := range v {
			key := "[]"
			if m, ok := item.(map[string]any); ok {
				for _, by := range []string{"type", "kind"} {
					if s, ok := m[by].(string); ok {
						key = "[" + by + "=" + s + "]"
						break
					}
				}
			}
			walkFields(strings.TrimSuffix(path, ".")+key+".", item, into)
		}
	default:
		into[strings.TrimSuffix(path, ".")] = true
	}
}

// printShapes prints the fields the floor's objects and a run's do not share, kind by kind, or
// that they share them all.
func printShapes(floor, run shapes, limits string) {
	if floor == nil || run == nil {
		return
	}
	same := true
	for _, kind := range slices.Sorted(maps.Keys(run)) {
		var onlyFloor, onlyRun []string
		for p := range floor[kind] {
			if !run[kind][p] {
				onlyFloor = append(onlyFloor, p)
			}
		}
		for p := range run[kind] {
			if !floor[kind][p] {
				onlyRun = append(onlyRun, p)
			}
		}
		if len(onlyFloor)+len(onlyRun) == 0 {
			continue
		}
		same = false
		slices.Sort(onlyFloor)
		slices.Sort(onlyRun)
		fmt.Printf("  %s: the floor's %s has fields the %s run's lacks %v, and lacks %v\n", limits, kind, limits, onlyFloor, onlyRun)
	}
	if same {
		fmt.Printf("  objects: the floor's carry the same fields as the %s run's\n", limits)
	}
}
