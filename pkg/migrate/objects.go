package migrate

// migrateMetadata fixes what the API server refuses in metadata whatever the kind.
func (d *document) migrateMetadata() {
	meta := get(d.root, "metadata")
	if scalarValue(meta, "name") == "" && scalarValue(meta, "generateName") == "" {
		d.mustFix("metadata.name", "missing; every object needs a name")
	}
	owners := get(meta, "ownerReferences")
	if !isSeq(owners) {
		return
	}
	// Owner references need the owner's uid, which only exists once the owner has been
	// created; the seed shows them as the controllers write them. The controllers set owners
	// themselves, so a reference without a uid is dropped rather than left to be refused.
	kept := owners.Content[:0]
	for i, owner := range owners.Content {
		at := path("metadata.ownerReferences").index(i)
		if scalarValue(owner, "uid") == "" {
			d.changed(at, "removed %s/%s: it has no uid (the owner's controller sets this reference itself)",
				scalarValue(owner, "kind"), scalarValue(owner, "name"))
			continue
		}
		if old := scalarValue(owner, "apiVersion"); old != "" {
			if current, moved := currentAPIVersion(old, scalarValue(owner, "kind")); moved {
				set(owner, "apiVersion", strNode(current))
				d.changed(at.field("apiVersion"), "%s -> %s", old, current)
			}
		}
		kept = append(kept, owner)
	}
	owners.Content = kept
	if len(kept) == 0 {
		del(meta, "ownerReferences")
	}
}

// dropStatus removes status: controllers write it, the API server ignores it on create, and
// the seed's status shapes (a map of indexes, `error: false`) are not today's.
func (d *document) dropStatus() {
	if del(d.root, "status") != nil {
		d.changed("status", "removed (written by the controllers, never by users)")
	}
}

// migrateKind applies the rules of the document's kind.
func (d *document) migrateKind() {
	group, _ := splitAPIVersion(scalarValue(d.root, "apiVersion"))
	spec := get(d.root, "spec")
	switch group + "/" + d.kind {
	case groupCore + "/Cluster":
		d.migrateCluster(spec)
	case groupCore + "/Machine":
		d.migrateMachineSpec(spec, "spec", d.clusterNameLabel())
	case groupCore + "/MachineSet", groupCore + "/MachineDeployment", groupCore + "/MachinePool":
		d.migrateMachineOwner(spec)
	case groupBootstrap + "/KubeadmConfig":
		d.migrateKubeadmConfigSpec(spec, "spec")
	case groupBootstrap + "/KubeadmConfigTemplate":
		d.migrateKubeadmConfigSpec(getPath(spec, "template", "spec"), "spec.template.spec")
	case groupControlPlane + "/KubeadmControlPlane":
		d.migrateKubeadmControlPlane(spec, "spec")
	case groupControlPlane + "/KubeadmControlPlaneTemplate":
		d.migrateKubeadmControlPlane(getPath(spec, "template", "spec"), "spec.template.spec")
	case groupInfrastructure + "/Metal3Cluster":
		d.migrateMetal3ClusterSpec(spec, "spec")
	case groupInfrastructure + "/Metal3ClusterTemplate":
		d.migrateMetal3ClusterSpec(getPath(spec, "template", "spec"), "spec.template.spec")
	case groupInfrastructure + "/Metal3Machine":
		d.migrateMetal3MachineSpec(spec, "spec")
	case groupInfrastructure + "/Metal3MachineTemplate":
		d.migrateMetal3MachineSpec(getPath(spec, "template", "spec"), "spec.template.spec")
	case groupInfrastructure + "/Metal3DataTemplate":
		d.migrateMetal3DataTemplate(spec)
	case groupInfrastructure + "/Metal3PreprovisioningDataTemplate":
		d.migrateNetworkData(get(spec, "preprovisioningNetworkData"), "spec.preprovisioningNetworkData")
	case groupInfrastructure + "/Metal3Data":
		d.migrateMetal3Data(spec)
	case groupIPAM + "/IPPool":
		d.migrateIPPool(spec)
	case groupNetwork + "/NetworkDevice":
		// Inline credentials in a whole object are reported, not moved: see migrateFabric.
		d.checkNetworkDevice(spec)
	case groupNetwork + "/ClusterNetwork":
		d.migrateClusterNetwork(spec)
	case groupNetwork + "/NIC":
		d.migrateNIC(spec)
	}
}

// clusterNameLabel returns the object's cluster.x-k8s.io/cluster-name label, which names the
// same Cluster that v1beta2's required spec.clusterName does.
func (d *document) clusterNameLabel() string {
	return scalarValue(getPath(d.root, "metadata", "labels"), "cluster.x-k8s.io/cluster-name")
}
