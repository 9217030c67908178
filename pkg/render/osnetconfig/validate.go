package osnetconfig

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"sigs.k8s.io/yaml"
)

//go:embed schema.yaml
var schemaYAML []byte

// schemaURL names the embedded schema in error messages' schema paths.
const schemaURL = "os-net-config.schema.yaml"

var (
	compileOnce sync.Once
	compiled    *jsonschema.Schema
	compileErr  error
)

// schema compiles the embedded schema once. Its domain_name_string pattern uses lookaheads,
// which Go's RE2 engine refuses, so patterns run on regexp2 (Python re's syntax and semantics
// for everything the schema uses: inline (?i), lookaheads, unanchored search).
func schema() (*jsonschema.Schema, error) {
	compileOnce.Do(func() {
		var c *jsonschema.Compiler
		if c, compileErr = newCompiler(); compileErr != nil {
			return
		}
		compiled, compileErr = c.Compile(schemaURL)
	})
	return compiled, compileErr
}

// newCompiler is a compiler holding the embedded schema, to compile it or one of its
// definitions.
func newCompiler() (*jsonschema.Compiler, error) {
	doc, err := decode(schemaYAML)
	if err != nil {
		return nil, fmt.Errorf("reading the embedded os-net-config schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.UseRegexpEngine(compileRegexp)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c, nil
}

type pythonRegexp struct{ re *regexp2.Regexp }

func (r pythonRegexp) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	return err == nil && ok // err is the match timeout: a pathological string does not match
}

func (r pythonRegexp) String() string { return r.re.String() }

func compileRegexp(expr string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(expr, regexp2.None)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = time.Second
	return pythonRegexp{re: re}, nil
}

// decode reads YAML or JSON into the values jsonschema validates. YAML is read as PyYAML
// (os-net-config's loader) reads it: YAML 1.1, so yes/no/on/off are booleans.
func decode(doc []byte) (any, error) {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "error converting YAML to JSON: "))
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(js))
}

// Problem is one place where a document breaks os-net-config's schema.
type Problem struct {
	// Path is where in the document, as os-net-config's config file reads:
	// network_config[0].addresses[1].ip_netmask.
	Path string
	// SchemaPath is the rule that refused it, in the schema: #/definitions/address/properties/ip_netmask/...
	SchemaPath string
	// Message says what is wrong with the value.
	Message string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s: %s (schema %s)", p.Path, p.Message, p.SchemaPath)
}

// Error is a document os-net-config would refuse, with every problem found.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return "not valid os-net-config: " + strings.Join(lines, "; ")
}

// Validate checks an os-net-config document, YAML or JSON, against os-net-config's own schema:
// either a config file (a mapping whose network_config holds the list) or the bare list, which
// is what os-net-config validates after reading the file. A document that breaks the schema
// returns *Error; one that is not YAML, or has no network_config, a plain error.
func Validate(doc []byte) error {
	v, err := decode(doc)
	if err != nil {
		return fmt.Errorf("os-net-config document is not YAML: %w", err)
	}
	prefix := ""
	if m, ok := v.(map[string]any); ok {
		list, found := m["network_config"]
		if !found {
			return fmt.Errorf("os-net-config document has no network_config; os-net-config reads its interfaces from the top-level key network_config (keys found: %s)", strings.Join(slices.Sorted(maps.Keys(m)), ", "))
		}
		for k := range m {
			if k != "network_config" {
				return fmt.Errorf("os-net-config document: top-level key %q is not read by os-net-config; put every interface under network_config", k)
			}
		}
		v, prefix = list, "network_config"
	}
	return ValidateValue(v, prefix)
}

// ValidateValue checks an already decoded list of os-net-config objects (JSON-shaped values:
// map[string]any, []any, string, bool, json.Number or float64). prefix starts every problem's
// path (network_config for a config file's list).
func ValidateValue(list any, prefix string) error {
	sch, err := schema()
	if err != nil {
		return err
	}
	verr := sch.Validate(list)
	if verr == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return verr
	}
	problems := slices.CompactFunc(walk(ve, list, prefix), func(a, b Problem) bool { return a == b })
	return &Error{Problems: problems}
}

var printer = message.NewPrinter(language.English)

// walk follows the error tree to the failures a person should fix. Every object of the list is
// checked against each type's definition (oneOf), so a bad interface fails as a vlan, a bond and
// twenty more types too; the tree is pruned to the branch the object names with its type, and a
// branch that failed only because the value has another JSON type (a string is not a
// {get_param: ...}) is dropped when another branch accepted the JSON type.
func walk(ve *jsonschema.ValidationError, root any, prefix string) []Problem {
	if len(ve.Causes) == 0 {
		if _, isGroup := ve.ErrorKind.(*kind.Group); isGroup {
			return nil
		}
		return []Problem{{Path: instancePath(prefix, ve.InstanceLocation), SchemaPath: schemaPath(ve), Message: describe(ve)}}
	}
	causes := ve.Causes
	switch ve.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		obj := valueAt(root, ve.InstanceLocation)
		if typ, known, ok := typeOf(obj, causes); ok && len(known) > 0 {
			return []Problem{{
				Path:       instancePath(prefix, append(slices.Clone(ve.InstanceLocation), "type")),
				SchemaPath: schemaPath(ve),
				Message:    fmt.Sprintf("%q is not a type os-net-config knows; use one of %s", typ, strings.Join(known, ", ")),
			}}
		}
		if named := branchNamedByType(causes, obj); named != nil {
			causes = []*jsonschema.ValidationError{named}
		} else if kept := slices.DeleteFunc(slices.Clone(causes), wrongJSONType(ve.InstanceLocation)); len(kept) > 0 {
			causes = kept
		}
	}
	var out []Problem
	for _, c := range causes {
		out = append(out, walk(c, root, prefix)...)
	}
	return out
}

