// Package testenv is the tests' side of the local control plane (internal/controlplane): one
// control plane shared by a package's tests (Main), namespaces, managers run for a test and
// write counting. Dev mode and the CLI use internal/controlplane, which imports no testing
// package.
package testenv
