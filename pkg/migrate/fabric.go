package migrate

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// groupNetwork is metalwire's switch-port automation group (seed 003).
const groupNetwork = "network.metalwire.io"

// supportedNetworkOS lists the networkOS values the fabric's drivers serve.
var supportedNetworkOS = []string{"openvswitch", "openvswitch-ssh", "equinix-metal"}

// fabricKind recognises the seed's NetWorkDevice, ClusterNetwork and NIC examples, which have
// no apiVersion or kind, by their shape.
func fabricKind(top *yaml.Node) string {
	spec := get(top, "spec")
	meta := get(top, "metadata")
	if meta == nil {
		meta = get(top, "metaldata")
	}
	switch {
	case get(spec, "switch") != nil || get(spec, "switches") != nil:
		return "NetworkDevice"
	case get(spec, "nic") != nil || get(meta, "node") != nil:
		return "NIC"
	case get(spec, "network") != nil || get(meta, "netWorkDevice") != nil:
		return "ClusterNetwork"
	}
	return ""
}

// migrateFabric turns a seed fabric example into an object of today's API: metadata's
// networkDevice and node move to spec, the seed's singular list names become plural, names are
// lowercased (Kubernetes names are), and inline switch credentials move to Secrets returned as
// extra documents.
func (d *document) migrateFabric(kind string) []*yaml.Node {
	top := d.root
	d.object = kind + "/" + strings.ToLower(scalarValue(get(top, "metadata"), "name")+scalarValue(get(top, "metaldata"), "name"))
	if rename(top, "metaldata", "metadata") {
		d.changed("metaldata", "renamed to metadata (a typo in the seed)")
	}
	meta := child(top, "metadata")
	name := scalarValue(meta, "name")
	if lower := strings.ToLower(name); lower != name {
		set(meta, "name", strNode(lower))
		d.changed("metadata.name", "%s -> %s (Kubernetes names are lowercase)", name, lower)
		name = lower
	}
	// apiVersion and kind first, where a reader looks for them.
	top.Content = append([]*yaml.Node{strNode("apiVersion"), strNode(groupNetwork + "/v1alpha1"), strNode("kind"), strNode(kind)}, top.Content...)
	d.kind = kind
	d.changed("", "recognised as a %s of the seed; apiVersion %s/v1alpha1 and kind %s added", kind, groupNetwork, kind)
	spec := child(top, "spec")
	d.moveMetaRef(meta, spec, []string{"netWorkDevice", "networkDevice"}, "networkDeviceRef", true)
	d.dropStatus()

	switch kind {
	case "NetworkDevice":
		return d.migrateNetworkDevice(spec, name)
	case "ClusterNetwork":
		d.migrateClusterNetwork(spec)
	case "NIC":
		d.moveMetaRef(meta, spec, []string{"node"}, "node", false)
		d.migrateNIC(spec)
	}
	return nil
}

// moveMetaRef moves a reference the seed keeps in metadata (where Kubernetes has no such field)
// to spec; lower lowercases it, as it names an object whose name migrate lowercases too.
func (d *document) moveMetaRef(meta, spec *yaml.Node, from []string, to string, lower bool) {
	for _, key := range from {
		v := del(meta, key)
		if v == nil {
			continue
		}
		val := v.Value
		if lower {
			val = strings.ToLower(val)
		}
		set(spec, to, strNode(val))
		d.changed(path("metadata").field(key), "moved to spec.%s: %s (Kubernetes metadata has no such field)", to, val)
		return
	}
}

