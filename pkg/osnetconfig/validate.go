package osnetconfig

import (
	"bytes"
	_ "embed"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// schemaYAML is os-net-config's os_net_config/schema.yaml (draft-07), unchanged.
//
//go:embed schema.yaml
var schemaYAML []byte

var (
	compileOnce sync.Once
	compiled    *jsonschema.Schema
	compileErr  error
)

// lookaround compiles the schema's patterns with a regexp engine that has lookahead, as
// Python's re has: the domain name pattern of os-net-config uses (?=...) and (?!...), which Go's
// regexp refuses.
type lookaround struct{ re *regexp2.Regexp }

func (l lookaround) MatchString(s string) bool {
	ok, err := l.re.MatchString(s)
	return err == nil && ok
}

func (l lookaround) String() string { return l.re.String() }

func schema() (*jsonschema.Schema, error) {
	compileOnce.Do(func() {
		js, err := yaml.YAMLToJSON(schemaYAML)
		if err != nil {
			compileErr = fmt.Errorf("os-net-config schema: %w", err)
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
		if err != nil {
			compileErr = fmt.Errorf("os-net-config schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		c.UseRegexpEngine(func(pattern string) (jsonschema.Regexp, error) {
			re, err := regexp2.Compile(pattern, regexp2.None)
			if err != nil {
				return nil, err
			}
			return lookaround{re}, nil
		})
		if compileErr = c.AddResource("os-net-config.schema.json", doc); compileErr != nil {
			return
		}
		compiled, compileErr = c.Compile("os-net-config.schema.json")
	})
	return compiled, compileErr
}

// Validate checks an os-net-config configuration, YAML or JSON: a list of interfaces, bridges,
// bonds and VLANs, or `network_config:` holding one. The error names the place in the document
// (as a path such as /network_config/0/addresses/0/ip_netmask) and what the schema wants there.
func Validate(doc []byte) error {
	s, err := schema()
	if err != nil {
		return err
	}
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return fmt.Errorf("not YAML: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return fmt.Errorf("not YAML: %w", err)
	}
	// os-net-config validates what network_config holds; the schema describes that list.
	prefix := ""
	if m, ok := inst.(map[string]any); ok {
		if list, ok := m["network_config"]; ok {
			inst, prefix = list, "/network_config"
		}
	}
	err = s.Validate(inst)
	if err == nil {
		return nil
	}
	verr, ok := err.(*jsonschema.ValidationError) //nolint:errorlint // Validate returns this type itself
	if !ok {
		return err
	}
	return explain(verr, inst, prefix)
}

// typeAt returns the `type` of the object at loc in the document, or "".
func typeAt(doc any, loc []string) string {
	for _, part := range loc {
		switch v := doc.(type) {
		case map[string]any:
			doc = v[part]
		case []any:
			var i int
			if _, err := fmt.Sscan(part, &i); err != nil || i < 0 || i >= len(v) {
				return ""
			}
			doc = v[i]
		default:
			return ""
		}
	}
	if m, ok := doc.(map[string]any); ok {
		if t, ok := m["type"].(string); ok {
			return t
		}
	}
	return ""
}

// explain turns the tree of a failed oneOf (one branch per os-net-config type) into the one
// failure a person can act on: the deepest place in the document the schema refused, preferring
// a branch of the object's own type over the others.
func explain(e *jsonschema.ValidationError, doc any, prefix string) error {
	var leaves []*jsonschema.ValidationError
	var walk func(*jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		// A oneOf branch for another type than the object's says nothing about its mistake.
		if i := strings.LastIndex(v.SchemaURL, "#/definitions/"); i >= 0 {
			def := v.SchemaURL[i+len("#/definitions/"):]
			if t := typeAt(doc, v.InstanceLocation); t != "" && !strings.Contains(def, "/") && def != t {
				return
			}
		}
		if len(v.Causes) == 0 {
			leaves = append(leaves, v)
			return
		}
		for _, c := range v.Causes {
			walk(c)
		}
	}
	walk(e)
	if len(leaves) == 0 {
		leaves = []*jsonschema.ValidationError{e}
	}
	best := leaves[0]
	score := func(v *jsonschema.ValidationError) int {
		n := len(v.InstanceLocation) * 2
		// A branch that refused the object's type only says "this is not a vlan": it is the
		// wrong branch, not the mistake.
		if slices.Contains(v.ErrorKind.KeywordPath(), "enum") || slices.Contains(v.ErrorKind.KeywordPath(), "const") {
			n -= 100
		}
		if strings.Contains(v.Error(), "additional properties 'type'") {
			n -= 100
		}
		return n
	}
	for _, l := range leaves[1:] {
		if score(l) > score(best) {
			best = l
		}
	}
	msg := best.Error()
	// The library's message starts with "at '<location>': "; keep what follows.
	if i := strings.Index(msg, "': "); strings.HasPrefix(msg, "at '") && i > 0 {
		msg = msg[i+3:]
	}
	return fmt.Errorf("not valid os-net-config at %s/%s: %s (schema %s)", prefix, strings.Join(best.InstanceLocation, "/"), msg, schemaPath(best))
}

func schemaPath(v *jsonschema.ValidationError) string {
	if i := strings.Index(v.SchemaURL, "#"); i >= 0 {
		return v.SchemaURL[i:] + "/" + strings.Join(v.ErrorKind.KeywordPath(), "/")
	}
	return strings.Join(v.ErrorKind.KeywordPath(), "/")
}

// ValidateMapping checks an interface mapping as os-net-config reads it from mapping.yaml: each
// alias maps to a MAC address or a device name, and no device or MAC is mapped twice.
func ValidateMapping(mapping map[string]string) error {
	seen := map[string]string{}
	aliases := make([]string, 0, len(mapping))
	for a := range mapping {
		aliases = append(aliases, a)
	}
	slices.Sort(aliases)
	for _, alias := range aliases {
		dev := mapping[alias]
		if dev == "" {
			return fmt.Errorf("interface_mapping.%s is empty; give a MAC address or a device name", alias)
		}
		key := strings.ToLower(dev)
		if hw, err := net.ParseMAC(dev); err == nil {
			key = hw.String()
		}
		if other, ok := seen[key]; ok {
			return fmt.Errorf("interface_mapping: %s is mapped twice, to %s and %s; os-net-config refuses a device mapped twice", dev, other, alias)
		}
		seen[key] = alias
	}
	return nil
}
