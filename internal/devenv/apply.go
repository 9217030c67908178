package devenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// FieldOwner is the server-side apply field manager of what dev mode applies.
const FieldOwner = "metalwire-dev"

// Apply server-side applies every object in path, a manifest file or a directory of them (*.yaml,
// *.yml, *.json, searched recursively, in name order; kustomization files are skipped). Files may
// hold many YAML documents. Namespaced objects without a namespace go to "default". It stops at
// the first failure with an error naming the file and the document, and returns how many objects
// were applied.
func Apply(ctx context.Context, c client.Client, path string) (int, error) {
	files, err := manifestFiles(path)
	if err != nil {
		return 0, err
	}
	applied := 0
	for _, file := range files {
		objs, err := readManifests(file)
		if err != nil {
			return applied, err
		}
		for _, o := range objs {
			if err := applyOne(ctx, c, o.obj); err != nil {
				return applied, fmt.Errorf("%s: document %d (%s %s): %w", file, o.doc, o.obj.GetKind(), o.obj.GetName(), err)
			}
			applied++
		}
	}
	return applied, nil
}

// manifestFiles lists the files path stands for.
func manifestFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--apply %s: %w", path, errors.Unwrap(err))
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := strings.ToLower(d.Name())
		if strings.HasPrefix(name, "kustomization.") {
			return nil
		}
		if slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(name)) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("--apply %s: %w", path, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("--apply %s: no .yaml, .yml or .json files in the directory", path)
	}
	slices.Sort(files)
	return files, nil
}

// document is one object and its place in its file (1-based, counting documents that hold an
// object, as a reader counts them).
type document struct {
	doc int
	obj *unstructured.Unstructured
}

// readManifests splits a file into its YAML documents, skipping empty ones.
func readManifests(file string) ([]document, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []document
	for n := 1; ; {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, n, err)
		}
		obj := map[string]any{}
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("%s: document %d is not valid YAML: %w", file, n, err)
		}
		if len(obj) == 0 {
			continue // only comments, or an empty document between two ---
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, fmt.Errorf("%s: document %d: apiVersion and kind are required", file, n)
		}
		if u.GetName() == "" {
			return nil, fmt.Errorf("%s: document %d (%s): metadata.name is required; generateName cannot be applied", file, n, u.GetKind())
		}
		docs = append(docs, document{doc: n, obj: u})
		n++
	}
}

func applyOne(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	if u.GetNamespace() == "" {
		namespaced, err := c.IsObjectNamespaced(u)
		if err != nil {
			return fmt.Errorf("unknown kind %s in %s; is its CRD installed? %w", u.GetKind(), u.GetAPIVersion(), err)
		}
		if namespaced {
			u.SetNamespace("default")
		}
	}
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership)
}
