package migrate

import (
	"regexp"
	"time"

	"go.yaml.in/yaml/v3"
)

// Cluster API v1beta2 (Cluster API v1.11+) shapes for the core kinds.

func (d *document) migrateCluster(spec *yaml.Node) {
	if spec == nil {
		return
	}
	d.contractRef(spec, "infrastructureRef", "spec")
	d.contractRef(spec, "controlPlaneRef", "spec")
	if topology := get(spec, "topology"); isMap(topology) {
		if rename(topology, "class", "classRef") {
			name := get(topology, "classRef")
			set(topology, "classRef", mapNode(strNode("name"), name))
			d.changed("spec.topology.classRef", "class: <name> -> classRef: {name}")
		}
		d.migrateTopologyMachines(get(topology, "controlPlane"), "spec.topology.controlPlane")
		if mds := getPath(topology, "workers", "machineDeployments"); isSeq(mds) {
			for i, md := range mds.Content {
				d.migrateTopologyMachines(md, path("spec.topology.workers.machineDeployments").index(i))
			}
		}
	}
}

// migrateTopologyMachines handles the machine settings of a topology's control plane or
// machine deployment: timeouts move under deletion; health checks changed shape too much to
// rewrite blindly.
func (d *document) migrateTopologyMachines(m *yaml.Node, p path) {
	if !isMap(m) {
		return
	}
	d.moveTimeouts(m, p, func() *yaml.Node { return m }, p)
	if get(m, "machineHealthCheck") != nil {
		d.mustFix(p.field("machineHealthCheck"), "became healthCheck (checks, remediation) with timeouts in seconds; rewrite it following Cluster API's v1beta2 migration guide")
	}
}

// contractRef turns an ObjectReference {apiVersion, kind, name, namespace} into v1beta2's
// ContractVersionedObjectReference {apiGroup, kind, name}: the version now comes from the
// provider's contract labels, and the referenced object is always in the same namespace.
func (d *document) contractRef(parent *yaml.Node, key string, p path) {
	ref := get(parent, key)
	at := p.field(key)
	if !isMap(ref) {
		return
	}
	apiVersion := del(ref, "apiVersion")
	if apiVersion == nil {
		if keyAt(ref, "apiGroup") < 0 {
			d.mustFix(at, "has no apiVersion or apiGroup; write {apiGroup, kind, name}")
		}
		return
	}
	group, _ := splitAPIVersion(apiVersion.Value)
	ref.Content = append([]*yaml.Node{strNode("apiGroup"), strNode(group)}, ref.Content...)
	d.changed(at, "apiVersion: %s -> apiGroup: %s (v1beta2 references name a group; the version comes from the contract)", apiVersion.Value, group)
	for _, gone := range []string{"namespace", "uid", "resourceVersion", "fieldPath"} {
		if v := del(ref, gone); v != nil {
			d.changed(at.field(gone), "removed (v1beta2 references point into the object's own namespace and carry no %s)", gone)
		}
	}
}

// kubernetesVersion is what Cluster API accepts for spec.version: a full semantic version.
var kubernetesVersion = regexp.MustCompile(`^v?\d+\.\d+\.\d+([-+].*)?$`)

func (d *document) checkVersion(spec *yaml.Node, p path) {
	v := get(spec, "version")
	if v == nil {
		return
	}
	at := p.field("version")
	switch {
	case v.Kind != yaml.ScalarNode:
		d.mustFix(at, "must be a Kubernetes version string such as v1.33.1")
	case v.Tag != "!!str":
		d.mustFix(at, "%s is read as a number, not a Kubernetes version; write the full version as a string, e.g. \"v%s.0\" with the patch release you run", v.Value, v.Value)
	case !kubernetesVersion.MatchString(v.Value):
		d.mustFix(at, "%q is not a full Kubernetes version; write major.minor.patch, e.g. v1.33.1", v.Value)
	}
}

// machineTimeouts moved from durations beside the spec to seconds under spec.deletion.
var machineTimeouts = []string{"nodeDrainTimeout", "nodeVolumeDetachTimeout", "nodeDeletionTimeout"}

// moveTimeouts rewrites `nodeDrainTimeout: 5m` into `deletion: {nodeDrainTimeoutSeconds: 300}`.
// to returns the node that gets deletion, created on first use.
func (d *document) moveTimeouts(from *yaml.Node, p path, to func() *yaml.Node, toPath path) {
	for _, key := range machineTimeouts {
		v := get(from, key)
		if v == nil {
			continue
		}
		seconds, ok := durationSeconds(v)
		if !ok {
			d.mustFix(p.field(key), "%q is not a duration; v1beta2 wants whole seconds in %s", v.Value, toPath.field(key+"Seconds"))
			continue
		}
		del(from, key)
		set(child(to(), "deletion"), key+"Seconds", intNode(seconds))
		d.changed(p.field(key), "%s -> %s: %d", v.Value, toPath.field("deletion").field(key+"Seconds"), seconds)
	}
}

