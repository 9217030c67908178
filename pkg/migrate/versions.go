package migrate

import "strings"

// Groups whose seed-era versions migrate to v1beta2.
const (
	groupCore           = "cluster.x-k8s.io"
	groupBootstrap      = "bootstrap.cluster.x-k8s.io"
	groupControlPlane   = "controlplane.cluster.x-k8s.io"
	groupInfrastructure = "infrastructure.cluster.x-k8s.io"
	groupIPAM           = "ipam.metal3.io"
	currentVersion      = "v1beta2"
)

// oldVersions are the versions of the seeds' era; v1beta1 is still served by Cluster API
// v1.14 but deprecated, so it moves too.
var oldVersions = map[string]bool{
	"v1alpha1": true, "v1alpha2": true, "v1alpha3": true, "v1alpha4": true, "v1alpha5": true, "v1beta1": true,
}

// splitAPIVersion returns group and version; the core group ("v1") has an empty group.
func splitAPIVersion(apiVersion string) (group, version string) {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i], apiVersion[i+1:]
	}
	return "", apiVersion
}

// currentAPIVersion returns the apiVersion kind should be written with today, and whether
// that differs from apiVersion. Kinds of other providers in the infrastructure group (not
// Metal3*) keep theirs: their versions are not ours to decide.
func currentAPIVersion(apiVersion, kind string) (string, bool) {
	group, version := splitAPIVersion(apiVersion)
	if !oldVersions[version] {
		return apiVersion, false
	}
	switch group {
	case groupCore, groupBootstrap, groupControlPlane:
	case groupInfrastructure:
		if !strings.HasPrefix(kind, "Metal3") {
			return apiVersion, false
		}
	default: // ipam.metal3.io/v1alpha1 and metal3.io/v1alpha1 are current
		return apiVersion, false
	}
	return group + "/" + currentVersion, true
}

func (d *document) migrateAPIVersion(apiVersion string) {
	if current, moved := currentAPIVersion(apiVersion, d.kind); moved {
		set(d.root, "apiVersion", strNode(current))
		d.changed("apiVersion", "%s -> %s", apiVersion, current)
	}
}
