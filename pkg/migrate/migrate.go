package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Note is one thing migrate did, or one thing the user must do, in one object.
type Note struct {
	// Object names the document: Kind/name, or "document N" when it has no kind.
	Object string
	// Path is the field, e.g. spec.hostSelector.matchExpressions; empty for the whole document.
	Path string
	// Message says what changed, or what is wrong and how to fix it.
	Message string
}

func (n Note) String() string {
	if n.Path == "" {
		return n.Object + ": " + n.Message
	}
	return n.Object + ": " + n.Path + ": " + n.Message
}

// Document is one migrated YAML document.
type Document struct {
	// Object names the document as its notes do.
	Object string
	// APIVersion and Kind after migration; empty for a fragment.
	APIVersion, Kind string
	// YAML is the migrated document.
	YAML []byte
	// Changes were made; MustChange are left for the user. Warnings need no action for
	// metalwire but may for other tools (such as CAPM3 itself); they change nothing.
	Changes, MustChange, Warnings []Note
}

// Result is the outcome of migrating a stream of YAML documents.
type Result struct {
	Documents []Document
}

// Output returns every migrated document, separated by `---`.
func (r Result) Output() []byte {
	var out bytes.Buffer
	for i, d := range r.Documents {
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(d.YAML)
	}
	return out.Bytes()
}

// Changes lists every change, document by document.
func (r Result) Changes() []Note {
	var notes []Note
	for _, d := range r.Documents {
		notes = append(notes, d.Changes...)
	}
	return notes
}

// Warnings lists what the user may want to know, document by document.
func (r Result) Warnings() []Note {
	var notes []Note
	for _, d := range r.Documents {
		notes = append(notes, d.Warnings...)
	}
	return notes
}

// MustChange lists everything the user must fix, document by document.
func (r Result) MustChange() []Note {
	var notes []Note
	for _, d := range r.Documents {
		notes = append(notes, d.MustChange...)
	}
	return notes
}

// Migrate rewrites every document of a YAML stream. It fails only when the input is not YAML;
// everything else it cannot fix is a MustChange note.
func Migrate(in []byte) (Result, error) {
	in, _ = splitConcatenated(in)
	dec := yaml.NewDecoder(bytes.NewReader(in))
	var res Result
	for n := 1; ; n++ {
		var root yaml.Node
		err := dec.Decode(&root)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Result{}, fmt.Errorf("document %d is not valid YAML: %w", n, err)
		}
		if len(root.Content) == 0 || root.Content[0].Tag == "!!null" {
			continue // an empty document, e.g. after a trailing `---`
		}
		doc, extra, err := migrateDocument(&root, n)
		if err != nil {
			return Result{}, err
		}
		res.Documents = append(res.Documents, doc)
		for _, x := range extra {
			d := &document{root: x, kind: scalarValue(x, "kind"), object: scalarValue(x, "kind") + "/" + scalarValue(get(x, "metadata"), "name")}
			out, err := d.finish(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{x}})
			if err != nil {
				return Result{}, err
			}
			res.Documents = append(res.Documents, out)
		}
	}
	return res, nil
}

// document is the migration state of one document.
type document struct {
	root                *yaml.Node // the document's top-level mapping
	object              string
	kind                string
	changes, mustChange []Note
	warnings            []Note
}

func (d *document) changed(p path, format string, args ...any) {
	d.changes = append(d.changes, Note{Object: d.object, Path: string(p), Message: fmt.Sprintf(format, args...)})
}

func (d *document) warn(p path, format string, args ...any) {
	d.warnings = append(d.warnings, Note{Object: d.object, Path: string(p), Message: fmt.Sprintf(format, args...)})
}

func (d *document) mustFix(p path, format string, args ...any) {
	d.mustChange = append(d.mustChange, Note{Object: d.object, Path: string(p), Message: fmt.Sprintf(format, args...)})
}

