package cachepolicy

import (
	"os"
	"reflect"
	"sync"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/scheme"
)

func sameBytes(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// cachedMachine decodes testdata/machine-running.yaml as a watch event is and transforms it as
// the manager's cache does.
func cachedMachine(t *testing.T) *clusterv1.Machine {
	t.Helper()
	manifest, err := os.ReadFile("testdata/machine-running.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.YAMLToJSON(manifest)
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := serializer.NewCodecFactory(scheme.New()).UniversalDeserializer().Decode(data, nil, &clusterv1.Machine{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Transform()(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out.(*clusterv1.Machine)
}

// Two Machines decoded from separate watch events share one copy of what every Machine of a
// cluster repeats (namespace, label keys and values and the labels map itself, finalizers, the owner's kind, conditions'
// type, status and reason) and keep their own name and uid, unchanged in value.
func TestCacheTransformSharesRepeatedStrings(t *testing.T) {
	a, b := cachedMachine(t), cachedMachine(t)
	if !reflect.DeepEqual(a, b) || a.Labels[clusterv1.ClusterNameLabel] != "prod-east" || a.Namespace != "metal3" {
		t.Fatalf("interning changed what the cached Machine says: %+v", a.ObjectMeta)
	}
	shared := map[string][2]string{
		"namespace":                {a.Namespace, b.Namespace},
		"the cluster-name label":   {a.Labels[clusterv1.ClusterNameLabel], b.Labels[clusterv1.ClusterNameLabel]},
		"a finalizer":              {a.Finalizers[0], b.Finalizers[0]},
		"the owner's kind":         {a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind},
		"the owner's apiVersion":   {a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion},
		"a condition's type":       {a.Status.Conditions[0].Type, b.Status.Conditions[0].Type},
		"a condition's status":     {string(a.Status.Conditions[0].Status), string(b.Status.Conditions[0].Status)},
		"a condition's reason":     {a.Status.Conditions[0].Reason, b.Status.Conditions[0].Reason},
		"a v1beta1 condition type": {string(a.GetV1Beta1Conditions()[0].Type), string(b.GetV1Beta1Conditions()[0].Type)},
	}
	for what, s := range shared {
		if !sameBytes(s[0], s[1]) {
			t.Errorf("%s (%q) is stored twice by two cached Machines; the cache's transform interns it", what, s[0])
		}
	}
	for k := range a.Labels {
		if _, ok := b.Labels[k]; ok && !sameBytes(k, keyOf(b.Labels, k)) {
			t.Errorf("label key %q is stored twice", k)
		}
	}
	if reflect.ValueOf(a.Labels).UnsafePointer() != reflect.ValueOf(b.Labels).UnsafePointer() {
		t.Error("two cached Machines with the same labels hold a labels map each; the cache's transform shares one")
	}
	if sameBytes(a.Name, b.Name) || sameBytes(string(a.UID), string(b.UID)) {
		t.Error("two cached Machines share their name or uid: strings one object owns are interned, which costs a table entry and saves nothing")
	}
}

func keyOf(m map[string]string, k string) string {
	for key := range m {
		if key == k {
			return key
		}
	}
	return ""
}

// The informer may hand the transform an object its cache already holds (a resync) while
// controllers read it: transforming it again writes nothing (go test -race watches the reads),
// and leaves its maps and strings where they were.
func TestCacheTransformAgainWritesNothing(t *testing.T) {
	m := cachedMachine(t)
	labels, ns, reason := reflect.ValueOf(m.Labels).UnsafePointer(), m.Namespace, m.Status.Conditions[0].Reason
	transform := Transform()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range 200 {
				_ = m.DeepCopy()
			}
		})
	}
	for range 200 {
		if _, err := transform(m); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if reflect.ValueOf(m.Labels).UnsafePointer() != labels || !sameBytes(m.Namespace, ns) || !sameBytes(m.Status.Conditions[0].Reason, reason) {
		t.Error("transforming a cached Machine again replaced its labels map or its strings")
	}
}
