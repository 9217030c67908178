// Package devenv runs metalwire's local development environment, behind `metalwire dev`: a real
// kube-apiserver and etcd (started by internal/testenv from bin/), every CRD installed, one
// controller manager running metalwire's controllers, Cluster API's core controllers and the
// BareMetalHost simulator (a stand-in for baremetal-operator), a kubeconfig on disk, and the
// user's manifests applied.
package devenv