// migrateDocument migrates one document; extra are documents it produced beside it (the
// Secrets holding a NetworkDevice's inline credentials).
func migrateDocument(root *yaml.Node, n int) (_ Document, extra []*yaml.Node, _ error) {
	top := root.Content[0]
	d := &document{root: top, object: fmt.Sprintf("document %d", n)}
	if !isMap(top) {
		d.mustFix("", "is not a mapping (a Kubernetes object); nothing to migrate")
		doc, err := d.finish(root)
		return doc, nil, err
	}
	d.kind = scalarValue(top, "kind")
	apiVersion := scalarValue(top, "apiVersion")
	if d.kind == "ConfigMap" && scalarValue(get(top, "metadata"), "name") == "capp-ip-allocations" {
		d.object = "ConfigMap/capp-ip-allocations"
		d.mustFix("", "CAPP's own address bookkeeping: in metalwire the IPPools and their IPAddressClaims are the truth, and the ConfigMap of that shape is a read-only view metalwire writes; do not apply this one (migrate the PacketCluster and PacketMachineTemplates instead)")
		doc, err := d.finish(root)
		return doc, nil, err
	}
	if apiVersion == "" && (d.kind == "PacketCluster" || d.kind == "PacketMachineTemplate") {
		extra = d.migratePacket()
		doc, err := d.finish(root)
		return doc, extra, err
	}
	if d.kind == "" && apiVersion == "" {
		if kind := fabricKind(top); kind != "" {
			extra = d.migrateFabric(kind)
			doc, err := d.finish(root)
			return doc, extra, err
		}
	}
	if d.kind != "" {
		name := scalarValue(get(top, "metadata"), "name")
		if name == "" {
			name = fmt.Sprintf("(unnamed, document %d)", n)
		}
		d.object = d.kind + "/" + name
	}

	whole := d.kind != "" && apiVersion != ""
	if whole {
		d.migrateAPIVersion(apiVersion)
	}
	// Generic rewrites before the kind's rules, which expect lowercase reference keys.
	d.lowercaseReferenceKeys(top, "")
	d.fixHostSelectors(top, "")
	if whole {
		d.migrateMetadata()
		d.dropStatus()
		d.migrateKind()
	} else {
		d.fragment(top)
	}

	// Checks last: they report what is left after the rewrites.
	d.reportSets(top, "")
	d.reportTypographicQuotes(top, "")
	doc, err := d.finish(root)
	return doc, nil, err
}

func (d *document) finish(root *yaml.Node) (Document, error) {
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return Document{}, fmt.Errorf("%s: writing YAML: %w", d.object, err)
	}
	if err := enc.Close(); err != nil {
		return Document{}, fmt.Errorf("%s: writing YAML: %w", d.object, err)
	}
	return Document{
		Object:     d.object,
		APIVersion: scalarValue(d.root, "apiVersion"),
		Kind:       d.kind,
		YAML:       out.Bytes(),
		Changes:    d.changes,
		MustChange: d.mustChange,
		Warnings:   d.warnings,
	}, nil
}

// fragment explains a document that is not a whole object, as the seed's hostSelector examples.
func (d *document) fragment(top *yaml.Node) {
	if getPath(top, "spec", "providerSpec", "value", "hostSelector") != nil {
		d.mustFix("spec.providerSpec.value.hostSelector",
			"no apiVersion and kind: this is a fragment in Cluster API v1alpha1's providerSpec shape; "+
				"put hostSelector under spec of a Metal3Machine (or spec.template.spec of a Metal3MachineTemplate)")
		return
	}
	var missing []string
	if scalarValue(top, "apiVersion") == "" {
		missing = append(missing, "apiVersion")
	}
	if d.kind == "" {
		missing = append(missing, "kind")
	}
	d.mustFix("", "no %s: this is a fragment, not an object; put it in a complete manifest", strings.Join(missing, " and "))
}
