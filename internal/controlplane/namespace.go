package controlplane

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var namespaceCounter atomic.Int64

// NewNamespace creates a namespace of the test's own, named after the test, so tests sharing one
// API server never see each other's objects.
func (e *Env) NewNamespace(t TB) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", strings.ToLower(t.Name()), namespaceCounter.Add(1))
	// A namespace name is a DNS label: anything else in a test name (/, _, ., spaces) becomes -.
	name = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			return r
		}
		return '-'
	}, name)
	if len(name) > 60 {
		name = name[len(name)-60:]
	}
	name = strings.Trim(name, "-")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}
