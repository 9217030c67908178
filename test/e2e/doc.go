// Package e2e runs the whole system the way `make demo` does, in the test process: dev mode's
// control plane, every metalwire controller, Cluster API's core controllers and the host
// simulator, fed with the manifests of examples/. The tests then change the cluster as a user
// would (scale, delete) and check what the hosts and the IP pools show.
package e2e
