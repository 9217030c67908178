package controller

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/yaml"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	"github.com/metalwire/metalwire/internal/scheme"
	"github.com/metalwire/metalwire/test/scale/measure"
)

// maxCachedHostBytes bounds the heap one inspected BareMetalHost takes in the manager's cache
// (testdata/baremetalhost-inspected.yaml: four NICs, six disks, 160 CPU flags, three
// managedFields entries, kubectl's last-applied annotation). Measured on amd64 with Go 1.26:
// its JSON is 10,902 bytes; decoded whole, as an informer without metalwire's types would keep
// it, 57,792 bytes; as metalwire's type (what it does not model dropped) 7,360 bytes; after the
// cache's transform (managedFields dropped) 4,350 bytes, the figure bounded here, with 15% room
// for the allocator and Go versions, not for a field the cache starts keeping.
const maxCachedHostBytes = 5000

// footprintCopies is how many copies of the host are decoded to measure one: enough that
// what other goroutines allocate meanwhile is lost in the figure.
const footprintCopies = 2000

// A BareMetalHost with realistic hardware details, decoded as the manager's cache decodes what
// the API server sends (metalwire's subset type: what it does not model is dropped) and
// transformed as the cache transforms it, stays within maxCachedHostBytes: at 10,000 hosts,
// each byte here is 10 kB of the manager's memory. The NICs, which the controllers read, are
// still there.
func TestCachedBareMetalHostFootprint(t *testing.T) {
	manifest, err := os.ReadFile("testdata/baremetalhost-inspected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.YAMLToJSON(manifest)
	if err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme.New()).UniversalDeserializer()
	transform := CacheTransform()
	decodeHost := func() *bmov1.BareMetalHost {
		obj, _, err := decoder.Decode(data, nil, &bmov1.BareMetalHost{})
		if err != nil {
			t.Fatalf("decoding the host: %v", err)
		}
		return obj.(*bmov1.BareMetalHost)
	}

	var cached, typed, whole int64
	// Each copy decoded on its own, as each watch event is: no sharing between them.
	cached = measure.Retained(func() any {
		hosts := make([]any, footprintCopies)
		for i := range hosts {
			h, err := transform(decodeHost())
			if err != nil {
				t.Fatal(err)
			}
			hosts[i] = h
		}
		return hosts
	}) / footprintCopies
	typed = measure.Retained(func() any {
		hosts := make([]any, footprintCopies)
		for i := range hosts {
			hosts[i] = decodeHost()
		}
		return hosts
	}) / footprintCopies
	whole = measure.Retained(func() any {
		hosts := make([]any, footprintCopies)
		for i := range hosts {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
			hosts[i] = u
		}
		return hosts
	}) / footprintCopies
	t.Logf("one inspected BareMetalHost: %d bytes of JSON; decoded whole (unstructured) %d bytes; as metalwire's type %d bytes; as the manager's cache keeps it (type + CacheTransform) %d bytes (bound %d)",
		len(data), whole, typed, cached, maxCachedHostBytes)

	if cached > maxCachedHostBytes {
		t.Errorf("an inspected BareMetalHost takes %d bytes in the manager's cache, over the bound of %d: something the cache keeps grew (a field added to api/baremetal/v1alpha1, or a transform that keeps more); keep in the cache only what controllers read, or raise the bound with the measurement that justifies it",
			cached, maxCachedHostBytes)
	}
	h := decodeHost()
	if _, err := transform(h); err != nil {
		t.Fatal(err)
	}
	if d := h.Status.HardwareDetails; d == nil || len(d.NIC) != 4 || d.NIC[1].MAC != "b4:96:91:a7:3c:11" {
		t.Errorf("the cached host lost its NICs, which the controllers read (networkData from host interfaces, switch ports): %+v", d)
	}
	if len(h.ManagedFields) != 0 {
		t.Errorf("the cached host keeps %d managedFields entries; the cache's transform drops them", len(h.ManagedFields))
	}
}
