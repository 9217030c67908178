package migrate

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// walk visits n and, while visit returns true, its children with their paths.
func walk(n *yaml.Node, p path, visit func(n *yaml.Node, p path) bool) {
	if n == nil || !visit(n, p) {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			walk(n.Content[i+1], p.field(n.Content[i].Value), visit)
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			walk(item, p.index(i), visit)
		}
	}
}

// freeFormKeys hold user maps whose keys are data, not field names.
var freeFormKeys = map[string]bool{"labels": true, "annotations": true, "matchLabels": true}

// referenceKeys are the keys a reference may hold, in either case.
var referenceKeys = map[string]string{
	"Name": "name", "Namespace": "namespace", "Kind": "kind", "APIVersion": "apiVersion", "UID": "uid",
	"name": "name", "namespace": "namespace", "kind": "kind", "apiVersion": "apiVersion", "uid": "uid",
}

// lowercaseReferenceKeys rewrites the seed's `dataTemplate: {Name: x}`: Go field names written
// as JSON keys, which the API server drops as unknown.
func (d *document) lowercaseReferenceKeys(top *yaml.Node, p path) {
	walk(top, p, func(n *yaml.Node, p path) bool {
		if !isMap(n) {
			return true
		}
		if freeFormKeys[p.last()] {
			return false // label keys are data and stay as written
		}
		capitalised := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			lower, ok := referenceKeys[key]
			if !ok {
				capitalised = false
				break
			}
			if lower != key {
				capitalised = true
			}
		}
		if capitalised {
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := n.Content[i].Value
				if lower := referenceKeys[key]; lower != key && keyAt(n, lower) < 0 {
					n.Content[i].Value = lower
					d.changed(p.field(lower), "%s -> %s (JSON field names are lowercase)", key, lower)
				}
			}
		}
		return true
	})
}

// fixHostSelectors rewrites `matchExpressions` written as a map into the list Kubernetes
// label selectors use. Values written as a set are left for the user: see reportSets.
func (d *document) fixHostSelectors(top *yaml.Node, p path) {
	walk(top, p, func(n *yaml.Node, p path) bool {
		if !isMap(n) {
			return true
		}
		selector := get(n, "hostSelector")
		exprs := get(selector, "matchExpressions")
		if !isMap(exprs) {
			return true
		}
		at := p.field("hostSelector").field("matchExpressions")
		switch {
		case keyAt(exprs, "key") >= 0:
			set(selector, "matchExpressions", seqNode(exprs))
			d.changed(at, "map -> list (one expression {key, operator, values})")
		case allValuesHaveOperator(exprs):
			list := seqNode()
			for i := 0; i+1 < len(exprs.Content); i += 2 {
				expr := exprs.Content[i+1]
				expr.Content = append([]*yaml.Node{strNode("key"), strNode(exprs.Content[i].Value)}, expr.Content...)
				list.Content = append(list.Content, expr)
			}
			set(selector, "matchExpressions", list)
			d.changed(at, "map of key -> {operator, values} -> list of {key, operator, values}")
		default:
			d.mustFix(at, "is a map; write a list of {key, operator, values}")
		}
		return true
	})
}

func allValuesHaveOperator(m *yaml.Node) bool {
	if len(m.Content) == 0 {
		return false
	}
	for i := 1; i < len(m.Content); i += 2 {
		if keyAt(m.Content[i], "operator") < 0 {
			return false
		}
	}
	return true
}

// reportSets finds YAML sets (`{a, b}`, `? a`): a map of keys without values, never the list
// the field wants. Migrate does not turn them into lists because the seed wrote them by
// mistake and only the author knows what was meant.
func (d *document) reportSets(top *yaml.Node, p path) {
	walk(top, p, func(n *yaml.Node, p path) bool {
		if !isSet(n) {
			return true
		}
		d.mustFix(p, "written as a YAML set {...}, which is a map of keys without values; write a list: %s", setMembers(n))
		// Spell the missing values out: the encoder would otherwise write '' and turn the
		// set into a map of empty strings, which is not what the author wrote either.
		for i := 1; i < len(n.Content); i += 2 {
			n.Content[i].Value = "null"
		}
		return false
	})
}

const typographicQuotes = "‘’“”"

// stripTypographicQuotes removes ‘ ’ “ ” around (and in) a value.
func stripTypographicQuotes(s string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(typographicQuotes, r) {
			return -1
		}
		return r
	}, s)
}

// reportTypographicQuotes finds ‘ ’ “ ”: YAML takes them as part of the value, so ‘a’ is a
// four-character string and never matches the label a. Word processors put them there;
// only the author can say whether they were meant.
func (d *document) reportTypographicQuotes(top *yaml.Node, p path) {
	walk(top, p, func(n *yaml.Node, p path) bool {
		if isSet(n) {
			return false // reportSets already lists the members without the quotes
		}
		if isMap(n) {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if key := n.Content[i].Value; strings.ContainsAny(key, typographicQuotes) {
					d.mustFix(p.field(key), "the key has typographic quotes (‘ ’ “ ”), which YAML keeps as characters; write %q", stripTypographicQuotes(key))
				}
			}
		}
		if isScalar(n) && strings.ContainsAny(n.Value, typographicQuotes) {
			d.mustFix(p, "%q has typographic quotes (‘ ’ “ ”), which YAML keeps as characters; write %q", n.Value, stripTypographicQuotes(n.Value))
		}
		return true
	})
}
