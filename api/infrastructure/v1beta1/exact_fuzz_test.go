package v1beta1

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/randfill"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// TestFuzzyConversionKeepsWrittenJSON writes random v1beta1 objects of every kind full of the
// values a round trip is most likely to lose — explicit zeros (0, "", false), empty lists and
// maps, empty structs — converts each to v1beta2 and back as the API server does (v1beta2 held
// as JSON, the CRD's defaults applied), and fails unless the JSON is what was written. Unlike
// TestFuzzyConversion, which compares semantically, an empty list here is not an absent one.
func TestFuzzyConversionKeepsWrittenJSON(t *testing.T) {
	for _, kind := range []struct {
		name  string
		spoke func() conversion.Convertible
		hub   func() conversion.Hub
	}{
		{"Metal3Cluster", func() conversion.Convertible { return &Metal3Cluster{} }, func() conversion.Hub { return &infrav1.Metal3Cluster{} }},
		{"Metal3ClusterTemplate", func() conversion.Convertible { return &Metal3ClusterTemplate{} }, func() conversion.Hub { return &infrav1.Metal3ClusterTemplate{} }},
		{"Metal3Machine", func() conversion.Convertible { return &Metal3Machine{} }, func() conversion.Hub { return &infrav1.Metal3Machine{} }},
		{"Metal3MachineTemplate", func() conversion.Convertible { return &Metal3MachineTemplate{} }, func() conversion.Hub { return &infrav1.Metal3MachineTemplate{} }},
		{"Metal3DataTemplate", func() conversion.Convertible { return &Metal3DataTemplate{} }, func() conversion.Hub { return &infrav1.Metal3DataTemplate{} }},
		{"Metal3Data", func() conversion.Convertible { return &Metal3Data{} }, func() conversion.Hub { return &infrav1.Metal3Data{} }},
		{"Metal3DataClaim", func() conversion.Convertible { return &Metal3DataClaim{} }, func() conversion.Hub { return &infrav1.Metal3DataClaim{} }},
		{"Metal3Remediation", func() conversion.Convertible { return &Metal3Remediation{} }, func() conversion.Hub { return &infrav1.Metal3Remediation{} }},
		{"Metal3RemediationTemplate", func() conversion.Convertible { return &Metal3RemediationTemplate{} }, func() conversion.Hub { return &infrav1.Metal3RemediationTemplate{} }},
	} {
		t.Run(kind.name, func(t *testing.T) {
			filler := randfill.NewWithSeed(int64(len(kind.name))).NilChance(0.4).NumElements(0, 2).Funcs(zeroHeavyFuncs()...)
			for i := range 2000 {
				written := kind.spoke()
				filler.Fill(written)
				// Metadata is the API server's; no conversion data: an object a v1beta1 client wrote.
				meta := reflect.ValueOf(written).Elem().FieldByName("ObjectMeta")
				meta.Set(reflect.Zero(meta.Type()))
				want := objectJSON(t, written)

				hub := kind.hub()
				if err := written.ConvertTo(hub); err != nil {
					t.Fatal(err)
				}
				hub = storedAs(t, hub, kind.hub())
				back := kind.spoke()
				if err := back.ConvertFrom(hub); err != nil {
					t.Fatal(err)
				}
				if got := objectJSON(t, back); !reflect.DeepEqual(want, got) {
					t.Fatalf("object %d: v1beta1 -> v1beta2 -> v1beta1 changed what was written (-written +read back):\n%s", i, cmp.Diff(want, got))
				}
			}
			for i := range 2000 {
				written := kind.hub()
				filler.Fill(written)
				meta := reflect.ValueOf(written).Elem().FieldByName("ObjectMeta")
				meta.Set(reflect.Zero(meta.Type()))
				want := objectJSON(t, written)

				spoke := kind.spoke()
				if err := spoke.ConvertFrom(written); err != nil {
					t.Fatal(err)
				}
				data, err := json.Marshal(spoke) // a v1beta1 client reads it and writes it back unchanged
				if err != nil {
					t.Fatal(err)
				}
				spoke = kind.spoke()
				if err := json.Unmarshal(data, spoke); err != nil {
					t.Fatal(err)
				}
				back := kind.hub()
				if err := spoke.ConvertTo(back); err != nil {
					t.Fatal(err)
				}
				if got := objectJSON(t, back); !reflect.DeepEqual(want, got) {
					t.Fatalf("object %d: v1beta2 -> v1beta1 -> v1beta2 changed what was written (-written +read back):\n%s", i, cmp.Diff(want, got))
				}
			}
		})
	}
}

