package controlplane

import (
	// CRDDirs reads Cluster API's CRD manifests from the sigs.k8s.io/cluster-api module
	// directory; this import keeps that module, at the version the project builds against, in
	// go.mod even while no other code imports it.
	_ "sigs.k8s.io/cluster-api/util/patch"
)
