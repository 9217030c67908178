package cachepolicy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/yaml"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/scheme"
	"github.com/metalwire/metalwire/test/scale/measure"
)

// The bounds on the heap one object of each kind the cache transforms takes in the manager's
// cache, decoded and transformed as the cache does (measured on amd64 with Go 1.26; 15% room for
// the allocator and Go versions, not for a field the cache starts keeping). At 10,000 machines
// each byte here is 10 kB of the manager's memory (20 kB for the two Secrets).
const (
	// testdata/baremetalhost-inspected.yaml (four NICs, six disks, 160 CPU flags, three
	// managedFields entries, kubectl's last-applied annotation): JSON 10,902 bytes; decoded
	// whole (unstructured, as an informer without metalwire's types keeps it) 57,792; as
	// metalwire's type (what it does not model dropped) 7,360; managedFields dropped (the cache
	// until 2026-11-26) 4,350; with the last-applied annotation, the NICs' models and VLANs and
	// the provisioning image dropped too, 3,282 (3,352 with each copy's own names, MACs and
	// IPs, as the test now decodes them); with the strings hosts repeat interned (namespace,
	// labels, annotation keys, finalizers, owners' kinds, the state, the consumer's kind, the
	// NICs' names), 2,913; with the labels map shared by objects of the same labels, as now,
	// 2,577.
	maxCachedHostBytes = 2960
	// testdata/secret-networkdata.yaml (1,687 bytes of networkData, 1,067 of os-net-config
	// beside it) cached whole, as a pre-provisioned host's networkData Secret is: JSON 4,922
	// bytes; as the type 5,448; managedFields dropped 4,904; networkData the only key kept, 3,785
	// (3,823 with each copy's own names); the repeated strings interned, 3,585; the labels map
	// shared, as now, 3,284. A Metal3Data's Secrets are no longer cached whole (below).
	maxCachedNetworkDataSecretBytes = 3780
	// A Metal3Data's rendered Secrets (testdata/secret-networkdata.yaml and secret-metadata.yaml)
	// as the rendered-Secret cache keeps them, metadata only: until 2026-11-27 they were cached
	// whole, 3,585 + 1,384 bytes (bounds 4,100 + 1,600). As metadata (JSON 5,004 and 1,773 bytes
	// with their data; the metadata decoded 2,159 and 2,080), managedFields dropped, 1,567 and
	// 1,552; the repeated strings interned, 1,326 and 1,304; the labels map shared, as now, 966
	// and 968: 1,934 bytes a machine instead of 4,969.
	maxCachedRenderedSecretBytes = 1110
	// testdata/machine-running.yaml (a running Machine: nodeInfo, five addresses, nine
	// conditions and four deprecated ones, two managedFields entries): JSON 4,686 bytes; decoded
	// whole 23,888; as the type 6,080; managedFields dropped 5,105; nodeInfo and addresses
	// dropped too, 4,286 (4,327 with each copy's own names); the repeated strings (labels,
	// conditions' types, statuses and reasons, the cluster's name, the version, the references'
	// kinds...) interned, 3,517; the labels map shared, as now, 3,182.
	maxCachedMachineBytes = 3660
	// testdata/metal3machine-provisioned.yaml (addresses, rendered data and Secrets in its
	// status, three conditions, one managedFields entry): JSON 2,798 bytes; as the type 4,510;
	// managedFields dropped 4,143; the repeated strings interned, 3,332; the labels map shared,
	// as now, 2,986.
	maxCachedMetal3MachineBytes = 3430
	// testdata/ipclaim-bound.yaml: JSON 1,132 bytes; as the type 1,798 (nothing to drop);
	// the repeated strings interned, as now, 1,452 (1,505 with the labels map shared: its labels
	// name its own Metal3Data, so no other claim has the same).
	maxCachedIPClaimBytes = 1730
	// testdata/ipaddress-allocated.yaml: JSON 1,058 bytes; as the type 1,864 (nothing to
	// drop); the repeated strings interned (the pool, its gateway and DNS servers...), as now,
	// 1,506; the labels map shared, as now, 1,180.
	maxCachedIPAddressBytes = 1360
	// testdata/metal3data-rendered.yaml: JSON 1,464 bytes; as the type 2,247 (nothing to
	// drop); the repeated strings interned (the template's reference...), 1,721; the labels map
	// shared, as now, 1,386.
	maxCachedMetal3DataBytes = 1600
	// testdata/metal3dataclaim-rendered.yaml: JSON 1,003 bytes; as the type 1,679; the
	// repeated strings interned, 1,313; the labels map shared, as now, 978.
	maxCachedMetal3DataClaimBytes = 1130
)

