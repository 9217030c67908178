package osnetconfig

import (
	"encoding/json"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The hosts of one template differ, in their os-net-config, only in their addresses: an
// address, a route's destination and next hop, a DNS server. Checking the whole list against the
// schema costs about a thousand times more than checking one address (every object is tried
// against each of the schema's twenty-odd device types), so a list is checked in two parts:
//
//   - its shape, the list with every address replaced by a valid stand-in, against the whole
//     schema, once per shape (remembered: every host of a template has the same shape);
//   - each address against the schema's definition at its place (the definition the schema
//     gives that property everywhere it has it; TestAddressRulesAreTheSchemas checks that).
//
// A list whose shape and addresses pass is valid: the schema constrains an address only through
// the definition of its property, and nothing else in the schema reads its value (an object's
// device type is chosen by its type field, which is part of the shape). Anything that fails
// either part is checked whole with ValidateValue, so a refused list gets the same problems, in
// the same words, as before.

// addressRule is where an address may stand in an os-net-config object and what the schema asks
// of it there.
type addressRule struct {
	// ref is the schema's definition of the property's value (of each item, for a list).
	ref string
	// list: the property holds a list of addresses.
	list bool
	// standIn is a value the definition accepts, written into the shape in the address's place.
	standIn string
}

// addressRules are the properties that carry per-host addresses, by name.
var addressRules = map[string]addressRule{
	"ip_netmask":  {ref: "#/definitions/ip_cidr_string_or_param", standIn: "192.0.2.1/24"},
	"destination": {ref: "#/definitions/ip_cidr_string_or_param", standIn: "192.0.2.0/24"},
	"next_hop":    {ref: "#/definitions/route/properties/next_hop", standIn: "192.0.2.254"},
	"nexthop":     {ref: "#/definitions/route/properties/nexthop", standIn: "192.0.2.254"},
	"dns_servers": {ref: "#/definitions/ip_address_string_or_param", list: true, standIn: "192.0.2.53"},
}

// maxShapes bounds what is remembered: a manager serves a few templates, each one shape.
const maxShapes = 1024

var (
	rulesOnce    sync.Once
	ruleSchemas  map[string]*jsonschema.Schema // by ref
	rulesErr     error
	shapesMu     sync.Mutex
	validShapes  = map[string]struct{}{}
	shapeChecked func() // test hook: runs when a shape is checked against the whole schema
)

// compileRules compiles each address definition once, and checks that each stand-in passes it.
func compileRules() (map[string]*jsonschema.Schema, error) {
	rulesOnce.Do(func() {
		var c *jsonschema.Compiler
		if c, rulesErr = newCompiler(); rulesErr != nil {
			return
		}
		out := map[string]*jsonschema.Schema{}
		for _, r := range addressRules {
			if out[r.ref] == nil {
				if out[r.ref], rulesErr = c.Compile(schemaURL + r.ref); rulesErr != nil {
					return
				}
			}
			if rulesErr = out[r.ref].Validate(r.standIn); rulesErr != nil {
				return
			}
		}
		ruleSchemas = out
	})
	return ruleSchemas, rulesErr
}

// validateList checks a JSON-shaped list of os-net-config objects against the schema: by its
// shape and addresses when both pass, else whole (ValidateValue, for the problems). While it runs
// the list holds stand-ins in place of its addresses; it holds its own values again on return.
func validateList(list any, prefix string) error {
	rules, err := compileRules()
	if err != nil {
		return err
	}
	var swapped []swap
	defer func() {
		for _, w := range swapped {
			w.undo()
		}
	}()
	whole := func() error {
		for _, w := range swapped {
			w.undo()
		}
		swapped = nil
		return ValidateValue(list, prefix)
	}
	if !standIns(list, rules, &swapped) {
		return whole()
	}
	key, err := json.Marshal(list) // the shape: addresses are stand-ins now
	if err != nil {
		return whole()
	}
	shapesMu.Lock()
	_, known := validShapes[string(key)]
	shapesMu.Unlock()
	if known {
		return nil
	}
	if shapeChecked != nil {
		shapeChecked()
	}
	if ValidateValue(list, prefix) != nil {
		// The problems name the host's own values.
		return whole()
	}
	shapesMu.Lock()
	if len(validShapes) >= maxShapes {
		clear(validShapes)
	}
	validShapes[string(key)] = struct{}{}
	shapesMu.Unlock()
	return nil
}

// swap is an address replaced by its stand-in: in a map under key, or in a list at index.
type swap struct {
	m     map[string]any
	key   string
	l     []any
	index int
	was   string
}

func (w swap) undo() {
	if w.m != nil {
		w.m[w.key] = w.was
		return
	}
	w.l[w.index] = w.was
}

// standIns checks every address in v against its property's definition, putting its stand-in in
// its place (recorded in swapped). It stops at the first address that does not pass.
func standIns(v any, rules map[string]*jsonschema.Schema, swapped *[]swap) bool {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			if !standIns(e, rules, swapped) {
				return false
			}
		}
	case map[string]any:
		for k, e := range t {
			r, ok := addressRules[k]
			switch s, isString := e.(string); {
			case ok && !r.list && isString:
				if rules[r.ref].Validate(s) != nil {
					return false
				}
				*swapped = append(*swapped, swap{m: t, key: k, was: s})
				t[k] = r.standIn
				continue
			case ok && r.list:
				if items, isList := e.([]any); isList {
					for i, item := range items {
						if s, isString := item.(string); isString {
							if rules[r.ref].Validate(s) != nil {
								return false
							}
							*swapped = append(*swapped, swap{l: items, index: i, was: s})
							items[i] = r.standIn
						}
					}
				}
			}
			if !standIns(e, rules, swapped) {
				return false
			}
		}
	}
	return true
}