// zeroHeavyFuncs fill scalars with their zero value half of the time, and keep values to what
// the API server can hold and the v1beta1 CRD accepts.
func zeroHeavyFuncs() []any {
	return []any{
		func(s *string, c randfill.Continue) {
			if c.Bool() {
				*s = ""
				return
			}
			*s = "s" + strconv.Itoa(int(c.Int31n(100)))
		},
		func(i *int, c randfill.Continue) {
			if c.Bool() {
				*i = 0
				return
			}
			*i = int(c.Int31n(5000))
		},
		func(i *int64, c randfill.Continue) { *i = int64(c.Int31n(5000)) },
		func(t **metav1.Time, c randfill.Continue) {
			if c.Bool() {
				*t = nil
				return
			}
			tm := metav1.Unix(int64(c.Uint32()), 0)
			*t = &tm
		},
		func(t *metav1.Time, c randfill.Continue) { *t = metav1.Unix(int64(c.Uint32()), 0) },
		func(j *apiextensionsv1.JSON, c randfill.Continue) {
			j.Raw = []byte(strconv.Itoa(int(c.Int31n(1000))))
		},
		// A v1beta1 duration is one Go's time package writes or reads.
		func(d *Duration, c randfill.Continue) {
			*d = []Duration{"300s", "5m", "5m0s", "90.5s", "0s", "1h"}[c.Int31n(6)]
		},
		// What docs/versions.md lists as not kept: an empty failure domain attributes map
		// (Cluster API's v1beta2 type omits it), providerID: "" (v1beta2's unset).
		func(f *FailureDomainSpec, c randfill.Continue) {
			c.FillNoCustom(f)
			if len(f.Attributes) == 0 {
				f.Attributes = nil
			}
		},
		func(s *Metal3MachineSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.ProviderID != nil && *s.ProviderID == "" {
				s.ProviderID = nil
			}
		},
		// Cluster API's ObjectMeta omits empty label and annotation maps: a template's
		// metadata: {labels: {}} is kept only as metadata: {}.
		func(m *clusterv1.ObjectMeta, c randfill.Continue) {
			c.FillNoCustom(m)
			if len(m.Labels) == 0 {
				m.Labels = nil
			}
			if len(m.Annotations) == 0 {
				m.Annotations = nil
			}
		},
		// status.v1beta2: {} without conditions is v1beta2's no conditions.
		func(s *Metal3ClusterStatus, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.V1Beta2 != nil && s.V1Beta2.Conditions == nil {
				s.V1Beta2 = nil
			}
		},
		func(s *Metal3MachineStatus, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.V1Beta2 != nil && s.V1Beta2.Conditions == nil {
				s.V1Beta2 = nil
			}
		},
		// apiGroup of a typed reference is a group or unset (core is no pool group).
		func(r *corev1.TypedLocalObjectReference, c randfill.Continue) {
			c.FillNoCustom(r)
			r.Name, r.Kind = "pool", "IPPool"
			if c.Bool() {
				r.APIGroup = ptr.To("ipam.metal3.io")
			} else {
				r.APIGroup = nil
			}
		},
	}
}

// storedAs is hub as the API server holds it: JSON, with the v1beta2 CRD's defaults applied.
func storedAs(t *testing.T, hub, into conversion.Hub) conversion.Hub {
	t.Helper()
	data, err := json.Marshal(hub)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatal(err)
	}
	if dt, ok := into.(*infrav1.Metal3DataTemplate); ok {
		defaultMetaData(dt.Spec.MetaData)
		defaultNetworkData(dt.Spec.NetworkData)
	}
	return into
}

func objectJSON(t *testing.T, obj any) any {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return map[string]any{"spec": out["spec"], "status": out["status"]} // metadata is the API server's
}
