package webhooks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/testenv"
)

// upstreamSchemas are upstream CAPM3's CRD schemas of one version, by kind, read from the shared
// reference folder (../shared/schemas/upstream-capm3, which make test cannot fetch: the test
// fails under CI=true without it).
type upstreamSchemas map[string]upstreamSchema

type upstreamSchema struct {
	validator  validation.SchemaValidator
	structural *structuralschema.Structural
}

// upstreamCRDs reads upstream's CRDs of a group ("infrastructure.cluster.x-k8s.io" or
// "ipam.metal3.io") by kind.
func upstreamCRDs(t *testing.T, group string) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	dir := filepath.Join(testenv.SharedDir(t), "schemas", "upstream-capm3")
	files, err := filepath.Glob(filepath.Join(dir, group+"_*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("upstream's %s CRDs are not in %s (%v)", group, dir, err)
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[crd.Spec.Names.Kind] = crd
	}
	return out
}

func upstreamV1beta1Schemas(t *testing.T) upstreamSchemas {
	t.Helper()
	out := upstreamSchemas{}
	for kind, crd := range upstreamCRDs(t, infraGroup) {
		for _, v := range crd.Spec.Versions {
			if v.Name != "v1beta1" {
				continue
			}
			internal := &apiextensions.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			validator, _, err := validation.NewSchemaValidator(internal)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			structural, err := structuralschema.NewStructural(internal)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			out[kind] = upstreamSchema{validator: validator, structural: structural}
		}
	}
	return out
}

// validate lists what upstream's schema refuses in obj: fields it does not know (which its API
// server would drop or, with strict field validation, refuse) and values outside its enums,
// formats, bounds and required lists. Upstream's CEL rules are not evaluated here.
func (s upstreamSchemas) validate(obj *unstructured.Unstructured) []string {
	schema, ok := s[obj.GetKind()]
	if !ok {
		return []string{"upstream has no CRD for " + obj.GetKind()}
	}
	var out []string
	for _, e := range validation.ValidateCustomResource(field.NewPath(""), obj.UnstructuredContent(), schema.validator) {
		out = append(out, e.Error())
	}
	copied := obj.DeepCopy().UnstructuredContent()
	unknown := pruning.PruneWithOptions(copied, schema.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, p := range unknown {
		if strings.HasPrefix(p, "metadata.") {
			continue
		}
		out = append(out, "unknown field "+p)
	}
	return out
}