func (d *document) migrateNetworkDevice(spec *yaml.Node, name string) []*yaml.Node {
	if rename(spec, "switch", "switches") {
		d.changed("spec.switch", "renamed to spec.switches")
	}
	var secrets []*yaml.Node
	switches := get(spec, "switches")
	if !isSeq(switches) {
		return nil
	}
	for i, sw := range switches.Content {
		at := path("spec.switches").index(i)
		if rename(sw, "ip", "address") {
			d.changed(at.field("ip"), "renamed to address")
		}
		user, pwd := del(sw, "user"), del(sw, "pwd")
		if user == nil && pwd == nil {
			continue
		}
		secret := fmt.Sprintf("%s-%s-credentials", name, strings.ToLower(scalarValue(sw, "name")))
		data := mapNode()
		if user != nil {
			set(data, "username", strNode(user.Value))
		}
		if pwd != nil {
			set(data, "password", strNode(pwd.Value))
		}
		set(sw, "credentialsRef", mapNode(strNode("name"), strNode(secret)))
		d.changed(at.field("pwd"), "inline credentials moved to Secret %s (kubernetes.io/basic-auth), named in credentialsRef", secret)
		d.warn(at.field("pwd"), "the switch password is now in Secret %s, printed with the output: keep that file out of version control and remove the password from the old manifest", secret)
		secrets = append(secrets, mapNode(
			strNode("apiVersion"), strNode("v1"),
			strNode("kind"), strNode("Secret"),
			strNode("metadata"), mapNode(strNode("name"), strNode(secret)),
			strNode("type"), strNode("kubernetes.io/basic-auth"),
			strNode("stringData"), data,
		))
	}
	d.checkNetworkDevice(spec)
	return secrets
}

// checkNetworkDevice reports what only the user can fix in a NetworkDevice.
func (d *document) checkNetworkDevice(spec *yaml.Node) {
	switches := get(spec, "switches")
	if !isSeq(switches) {
		return
	}
	for i, sw := range switches.Content {
		at := path("spec.switches").index(i)
		if os := scalarValue(sw, "networkOS"); os != "" && !contains(supportedNetworkOS, os) {
			d.mustFix(at.field("networkOS"), "%q has no driver (no public command reference); use one of: %s", os, strings.Join(supportedNetworkOS, ", "))
		}
		if project := scalarValue(get(sw, "equinixMetal"), "projectID"); scalarValue(sw, "networkOS") == "equinix-metal" && !uuidPattern.MatchString(project) {
			d.mustFix(at.field("equinixMetal").field("projectID"), "%q is not a project UUID: put the project's id (metal project get)", project)
		}
		for _, key := range []string{"user", "pwd"} {
			if get(sw, key) != nil {
				d.mustFix(at.field(key), "credentials are not stored in a NetworkDevice; put them in a kubernetes.io/basic-auth Secret and name it in credentialsRef")
			}
		}
	}
}

func (d *document) migrateClusterNetwork(spec *yaml.Node) {
	if rename(spec, "network", "networks") {
		d.changed("spec.network", "renamed to spec.networks")
	}
	if networks := get(spec, "networks"); isSeq(networks) {
		for i, n := range networks.Content {
			if acl := get(n, "acl"); acl != nil && (acl.Tag == "!!null" || (isSeq(acl) && len(acl.Content) == 0)) {
				del(n, "acl")
				d.changed(path("spec.networks").index(i).field("acl"), "removed (empty; switch ACLs are not applied yet)")
			}
		}
	}
	if get(spec, "vlanRange") == nil {
		d.mustFix("spec.vlanRange", "the seed has none: set the VLAN ids the networks are given, e.g. vlanRange: 1000-1999")
	}
}

func (d *document) migrateNIC(spec *yaml.Node) {
	if rename(spec, "nic", "nics") {
		d.changed("spec.nic", "renamed to spec.nics")
	}
	nics := get(spec, "nics")
	if !isSeq(nics) {
		return
	}
	seen := map[string]int{}
	for i, n := range nics.Content {
		sw := getPath(n, "networkDevice", "switch")
		key := scalarValue(sw, "name") + "/" + scalarValue(sw, "port")
		if j, dup := seen[key]; dup {
			d.mustFix(path("spec.nics").index(i).field("networkDevice").field("switch"),
				"cabled to switch %s port %s like spec.nics[%d]; two cards cannot share a switch port: correct the port", scalarValue(sw, "name"), scalarValue(sw, "port"), j)
			continue
		}
		seen[key] = i
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
