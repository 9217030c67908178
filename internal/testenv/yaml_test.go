package testenv_test

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func yamlToUnstructured(doc string, u *unstructured.Unstructured) error {
	return yaml.Unmarshal([]byte(doc), &u.Object)
}

// field returns the value at path in u, or nil when there is none.
func field(u *unstructured.Unstructured, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	return v
}
