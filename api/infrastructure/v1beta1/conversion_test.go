package v1beta1

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/randfill"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// TestFuzzyConversion converts random objects of every kind v1beta1 -> v1beta2 -> v1beta1 and
// v1beta2 -> v1beta1 -> v1beta2, 10,000 times each way, and fails on any difference.
func TestFuzzyConversion(t *testing.T) {
	s := runtime.NewScheme()
	utilruntime.Must(AddToScheme(s))
	utilruntime.Must(infrav1.AddToScheme(s))
	funcs := []fuzzer.FuzzerFuncs{fuzzerFuncs}
	for _, kind := range []struct {
		name  string
		hub   conversion.Hub
		spoke conversion.Convertible
	}{
		{"Metal3Cluster", &infrav1.Metal3Cluster{}, &Metal3Cluster{}},
		{"Metal3ClusterTemplate", &infrav1.Metal3ClusterTemplate{}, &Metal3ClusterTemplate{}},
		{"Metal3Machine", &infrav1.Metal3Machine{}, &Metal3Machine{}},
		{"Metal3MachineTemplate", &infrav1.Metal3MachineTemplate{}, &Metal3MachineTemplate{}},
		{"Metal3DataTemplate", &infrav1.Metal3DataTemplate{}, &Metal3DataTemplate{}},
		{"Metal3Data", &infrav1.Metal3Data{}, &Metal3Data{}},
		{"Metal3DataClaim", &infrav1.Metal3DataClaim{}, &Metal3DataClaim{}},
		{"Metal3Remediation", &infrav1.Metal3Remediation{}, &Metal3Remediation{}},
		{"Metal3RemediationTemplate", &infrav1.Metal3RemediationTemplate{}, &Metal3RemediationTemplate{}},
	} {
		t.Run(kind.name, utilconversion.FuzzTestFunc(utilconversion.FuzzTestFuncInput{
			Scheme:      s,
			Hub:         kind.hub,
			Spoke:       kind.spoke,
			FuzzerFuncs: funcs,
		}))
	}
}

// fuzzerFuncs keep random objects to what an API server can hold, and fold together the
// v1beta1 spellings that mean the same (an empty string and no string, v1beta2: {} and no
// v1beta2 conditions): those are the only differences a round trip may show.
func fuzzerFuncs(_ runtimeserializer.CodecFactory) []any {
	return []any{
		// An empty time reads back as no time (the API server writes null for both).
		func(t **metav1.Time, c randfill.Continue) {
			if c.Bool() {
				*t = nil
				return
			}
			tm := metav1.Unix(int64(c.Uint32()), 0)
			*t = &tm
		},
		// v1beta1 integers hold ports, indexes, MTUs, VLAN IDs, prefixes: v1beta2 makes them int32.
		func(i *int, c randfill.Continue) { *i = int(int32(c.Uint32())) },
		// Bond and bridge parameters are JSON values.
		func(j *apiextensionsv1.JSON, c randfill.Continue) {
			if c.Bool() {
				j.Raw = []byte(strconv.Itoa(int(c.Int31())))
				return
			}
			j.Raw = []byte(strconv.Quote("v" + strconv.Itoa(int(c.Int31()))))
		},
		func(r *corev1.TypedLocalObjectReference, c randfill.Continue) {
			c.FillNoCustom(r)
			if r.APIGroup != nil && *r.APIGroup == "" {
				r.APIGroup = nil
			}
		},
		func(s *Metal3MachineSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.ProviderID != nil && *s.ProviderID == "" {
				s.ProviderID = nil
			}
		},
		func(s *Metal3ClusterStatus, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.V1Beta2 != nil && len(s.V1Beta2.Conditions) == 0 {
				s.V1Beta2 = nil
			}
		},
		func(s *Metal3MachineStatus, c randfill.Continue) {
			c.FillNoCustom(s)
			if s.V1Beta2 != nil && len(s.V1Beta2.Conditions) == 0 {
				s.V1Beta2 = nil
			}
		},
	}
}