// typeOf reports an object whose type every branch refused, with the types the branches want.
func typeOf(v any, causes []*jsonschema.ValidationError) (typ string, known []string, ok bool) {
	obj, isObj := v.(map[string]any)
	if !isObj {
		return "", nil, false
	}
	if typ, ok = obj["type"].(string); !ok {
		return "", nil, false
	}
	for _, c := range causes {
		want, refused := refusedType(c, c.InstanceLocation)
		if !refused {
			return "", nil, false
		}
		if want != "" {
			known = append(known, want)
		}
	}
	return typ, known, true
}

// branchNamedByType returns the oneOf branch checking the object against the definition its
// type field names (interface, vlan, linux_bond, ...): the one branch that did not refuse the
// value of type. remove_net_device, which has no type, refuses the field itself.
func branchNamedByType(causes []*jsonschema.ValidationError, v any) *jsonschema.ValidationError {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if _, ok := obj["type"].(string); !ok {
		return nil
	}
	var named []*jsonschema.ValidationError
	for _, c := range causes {
		if _, refused := refusedType(c, c.InstanceLocation); !refused {
			named = append(named, c)
		}
	}
	if len(named) != 1 {
		return nil
	}
	return named[0]
}

// refusedType reports whether a branch refused the object's type field: its value (an enum of
// one, returned) or the field itself (additionalProperties).
func refusedType(ve *jsonschema.ValidationError, obj []string) (want string, refused bool) {
	switch k := ve.ErrorKind.(type) {
	case *kind.Enum:
		if slices.Equal(ve.InstanceLocation, append(slices.Clone(obj), "type")) {
			if len(k.Want) == 1 {
				want, _ = k.Want[0].(string)
			}
			return want, true
		}
	case *kind.AdditionalProperties:
		if slices.Equal(ve.InstanceLocation, obj) && slices.Contains(k.Properties, "type") {
			return "", true
		}
	}
	for _, c := range ve.Causes {
		if want, refused := refusedType(c, obj); refused {
			return want, true
		}
	}
	return "", false
}

// wrongJSONType reports a branch that failed only on the value's JSON type, at this location.
func wrongJSONType(at []string) func(*jsonschema.ValidationError) bool {
	var onlyType func(*jsonschema.ValidationError) bool
	onlyType = func(ve *jsonschema.ValidationError) bool {
		if len(ve.Causes) == 0 {
			_, isType := ve.ErrorKind.(*kind.Type)
			return isType && slices.Equal(ve.InstanceLocation, at)
		}
		for _, c := range ve.Causes {
			if !onlyType(c) {
				return false
			}
		}
		return true
	}
	return onlyType
}

func valueAt(v any, loc []string) any {
	for _, tok := range loc {
		switch t := v.(type) {
		case map[string]any:
			v = t[tok]
		case []any:
			var i int
			if _, err := fmt.Sscan(tok, &i); err != nil || i < 0 || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

// instancePath writes a location as os-net-config's config reads: network_config[0].name.
func instancePath(prefix string, loc []string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, tok := range loc {
		if tok != "" && strings.Trim(tok, "0123456789") == "" {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	if b.Len() == 0 {
		return "(document)"
	}
	return b.String()
}

// describe says what is wrong with the value. A long pattern (the IPv6 one is 400 characters)
// is named by its definition instead of printed.
func describe(ve *jsonschema.ValidationError) string {
	if p, ok := ve.ErrorKind.(*kind.Pattern); ok && len(p.Want) > 80 {
		def := ve.SchemaURL[strings.LastIndex(ve.SchemaURL, "/")+1:]
		return fmt.Sprintf("%q does not match the schema's %s pattern", p.Got, def)
	}
	return ve.ErrorKind.LocalizedString(printer)
}

// schemaPath is the failing keyword's place in the schema: the fragment of its schema location
// followed by the keyword.
func schemaPath(ve *jsonschema.ValidationError) string {
	frag := "#"
	if i := strings.Index(ve.SchemaURL, "#"); i >= 0 {
		frag = ve.SchemaURL[i:]
	}
	kw := strings.Join(ve.ErrorKind.KeywordPath(), "/")
	if kw == "" {
		return frag
	}
	return strings.TrimSuffix(frag, "/") + "/" + kw
}
