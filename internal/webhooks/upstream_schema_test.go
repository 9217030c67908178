package webhooks_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// schemaDifferences compares ours with upstream's schema of one version: every field upstream
// has must be in ours with the same type, enum values, default and list type (map keys
// included), required no more often, and bounds no tighter. Each difference is "path: aspect
// (detail)". Fields only ours has are metalwire's additions and not differences.
func schemaDifferences(path string, up, ours *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	add := func(aspect, format string, args ...any) {
		out = append(out, path+": "+aspect+" ("+fmt.Sprintf(format, args...)+")")
	}
	if ours == nil {
		add("missing", "upstream has it, metalwire does not")
		return out
	}
	if up.Type != ours.Type {
		add("type", "upstream %q, metalwire %q", up.Type, ours.Type)
	}
	if enumText(up.Enum) != enumText(ours.Enum) {
		add("enum", "upstream %s, metalwire %s", enumText(up.Enum), enumText(ours.Enum))
	}
	if jsonText(up.Default) != jsonText(ours.Default) {
		add("default", "upstream %s, metalwire %s", jsonText(up.Default), jsonText(ours.Default))
	}
	if ptrText(up.XListType) != ptrText(ours.XListType) || strings.Join(up.XListMapKeys, ",") != strings.Join(ours.XListMapKeys, ",") {
		add("listType", "upstream %s %v, metalwire %s %v", ptrText(up.XListType), up.XListMapKeys, ptrText(ours.XListType), ours.XListMapKeys)
	}
	if up.Nullable != ours.Nullable {
		add("nullable", "upstream %t, metalwire %t", up.Nullable, ours.Nullable)
	}
	for _, r := range ours.Required {
		if !slices.Contains(up.Required, r) {
			if _, known := up.Properties[r]; known {
				add("required", "metalwire requires %s, upstream does not", r)
			}
		}
	}
	tighter := func(name string, upV, oursV *float64, lower bool) {
		switch {
		case oursV == nil:
		case upV == nil:
			add(name, "metalwire %v, upstream none", *oursV)
		case lower && *oursV > *upV, !lower && *oursV < *upV:
			add(name, "metalwire %v, upstream %v", *oursV, *upV)
		}
	}
	tighter("minimum", up.Minimum, ours.Minimum, true)
	tighter("maximum", up.Maximum, ours.Maximum, false)
	tighter("minLength", intAsFloat(up.MinLength), intAsFloat(ours.MinLength), true)
	tighter("maxLength", intAsFloat(up.MaxLength), intAsFloat(ours.MaxLength), false)
	tighter("minItems", intAsFloat(up.MinItems), intAsFloat(ours.MinItems), true)
	tighter("maxItems", intAsFloat(up.MaxItems), intAsFloat(ours.MaxItems), false)
	tighter("maxProperties", intAsFloat(up.MaxProperties), intAsFloat(ours.MaxProperties), false)
	for name, p := range up.Properties {
		var mine *apiextensionsv1.JSONSchemaProps
		if q, ok := ours.Properties[name]; ok {
			mine = &q
		} else if ours.XPreserveUnknownFields != nil && *ours.XPreserveUnknownFields {
			continue
		}
		out = append(out, schemaDifferences(path+"."+name, &p, mine)...)
	}
	if up.Items != nil && up.Items.Schema != nil {
		var mine *apiextensionsv1.JSONSchemaProps
		if ours.Items != nil {
			mine = ours.Items.Schema
		}
		out = append(out, schemaDifferences(path+"[]", up.Items.Schema, mine)...)
	}
	if up.AdditionalProperties != nil && up.AdditionalProperties.Schema != nil && ours.AdditionalProperties != nil && ours.AdditionalProperties.Schema != nil {
		out = append(out, schemaDifferences(path+"{}", up.AdditionalProperties.Schema, ours.AdditionalProperties.Schema)...)
	}
	return out
}

func enumText(values []apiextensionsv1.JSON) string {
	texts := make([]string, 0, len(values))
	for _, v := range values {
		texts = append(texts, string(v.Raw))
	}
	slices.Sort(texts)
	return "[" + strings.Join(texts, " ") + "]"
}

func jsonText(v *apiextensionsv1.JSON) string {
	if v == nil {
		return "none"
	}
	return string(v.Raw)
}

func ptrText(s *string) string {
	if s == nil {
		return "atomic"
	}
	return *s
}

func intAsFloat(v *int64) *float64 {
	if v == nil {
		return nil
	}
	f := float64(*v)
	return &f
}