// durationSeconds reads a metav1.Duration ("90s", "5m") as whole seconds.
func durationSeconds(v *yaml.Node) (int64, bool) {
	if !isScalar(v) {
		return 0, false
	}
	dur, err := time.ParseDuration(v.Value)
	if err != nil {
		return 0, false
	}
	return int64(dur / time.Second), true
}

// migrateMachineSpec applies v1beta2's Machine spec shape; clusterName is the Cluster the
// object belongs to when the spec has none (from the cluster-name label or the owner's spec).
func (d *document) migrateMachineSpec(spec *yaml.Node, p path, clusterName string) {
	if !isMap(spec) {
		d.mustFix(p, "missing; a machine needs clusterName, bootstrap and infrastructureRef")
		return
	}
	d.requireClusterName(spec, p, clusterName)
	if bootstrap := get(spec, "bootstrap"); isMap(bootstrap) {
		d.contractRef(bootstrap, "configRef", p.field("bootstrap"))
	} else {
		d.mustFix(p.field("bootstrap"), "required; set configRef to a KubeadmConfig (Template, in a MachineDeployment) or dataSecretName to a Secret holding the bootstrap data")
	}
	if get(spec, "infrastructureRef") == nil {
		d.mustFix(p.field("infrastructureRef"), "required; reference the Metal3Machine (Template, in a MachineDeployment) with {apiGroup, kind, name}")
	}
	d.contractRef(spec, "infrastructureRef", p)
	d.checkVersion(spec, p)
	d.moveTimeouts(spec, p, func() *yaml.Node { return spec }, p)
}

func (d *document) requireClusterName(spec *yaml.Node, p path, clusterName string) {
	if scalarValue(spec, "clusterName") != "" {
		return
	}
	if clusterName == "" {
		d.mustFix(p.field("clusterName"), "required in v1beta2; set it to the name of the Cluster this belongs to")
		return
	}
	spec.Content = append([]*yaml.Node{strNode("clusterName"), strNode(clusterName)}, spec.Content...)
	d.changed(p.field("clusterName"), "set to %q from the cluster.x-k8s.io/cluster-name label (required in v1beta2)", clusterName)
}

// migrateMachineOwner handles MachineSet, MachineDeployment and MachinePool: their own spec
// and the Machine template inside.
func (d *document) migrateMachineOwner(spec *yaml.Node) {
	if !isMap(spec) {
		d.mustFix("spec", "missing; write clusterName, selector and template")
		return
	}
	d.requireClusterName(spec, "spec", d.clusterNameLabel())
	clusterName := scalarValue(spec, "clusterName")
	if d.kind != "MachinePool" && get(spec, "selector") == nil {
		d.mustFix("spec.selector", "required; select the template's labels, e.g. matchLabels: {cluster.x-k8s.io/cluster-name: %s}", clusterName)
	}
	template := get(spec, "template")
	templateSpec := get(template, "spec")
	d.migrateMachineSpec(templateSpec, "spec.template.spec", clusterName)

	if d.kind != "MachineDeployment" {
		return
	}
	if v := del(spec, "minReadySeconds"); v != nil && isMap(templateSpec) {
		set(templateSpec, "minReadySeconds", v)
		d.changed("spec.minReadySeconds", "moved to spec.template.spec.minReadySeconds")
	}
	for _, gone := range []string{"revisionHistoryLimit", "progressDeadlineSeconds"} {
		if del(spec, gone) != nil {
			d.changed(path("spec").field(gone), "removed (no longer part of MachineDeployment in v1beta2)")
		}
	}
	if v := del(spec, "rolloutAfter"); v != nil {
		set(child(spec, "rollout"), "after", v)
		d.changed("spec.rolloutAfter", "moved to spec.rollout.after")
	}
	if strategy := del(spec, "strategy"); isMap(strategy) {
		if remediation := del(strategy, "remediation"); remediation != nil {
			set(spec, "remediation", remediation)
			d.changed("spec.strategy.remediation", "moved to spec.remediation")
		}
		if order := del(get(strategy, "rollingUpdate"), "deletePolicy"); order != nil {
			set(child(spec, "deletion"), "order", order)
			d.changed("spec.strategy.rollingUpdate.deletePolicy", "moved to spec.deletion.order")
		}
		if rolling := get(strategy, "rollingUpdate"); isMap(rolling) && len(rolling.Content) == 0 {
			del(strategy, "rollingUpdate")
		}
		set(child(spec, "rollout"), "strategy", strategy)
		d.changed("spec.strategy", "moved to spec.rollout.strategy")
	}
}
