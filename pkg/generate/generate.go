package generate

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Result is what one run generates.
type Result struct {
	// State is the address state after the run, and Changes what differs from the state given.
	State   State
	Changes []Change
	// Nodes in the order of the file.
	Nodes []*NodeOutput
}

// NodeOutput is one node's configuration and objects.
type NodeOutput struct {
	*NodeConfig
	Objects []*unstructured.Unstructured
}

// Generate allocates the file's addresses against state and renders every node.
func (f *File) Generate(state State, o Options) (*Result, error) {
	next, changes, err := f.Allocate(state)
	if err != nil {
		return nil, err
	}
	res := &Result{State: next, Changes: changes}
	for _, u := range f.Units {
		for _, node := range u.Nodes {
			nc, err := f.NodeConfig(u, node, next)
			if err != nil {
				return nil, err
			}
			objs, err := Objects(nc, o)
			if err != nil {
				return nil, err
			}
			res.Nodes = append(res.Nodes, &NodeOutput{NodeConfig: nc, Objects: objs})
		}
	}
	return res, nil
}

// Manifests returns the node's objects as one YAML stream.
func (n *NodeOutput) Manifests() ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range n.Objects {
		if i > 0 {
			buf.WriteString("---\n")
		}
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}
