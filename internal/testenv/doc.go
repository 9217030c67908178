// Package testenv starts a real kube-apiserver and etcd (controller-runtime's envtest) for
// metalwire's tests and dev mode, with metalwire's CRDs, Cluster API's CRDs and the BareMetalHost
// CRD installed.
//
// The binaries come from bin/, built by `make tools` from the Go module proxy; their directory is
// derived from the versions in hack/tools/go.mod, as the Makefile derives it. KUBEBUILDER_ASSETS,
// when set, names another directory holding kube-apiserver and etcd.
package testenv
