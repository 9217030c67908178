package migrate

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// path is a field path as users write it in error messages: spec.links[0].macAddress.
type path string

func (p path) field(name string) path {
	if p == "" {
		return path(name)
	}
	return p + "." + path(name)
}

func (p path) index(i int) path {
	return p + path("["+strconv.Itoa(i)+"]")
}

// last returns the final field name of the path ("" after an index).
func (p path) last() string {
	s := string(p)
	if strings.HasSuffix(s, "]") {
		return ""
	}
	return s[strings.LastIndex(s, ".")+1:]
}

func (p path) String() string {
	if p == "" {
		return "(document)"
	}
	return string(p)
}

func isMap(n *yaml.Node) bool { return n != nil && n.Kind == yaml.MappingNode }
func isSeq(n *yaml.Node) bool { return n != nil && n.Kind == yaml.SequenceNode }
func isScalar(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Tag != "!!null"
}

// keyAt returns the position of key's key node in a mapping's Content, or -1.
func keyAt(m *yaml.Node, key string) int {
	if !isMap(m) {
		return -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// get returns the value of key in mapping m, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	if i := keyAt(m, key); i >= 0 {
		return m.Content[i+1]
	}
	return nil
}

// getPath follows keys through nested mappings.
func getPath(m *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		m = get(m, k)
		if m == nil {
			return nil
		}
	}
	return m
}

// scalarValue returns the value of a scalar under key, or "".
func scalarValue(m *yaml.Node, key string) string {
	if v := get(m, key); isScalar(v) {
		return v.Value
	}
	return ""
}

// set replaces key's value in mapping m, or appends the pair.
func set(m *yaml.Node, key string, v *yaml.Node) {
	if i := keyAt(m, key); i >= 0 {
		m.Content[i+1] = v
		return
	}
	m.Content = append(m.Content, strNode(key), v)
}

// del removes key from mapping m and returns its value, or nil.
func del(m *yaml.Node, key string) *yaml.Node {
	i := keyAt(m, key)
	if i < 0 {
		return nil
	}
	v := m.Content[i+1]
	m.Content = append(m.Content[:i], m.Content[i+2:]...)
	return v
}

// rename renames key in place, keeping its position; false when from is absent or to exists.
func rename(m *yaml.Node, from, to string) bool {
	i := keyAt(m, from)
	if i < 0 || keyAt(m, to) >= 0 {
		return false
	}
	m.Content[i].Value = to
	return true
}

// child returns the mapping under key, creating an empty one when absent.
func child(m *yaml.Node, key string) *yaml.Node {
	if v := get(m, key); isMap(v) {
		return v
	}
	v := mapNode()
	set(m, key, v)
	return v
}

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func intNode(i int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(i, 10)}
}

func boolNode(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

func mapNode(pairs ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: pairs}
}

func seqNode(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

// isSet tells whether a node is a YAML set: `{a, b}` or `? a` keys without values, or !!set.
func isSet(n *yaml.Node) bool {
	if !isMap(n) || len(n.Content) == 0 {
		return false
	}
	if n.Tag == "!!set" {
		return true
	}
	for i := 1; i < len(n.Content); i += 2 {
		v := n.Content[i]
		if v.Kind != yaml.ScalarNode || v.Tag != "!!null" {
			return false
		}
	}
	return true
}

// setMembers lists a set's members as a user would write them in a list.
func setMembers(n *yaml.Node) string {
	var parts []string
	for i := 0; i < len(n.Content); i += 2 {
		parts = append(parts, strconv.Quote(stripTypographicQuotes(n.Content[i].Value)))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
