package fieldindex_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// acrossNamespaces are the fields a List may read without a namespace, and why.
var acrossNamespaces = map[string]string{
	"hostTemplateIndex": "registered with AcrossNamespaces: a pre-provisioning template serves hosts of other namespaces",
	`"spec.nodeName"`:   "a workload cluster's Pods, listed through a client that sends it to the API server as a field selector",
}

// TestEveryIndexedListNamesItsNamespace: an index registered through Register files each object
// under its namespace only, so a List through it (client.MatchingFields) finds nothing unless it
// names the namespace. Every such List of the manager's code passes client.InNamespace in the
// same call, or reads a field listed in acrossNamespaces.
func TestEveryIndexedListNamesItsNamespace(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			file, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var fields *ast.CompositeLit
				namespaced := false
				for _, arg := range call.Args {
					switch a := arg.(type) {
					case *ast.CompositeLit:
						if isSelector(a.Type, "client", "MatchingFields") {
							fields = a
						}
					case *ast.CallExpr:
						if isSelector(a.Fun, "client", "InNamespace") {
							namespaced = true
						}
					}
				}
				if fields == nil {
					return true
				}
				checked++
				if namespaced {
					return true
				}
				for _, elt := range fields.Elts {
					kv, ok := elt.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					key := exprString(kv.Key)
					if _, ok := acrossNamespaces[key]; !ok {
						t.Errorf("%s: a List through field index %s without client.InNamespace finds nothing: name the namespace, or register the index with AcrossNamespaces and add it to acrossNamespaces",
							fset.Position(call.Pos()), key)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked == 0 {
		t.Fatal("found no List through a field index: the walk read the wrong tree")
	}
}

func isSelector(e ast.Expr, pkg, name string) bool {
	s, ok := e.(*ast.SelectorExpr)
	if !ok || s.Sel.Name != name {
		return false
	}
	id, ok := s.X.(*ast.Ident)
	return ok && id.Name == pkg
}

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.BasicLit:
		return x.Value
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	}
	return "?"
}