// footprintCopies is how many copies of an object are decoded to measure one: enough that what
// other goroutines allocate meanwhile is lost in the figure.
const footprintCopies = 2000

// footprint is what one object of a manifest weighs: its JSON, decoded whole (unstructured),
// decoded into metalwire's scheme's type (newObj), and as the manager's cache keeps it (the type,
// then Transform).
type footprint struct {
	json, whole, typed, trimmed, cached int64
}

// measureFootprint decodes the manifest at path footprintCopies times each way, each copy on its
// own as each watch event is, and returns one copy's share, and a copy as the cache keeps it.
// perObject are the manifest's strings that are one object's own (its name, uid, its host's
// name, MACs...): each copy gets its own variant of them, as a fleet's objects differ, so that
// what the cache shares between copies (interned strings) is only what a fleet's objects share.
func measureFootprint(t *testing.T, path string, newObj func() runtime.Object, perObject ...string) (footprint, runtime.Object) {
	t.Helper()
	manifest, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.YAMLToJSON(manifest)
	if err != nil {
		t.Fatal(err)
	}
	copies := make([][]byte, footprintCopies)
	for i := range copies {
		pairs := make([]string, 0, 2*len(perObject))
		for _, s := range perObject {
			if !bytes.Contains(data, []byte(s)) {
				t.Fatalf("%s has no %q to vary per copy", path, s)
			}
			pairs = append(pairs, s, fmt.Sprintf("%s-%d", s, i))
		}
		copies[i] = []byte(strings.NewReplacer(pairs...).Replace(string(data)))
	}
	decoder := serializer.NewCodecFactory(scheme.New()).UniversalDeserializer()
	decode := func(data []byte) runtime.Object {
		if into, ok := newObj().(*metav1.PartialObjectMetadata); ok {
			// A metadata-only informer's object: the metadata client decodes the API server's
			// PartialObjectMetadata (the object's metadata, nothing else) into it.
			if err := json.Unmarshal(data, into); err != nil {
				t.Fatalf("decoding %s's metadata: %v", path, err)
			}
			return into
		}
		obj, _, err := decoder.Decode(data, nil, newObj())
		if err != nil {
			t.Fatalf("decoding %s: %v", path, err)
		}
		return obj
	}
	transformed := func(transform toolscache.TransformFunc) func([]byte) any {
		return func(data []byte) any {
			obj, err := transform(decode(data))
			if err != nil {
				t.Fatal(err)
			}
			return obj
		}
	}
	each := func(f func([]byte) any) int64 {
		return measure.Retained(func() any {
			objs := make([]any, footprintCopies)
			for i := range objs {
				objs[i] = f(copies[i])
			}
			return objs
		}) / footprintCopies
	}
	fp := footprint{json: int64(len(data))}
	fp.cached = each(transformed(Transform()))
	fp.trimmed = each(transformed(transform(false)))
	fp.typed = each(func(data []byte) any { return decode(data) })
	fp.whole = each(func(data []byte) any {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
		return u
	})
	t.Logf("%s: %d bytes of JSON; decoded whole (unstructured) %d bytes; as metalwire's type %d bytes; trimmed (Transform without interning) %d bytes; as the manager's cache keeps it (type + Transform) %d bytes",
		path, fp.json, fp.whole, fp.typed, fp.trimmed, fp.cached)
	return fp, transformed(Transform())(data).(runtime.Object)
}

