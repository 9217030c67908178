// Package controlplane starts a real kube-apiserver and etcd (controller-runtime's envtest) with
// metalwire's CRDs, Cluster API's CRDs and the BareMetalHost CRD installed: the local control
// plane of dev mode (internal/devenv) and of the tests (internal/testenv adds the test-only
// helpers). It imports no testing package, so the CLI links none of it.
//
// The binaries come from bin/, built by `make tools` from the Go module proxy; their directory is
// derived from the versions in hack/tools/go.mod, as the Makefile derives it. KUBEBUILDER_ASSETS,
// when set, names another directory holding kube-apiserver and etcd.
package controlplane

// TB is the part of testing.TB that Env's helpers for tests (NewNamespace, CountModified) use;
// *testing.T has it, and this package need not import testing.
type TB interface {
	Helper()
	Name() string
	Fatalf(format string, args ...any)
	Cleanup(func())
}
