package migrate

import (
	"net"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Metal3 infrastructure v1beta2 and ipam.metal3.io v1alpha1 shapes.

func (d *document) migrateMetal3ClusterSpec(spec *yaml.Node, p path) {
	d.failureDomainsToList(spec, p)
	v := get(spec, "noCloudProvider")
	if v == nil {
		return
	}
	at := p.field("noCloudProvider")
	noCloud, err := strconv.ParseBool(v.Value)
	if !isScalar(v) || err != nil {
		d.mustFix(at, "%q is not true or false; write cloudProviderEnabled: true or false instead", v.Value)
		return
	}
	if existing := get(spec, "cloudProviderEnabled"); existing != nil {
		if enabled, err := strconv.ParseBool(existing.Value); err != nil || enabled == noCloud {
			d.mustFix(at, "contradicts cloudProviderEnabled: %s; keep one of them", existing.Value)
			return
		}
		del(spec, "noCloudProvider")
		d.changed(at, "removed (cloudProviderEnabled already says the same)")
		return
	}
	// Replace in place, so the field stays where the author put it.
	i := keyAt(spec, "noCloudProvider")
	spec.Content[i] = strNode("cloudProviderEnabled")
	spec.Content[i+1] = boolNode(!noCloud)
	d.changed(at, "%t -> cloudProviderEnabled: %t", noCloud, !noCloud)
}

func (d *document) migrateMetal3MachineSpec(spec *yaml.Node, p path) {
	if !isMap(spec) {
		d.mustFix(p, "missing; a Metal3Machine needs at least image (or customDeploy)")
		return
	}
	if get(spec, "image") == nil && get(spec, "customDeploy") == nil {
		d.mustFix(p.field("image"), "required (or customDeploy); give the image to provision: {url, checksum, checksumType, diskFormat}")
	}
	d.renameImageFormat(get(spec, "image"), p.field("image"))
	d.contractObjectRefVersion(get(spec, "dataTemplate"), p.field("dataTemplate"))
}

// contractObjectRefVersion keeps apiVersion in Metal3's own references current.
func (d *document) contractObjectRefVersion(ref *yaml.Node, p path) {
	old := scalarValue(ref, "apiVersion")
	if current, moved := currentAPIVersion(old, scalarValue(ref, "kind")); moved {
		set(ref, "apiVersion", strNode(current))
		d.changed(p.field("apiVersion"), "%s -> %s", old, current)
	}
}

func (d *document) migrateMetal3DataTemplate(spec *yaml.Node) {
	if !isMap(spec) {
		return
	}
	d.fillDataTemplateClusterName(spec)
	d.dropTemplateReference(spec)
	meta := get(spec, "metaData")
	if rename(meta, "ipAddesses", "ipAddresses") {
		d.changed("spec.metaData.ipAddesses", "-> ipAddresses (typo in the seed)")
	}
	d.renameMetaDataPoolLists(meta, "spec.metaData")
	d.migrateNetworkData(get(spec, "networkData"), "spec.networkData")
}

// fillDataTemplateClusterName: metalwire's Metal3DataTemplate does not need clusterName (the
// controllers take the cluster from the Machine or the cluster-name label), but CAPM3 v1beta2
// requires it. Fill it from the label when there is one, so the template suits both; without a
// label, warn and leave it to the user, who only needs it for CAPM3.
func (d *document) fillDataTemplateClusterName(spec *yaml.Node) {
	if scalarValue(spec, "clusterName") != "" {
		return
	}
	if name := d.clusterNameLabel(); name != "" {
		spec.Content = append([]*yaml.Node{strNode("clusterName"), strNode(name)}, spec.Content...)
		d.changed("spec.clusterName", "set to %q from the cluster.x-k8s.io/cluster-name label (optional in metalwire; CAPM3 v1beta2 requires it)", name)
		return
	}
	d.warn("spec.clusterName", "not set: metalwire does not need it, but CAPM3 v1beta2 requires it; set it to the Cluster's name if CAPM3 must accept this template too")
}

func (d *document) migrateNetworkData(nd *yaml.Node, p path) {
	if !isMap(nd) {
		return
	}
	links := get(nd, "links")
	for _, kind := range []string{"ethernets", "bonds", "vlans"} {
		list := get(links, kind)
		if !isSeq(list) {
			continue
		}
		for i, link := range list.Content {
			at := p.field("links").field(kind).index(i)
			d.checkMACString(link, at)
			if kind == "vlans" && rename(link, "vlanId", "vlanID") {
				d.changed(at.field("vlanId"), "-> vlanID")
			}
			// 802.1ad is VLAN stacking (QinQ), not a bonding mode; the seed means LACP, 802.3ad.
			if mode := get(link, "bondMode"); kind == "bonds" && isScalar(mode) && mode.Value == "802.1ad" {
				mode.Value = "802.3ad"
				d.changed(at.field("bondMode"), "802.1ad -> 802.3ad (LACP; 802.1ad is VLAN stacking, not a bond mode)")
			}
		}
	}
	linkIDs := map[string]bool{}
	var linkNames []string
	for _, kind := range []string{"ethernets", "bonds", "bridges", "vlans"} {
		if list := get(links, kind); isSeq(list) {
			for _, link := range list.Content {
				if id := scalarValue(link, "id"); id != "" {
					linkIDs[id] = true
					linkNames = append(linkNames, id)
				}
			}
		}
	}
	networks := get(nd, "networks")
	for _, kind := range []string{"ipv4", "ipv6", "ipv4DHCP", "ipv6DHCP", "ipv6SLAAC"} {
		list := get(networks, kind)
		if !isSeq(list) {
			continue
		}
		for i, network := range list.Content {
			at := p.field("networks").field(kind).index(i)
			switch link := scalarValue(network, "link"); {
			case link == "":
				d.mustFix(at.field("link"), "required; name the link (the id of an entry under links) this network is configured on")
			case !linkIDs[link]:
				d.mustFix(at.field("link"), "%q is not a link of this template (links: %s); add it under links or fix the name", link, describeLinks(linkNames))
			}
			routes := get(network, "routes")
			if !isSeq(routes) {
				continue
			}
			for j, route := range routes.Content {
				d.migrateRoute(route, at.field("routes").index(j))
			}
		}
	}
}

// checkMACString refuses the seed's placeholders (XX:XX:...): they would be written to the
// host's network configuration as they are.
func (d *document) checkMACString(link *yaml.Node, p path) {
	mac := getPath(link, "macAddress", "string")
	if !isScalar(mac) {
		return
	}
	if _, err := net.ParseMAC(mac.Value); err != nil || len(mac.Value) != len("00:00:00:00:00:00") {
		d.mustFix(p.field("macAddress.string"), "%q is not a MAC address (a placeholder?); write the real one, or use fromHostInterface", mac.Value)
	}
}

// migrateRoute rewrites a seed-era route: netmask -> prefix, gateway as a plain string ->
// {string: ...}, services as a list of {type: dns, address} or {dns: x} -> {dns: [...]}.
func (d *document) migrateRoute(route *yaml.Node, p path) {
	if !isMap(route) {
		return
	}
	if rename(route, "netmask", "prefix") {
		d.changed(p.field("netmask"), "-> prefix")
	}
	if gw := get(route, "gateway"); isScalar(gw) {
		set(route, "gateway", mapNode(strNode("string"), gw))
		d.changed(p.field("gateway"), "%q -> {string: %q}", gw.Value, gw.Value)
	}
	services := get(route, "services")
	if !isSeq(services) {
		return
	}
	dns := seqNode()
	for i, svc := range services.Content {
		at := p.field("services").index(i)
		switch {
		case scalarValue(svc, "type") == "dns" && isScalar(get(svc, "address")):
			dns.Content = append(dns.Content, get(svc, "address"))
		case isScalar(get(svc, "dns")):
			dns.Content = append(dns.Content, get(svc, "dns"))
		default:
			d.mustFix(at, "is not a DNS server ({type: dns, address}); write services as {dns: [addresses]}")
			return
		}
	}
	set(route, "services", mapNode(strNode("dns"), dns))
	d.changed(p.field("services"), "list of DNS entries -> {dns: [addresses]}")
}

// migrateMetal3Data flags the seed's hand-written Metal3Data: today the template controller
// writes Metal3Data for a Metal3DataClaim, and spec.metal3Machine is gone.
func (d *document) migrateMetal3Data(spec *yaml.Node) {
	d.dropTemplateReference(spec)
	if get(spec, "metal3Machine") != nil {
		d.mustFix("spec.metal3Machine", "no longer exists: Metal3Data is created by the Metal3DataTemplate controller for a Metal3DataClaim (spec.claim, spec.template); delete this object and set dataTemplate on the Metal3Machine instead")
		return
	}
	for _, key := range []string{"claim", "template"} {
		if get(spec, key) == nil {
			d.mustFix(path("spec").field(key), "required; Metal3Data is written by the Metal3DataTemplate controller, not by hand")
		}
	}
}

// migrateIPPool fills namePrefix, required since ip-address-manager v1alpha1 and absent from
// the seed's pools: IPAddresses are named <namePrefix>-<address>, and the pool's own name is
// the prefix every upstream example uses.
func (d *document) migrateIPPool(spec *yaml.Node) {
	name := scalarValue(get(d.root, "metadata"), "name")
	if name == "" {
		return // migrateMetadata already asks for a name
	}
	if spec == nil {
		spec = child(d.root, "spec")
	}
	if !isMap(spec) || get(spec, "namePrefix") != nil {
		return
	}
	set(spec, "namePrefix", strNode(name))
	d.changed("spec.namePrefix", "set to %q, the pool's name (required; IPAddresses are named <namePrefix>-<address>)", name)
}

func describeLinks(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