// checkBound fails when a cached object grew past its bound.
func checkBound(t *testing.T, kind string, fp footprint, bound int64) {
	t.Helper()
	if fp.cached > bound {
		t.Errorf("%s takes %d bytes in the manager's cache, over the bound of %d: something the cache keeps grew (a field added to the type, or a transform that keeps more); keep in the cache only what controllers read, or raise the bound with the measurement that justifies it",
			kind, fp.cached, bound)
	}
}

// A BareMetalHost with realistic hardware details, decoded as the manager's cache decodes what
// the API server sends (metalwire's subset type: what it does not model is dropped) and
// transformed as the cache transforms it, stays within maxCachedHostBytes. What the controllers
// read is still there: the NICs' names, MACs, IPs, speeds and LLDP neighbours, the hostname, the
// provisioning state, the labels and the other annotations (templates render from them).
func TestCachedBareMetalHostFootprint(t *testing.T) {
	fp, obj := measureFootprint(t, "testdata/baremetalhost-inspected.yaml", func() runtime.Object { return &bmov1.BareMetalHost{} },
		"worker-rack07-u21", "6f1f3c9e-6a0d-4d6e-9a55-0f5b8e1d2c41", "48213377", "prod-east-workers-7xk2p", "b4:96:91:a7:3c:1", "5c:25:73:8e:11:a", "10.7.21.")
	checkBound(t, "an inspected BareMetalHost", fp, maxCachedHostBytes)
	h := obj.(*bmov1.BareMetalHost)
	if d := h.Status.HardwareDetails; d == nil || len(d.NIC) != 4 || d.NIC[1].MAC != "b4:96:91:a7:3c:11" || d.NIC[1].Name == "" || d.Hostname == "" {
		t.Errorf("the cached host lost its NICs or hostname, which the controllers read (networkData from host interfaces, switch ports, the Machine's addresses): %+v", d)
	} else {
		for _, nic := range d.NIC {
			if nic.Model != "" || nic.VLANs != nil {
				t.Errorf("the cached host keeps NIC %s's model %q and VLANs %v, which no controller reads", nic.Name, nic.Model, nic.VLANs)
			}
		}
	}
	if h.Status.Provisioning.State == "" || h.Status.Provisioning.Image.URL != "" {
		t.Errorf("the cached host's provisioning status is %+v: its state is read, its image is not", h.Status.Provisioning)
	}
	if len(h.ManagedFields) != 0 {
		t.Errorf("the cached host keeps %d managedFields entries; the cache's transform drops them", len(h.ManagedFields))
	}
	if _, ok := h.Annotations[corev1.LastAppliedConfigAnnotation]; ok {
		t.Error("the cached host keeps kubectl's last-applied-configuration annotation; the cache's transform drops it")
	}
	if _, ok := h.Annotations["baremetalhost.metal3.io/detached-by"]; !ok || h.Labels["rack"] != "r07" {
		t.Errorf("the cached host lost labels or annotations a template may render from: labels %v, annotations %v", h.Labels, h.Annotations)
	}
}

// A Metal3Data's Secrets: the manager keeps only their metadata (names, owners, labels, the
// digest annotation: enough to know they exist, whose they are and what they were rendered from),
// in its metadata-only rendered-Secret cache (NewRenderedSecrets); their data is read from the
// API server when needed. A Secret the manager caches whole (a pre-provisioned host's, with BMO's
// label and not ours) keeps its networkData only, which the pre-provisioning template reads back.
func TestCachedSecretFootprint(t *testing.T) {
	if sel := fullSecretSelector(); sel.Matches(labels.Set{infrav1.BMOEnvironmentLabel: infrav1.BMOEnvironmentLabelValue, infrav1.DataSecretRenderedLabel: infrav1.DataSecretRenderedLabelValue}) ||
		!sel.Matches(labels.Set{infrav1.BMOEnvironmentLabel: infrav1.BMOEnvironmentLabelValue}) {
		t.Fatalf("the manager's Secret cache selects %q: it must hold BMO-labelled Secrets and no rendered one", sel)
	}
	var rendered int64
	for _, c := range []struct{ path, uid string }{
		{"testdata/secret-networkdata.yaml", "7a1d2e3f-4b5c-4d6e-8f9a-0b1c2d3e4f51"},
		{"testdata/secret-metadata.yaml", "7a1d2e3f-4b5c-4d6e-8f9a-0b1c2d3e4f50"},
	} {
		fp, obj := measureFootprint(t, c.path, func() runtime.Object { return RenderedSecret() }, "workers-m3m-7x2kq", c.uid, "48213502")
		checkBound(t, "a rendered Secret's metadata ("+c.path+")", fp, maxCachedRenderedSecretBytes)
		rendered += fp.cached
		m := obj.(*metav1.PartialObjectMetadata)
		if m.Annotations["metal3data.metalwire.io/rendered-sha256"] == "" || len(m.OwnerReferences) != 1 || m.Labels[infrav1.DataSecretRenderedLabel] == "" || m.Name == "" {
			t.Errorf("the cached metadata of a rendered Secret lost what the controller reads (name, digest annotation, owner, labels): %+v", m.ObjectMeta)
		}
		if len(m.ManagedFields) != 0 {
			t.Errorf("the cached metadata of a rendered Secret keeps %d managedFields entries", len(m.ManagedFields))
		}
	}
	t.Logf("a machine's two rendered Secrets: %d bytes in the manager's memory", rendered)

	fp, obj := measureFootprint(t, "testdata/secret-networkdata.yaml", func() runtime.Object { return &corev1.Secret{} },
		"workers-m3m-7x2kq", "7a1d2e3f-4b5c-4d6e-8f9a-0b1c2d3e4f51", "48213502")
	checkBound(t, "a networkData Secret cached whole", fp, maxCachedNetworkDataSecretBytes)
	s := obj.(*corev1.Secret)
	if len(s.Data) != 1 || len(s.Data[infrav1.DataSecretNetworkDataKey]) == 0 {
		t.Errorf("the cached networkData Secret keeps data keys %v; want networkData only, which controllers read", keys(s.Data))
	}
	if s.Annotations["metal3data.metalwire.io/rendered-sha256"] == "" || len(s.OwnerReferences) != 1 || s.Labels[infrav1.BMOEnvironmentLabel] == "" {
		t.Errorf("the cached Secret lost the metadata controllers read (digest annotation, owner, labels): %+v", s.ObjectMeta)
	}
}

// A running Machine: the cache keeps what the controllers read (spec, labels, annotations,
// owners, nodeRef) and its conditions, which the remediation controller patches against; not the
// Node's system info and addresses Cluster API copies into its status.
func TestCachedMachineFootprint(t *testing.T) {
	fp, obj := measureFootprint(t, "testdata/machine-running.yaml", func() runtime.Object { return &clusterv1.Machine{} },
		"prod-east-workers-7b9c6d5f8-x2kqp", "3e7c1a9b-5d2f-4a8e-9c6b-1f0e2d3c4b5a", "48213877", "prod-east-workers-7xk2p", "worker-rack07-u21")
	checkBound(t, "a running Machine", fp, maxCachedMachineBytes)
	m := obj.(*clusterv1.Machine)
	if m.Status.NodeInfo != nil || m.Status.Addresses != nil {
		t.Errorf("the cached Machine keeps status.nodeInfo %v and addresses %v, which no controller reads", m.Status.NodeInfo, m.Status.Addresses)
	}
	//nolint:staticcheck // the deprecated v1beta1 conditions are still written (remediation), so still cached
	if m.Status.NodeRef.Name == "" || len(m.Status.Conditions) != 9 || m.Status.Deprecated == nil || m.Status.Deprecated.V1Beta1 == nil || len(m.Status.Deprecated.V1Beta1.Conditions) != 4 {
		t.Errorf("the cached Machine lost its nodeRef or conditions (read, and patched against by the remediation controller): %+v", m.Status)
	}
	if m.Spec.ClusterName == "" || m.Spec.Bootstrap.DataSecretName == nil || m.Spec.InfrastructureRef.Name == "" || m.Spec.FailureDomain == "" {
		t.Errorf("the cached Machine lost spec fields controllers read: %+v", m.Spec)
	}
}

func keys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The kinds a machine has most of in the cache (a Metal3Machine, a Metal3Data and its claim,
// two IPClaims and two IPAddresses), each copy with its own names, uids, addresses and hosts as a fleet's are: the
// cache keeps what a fleet's objects share once.
func TestCachedMachineObjectsFootprint(t *testing.T) {
	for _, c := range []struct {
		kind, path string
		newObj     func() runtime.Object
		perObject  []string
		bound      int64
	}{
		{"a provisioned Metal3Machine", "testdata/metal3machine-provisioned.yaml", func() runtime.Object { return &infrav1.Metal3Machine{} },
			[]string{"prod-east-workers-7xk2p", "0b7a2f61-3c44-4f59-a1d2-3f0e4b8c9d7e", "48213655", "worker-rack07-u21", "prod-east-workers-7b9c6d5f8-x2kqp", "3e7c1a9b-5d2f-4a8e-9c6b-1f0e2d3c4b5a", "prod-east-workers-template-17", "10.7.21.40", "10.8.21.40"}, maxCachedMetal3MachineBytes},
		{"a rendered Metal3Data", "testdata/metal3data-rendered.yaml", func() runtime.Object { return &infrav1.Metal3Data{} },
			[]string{"prod-east-workers-template-17", "5a7c9e1b-3d5f-4a6b-8c9d-1e2f3a4b5c6d", "48213570", "prod-east-workers-7xk2p", "7e9a1c3e-5b7d-4f2a-9c4e-6a8c1e3b5d7f"}, maxCachedMetal3DataBytes},
		{"a served Metal3DataClaim", "testdata/metal3dataclaim-rendered.yaml", func() runtime.Object { return &infrav1.Metal3DataClaim{} },
			[]string{"prod-east-workers-7xk2p", "7e9a1c3e-5b7d-4f2a-9c4e-6a8c1e3b5d7f", "48213566", "0b7a2f61-3c44-4f59-a1d2-3f0e4b8c9d7e", "prod-east-workers-template-17"}, maxCachedMetal3DataClaimBytes},
		{"a bound IPClaim", "testdata/ipclaim-bound.yaml", func() runtime.Object { return &ipamv1.IPClaim{} },
			[]string{"worker-rack07-u21", "9d3e5f7a-2b4c-4d6e-8f1a-3c5e7a9b1d2f", "48213560", "prod-east-workers-template-17", "5a7c9e1b-3d5f-4a6b-8c9d-1e2f3a4b5c6d", "10-7-21-40"}, maxCachedIPClaimBytes},
		{"an allocated IPAddress", "testdata/ipaddress-allocated.yaml", func() runtime.Object { return &ipamv1.IPAddress{} },
			[]string{"10-7-21-40", "1c3e5a7b-9d2f-4b6c-8e1a-5c7e9a2b4d6f", "48213558", "worker-rack07-u21", "9d3e5f7a-2b4c-4d6e-8f1a-3c5e7a9b1d2f", "10.7.21.40"}, maxCachedIPAddressBytes},
	} {
		fp, obj := measureFootprint(t, c.path, c.newObj, c.perObject...)
		checkBound(t, c.kind, fp, c.bound)
		if o := obj.(metav1.Object); o.GetName() == "" || o.GetNamespace() != "metal3" || o.GetLabels()[clusterv1.ClusterNameLabel] != "prod-east" || len(o.GetOwnerReferences()) == 0 {
			t.Errorf("%s lost its metadata in the cache: %+v", c.kind, o)
		}
	}
}
