package migrate

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/metalwire/metalwire/pkg/ipam"
	"github.com/metalwire/metalwire/pkg/render/l2userdata"
)

// The Equinix Metal layer-2 seed extends CAPP's PacketCluster with networks[]
// and PacketMachineTemplate with ports[] and routes[]. metalwire keeps none of CAPP's kinds: a
// PacketCluster becomes the NetworkDevice of its project (networkOS equinix-metal), a
// ClusterNetwork of its networks and an IPPool per network whose addresses Cluster API assigns;
// a PacketMachineTemplate becomes a Metal3DataTemplate (the host's network data: the VLAN
// sub-interfaces of its ports, addresses from an IPPool per range, the routes) and those
// IPPools. What has no place (plan, billing, OS, keys: CAPP's device provisioning) is named.

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// packetProvisioning are the fields of a Packet template's spec that provision the device.
var packetProvisioning = []string{"facility", "plan", "billingCycle", "sshKeys", "operatingSystem"}

// slug turns a seed name ("Storage VLAN") into a Kubernetes name ("storage-vlan").
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// toNode encodes a value (maps are written with sorted keys: apiVersion, kind, metadata, spec).
func toNode(v any) *yaml.Node {
	n := &yaml.Node{}
	if err := n.Encode(v); err != nil {
		panic(fmt.Sprintf("migrate: encoding a generated object: %v", err))
	}
	return n
}

// packetSpec is spec.template.spec of the seed's Packet kinds (they nest it as templates do).
func packetSpec(top *yaml.Node) (*yaml.Node, path) {
	if s := getPath(top, "spec", "template", "spec"); s != nil {
		return s, "spec.template.spec"
	}
	return get(top, "spec"), "spec"
}

// migratePacket replaces a PacketCluster or PacketMachineTemplate document by metalwire's
// objects; the first replaces the document, the others are returned as extra documents.
func (d *document) migratePacket() []*yaml.Node {
	name := scalarValue(get(d.root, "metadata"), "name")
	d.object = d.kind + "/" + name
	if name == "" {
		d.mustFix("metadata.name", "missing: name the %s; its objects are named after it", d.kind)
	}
	spec, at := packetSpec(d.root)
	for _, f := range packetProvisioning {
		if get(spec, f) != nil {
			d.changed(at.field(f), "dropped: provisioning an Equinix Metal device is CAPP's, not metalwire's; it has no place in metalwire's objects")
		}
	}
	var objs []*yaml.Node
	if d.kind == "PacketCluster" {
		objs = d.packetCluster(name, spec, at)
	} else {
		objs = d.packetMachineTemplate(name, spec, at)
	}
	*d.root = *objs[0]
	d.kind = scalarValue(d.root, "kind")
	d.object = d.kind + "/" + scalarValue(get(d.root, "metadata"), "name")
	return objs[1:]
}

func (d *document) packetCluster(name string, spec *yaml.Node, at path) []*yaml.Node {
	project, metro := scalarValue(spec, "project"), scalarValue(spec, "metro")
	secret := name + "-metal-token"
	nd := map[string]any{
		"apiVersion": groupNetwork + "/v1alpha1", "kind": "NetworkDevice", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"switches": []any{map[string]any{
			"name": "metal", "networkOS": "equinix-metal", "address": "https://api.equinix.com/metal/v1",
			"equinixMetal":   map[string]any{"projectID": project, "metro": metro},
			"credentialsRef": map[string]any{"name": secret},
		}}},
	}
	d.changed("kind", "PacketCluster %s became NetworkDevice %s: its one switch is the Equinix Metal project (networkOS equinix-metal)", name, name)
	d.changed(at.field("project"), "became spec.switches[0].equinixMetal.projectID")
	d.changed(at.field("metro"), "became spec.switches[0].equinixMetal.metro: the networks' VXLANs are looked up in it")
	d.warn("spec.switches[0].credentialsRef", "create Secret %s (type Opaque, key token: your Metal API token); migrate writes no token", secret)

	out := []*yaml.Node{toNode(nd)}
	d.checkNetworkDevice(get(out[0], "spec"))
	var networks []any
	networksAt := at.field("networks")
	list := get(spec, "networks")
	if isSeq(list) {
		for i, n := range list.Content {
			nAt := networksAt.index(i)
			netName := slug(scalarValue(n, "name"))
			if netName == "" {
				netName = fmt.Sprintf("network-%d", i+1)
			}
			entry := map[string]any{"name": netName, "portMode": "trunk"}
			if v := scalarValue(n, "vxlanId"); v != "" {
				id, _ := strconv.Atoi(v)
				entry["vlanID"] = id
			} else {
				d.mustFix("spec.networks", "network %s (%s): the seed's PacketCluster names no VXLAN; pin networks[].vlanID to the VXLAN id of the virtual network (the templates' ip_addresses[].vxlanId) and set vlanRange around it", netName, nAt)
			}
			networks = append(networks, entry)
			if desc := scalarValue(n, "description"); desc != "" {
				d.changed(nAt.field("description"), "no place in ClusterNetwork; kept as the IPPool's annotation metalwire.io/description")
			}
			switch assignment := scalarValue(n, "assignment"); assignment {
			case "cluster-api", "":
				for j, cidr := range seqValues(get(n, "ipAddresses")) {
					pool, err := ipPool(fmt.Sprintf("%s-%s-%d", name, netName, j+1), cidr, scalarValue(n, "gateway"), description(scalarValue(n, "description")))
					if err != nil {
						d.mustFix(nAt.field("ipAddresses").index(j), "%v", err)
						continue
					}
					out = append(out, pool)
					d.changed(nAt.field("ipAddresses").index(j), "became IPPool %s-%s-%d: machines claim their addresses from it (Cluster API IPAM)", name, netName, j+1)
				}
			case "dhcp":
				d.changed(nAt.field("assignment"), "dhcp: no IPPool; the hosts ask DHCP on the VLAN")
			default:
				d.mustFix(nAt.field("assignment"), "%q: use cluster-api or dhcp", assignment)
			}
		}
	}
	if len(networks) > 0 {
		cn := map[string]any{
			"apiVersion": groupNetwork + "/v1alpha1", "kind": "ClusterNetwork", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"networkDeviceRef": name, "networks": networks},
		}
		out = append(out, toNode(cn))
		d.changed(networksAt, "became ClusterNetwork %s, one network each, portMode trunk (VLAN sub-interfaces on the hosts)", name)
	}
	return out
}

func description(s string) map[string]any {
	if s == "" {
		return nil
	}
	return map[string]any{"metalwire.io/description": s}
}

func seqValues(n *yaml.Node) []string {
	if !isSeq(n) {
		return nil
	}
	var out []string
	for _, v := range n.Content {
		out = append(out, v.Value)
	}
	return out
}

// ipPool is an IPPool of a range: every address of the prefix but the network, the broadcast
// and the gateway.
func ipPool(name, cidr, gateway string, annotations map[string]any) (*yaml.Node, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(cidr))
	if err != nil || !p.Addr().Is4() {
		return nil, fmt.Errorf("%q is not an IPv4 range in CIDR form (10.60.10.0/24)", cidr)
	}
	p = p.Masked()
	first := p.Addr().Next()
	last := first
	for a := first; p.Contains(a.Next()); a = a.Next() {
		last = a
	}
	if gateway == first.String() {
		first = first.Next()
	}
	spec := map[string]any{"namePrefix": name, "prefix": p.Bits(),
		"pools": []any{map[string]any{"start": first.String(), "end": last.String()}}}
	if gateway != "" {
		spec["gateway"] = gateway
	}
	meta := map[string]any{"name": name}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	return toNode(map[string]any{"apiVersion": groupIPAM + "/v1alpha1", "kind": "IPPool", "metadata": meta, "spec": spec}), nil
}

func (d *document) packetMachineTemplate(name string, spec *yaml.Node, at path) []*yaml.Node {
	var pools []*yaml.Node
	ethernets := make([]any, 0, 2)
	var bonds, vlans, ipv4 []any
	for _, eth := range []string{"eth0", "eth1"} {
		ethernets = append(ethernets, map[string]any{"type": "phy", "id": eth, "macAddress": map[string]any{"fromHostInterface": eth}})
	}
	routes := []any{}
	if rs := get(spec, "routes"); isSeq(rs) {
		for i, r := range rs.Content {
			p, err := netip.ParsePrefix(scalarValue(r, "destination"))
			if err != nil {
				d.mustFix(at.field("routes").index(i).field("destination"), "%q is not a CIDR destination", scalarValue(r, "destination"))
				continue
			}
			routes = append(routes, map[string]any{"network": p.Masked().Addr().String(), "prefix": p.Bits(),
				"gateway": map[string]any{"string": scalarValue(r, "gateway")}})
		}
		d.changed(at.field("routes"), "became the routes of every address in spec.networkData.networks.ipv4")
	}
	bonded := true
	if ports := get(spec, "ports"); isSeq(ports) {
		for i, port := range ports.Content {
			pAt := at.field("ports").index(i)
			pname := scalarValue(port, "name")
			layer2 := scalarValue(port, "layer2") == "true"
			if b := scalarValue(port, "bonded"); b == "false" {
				bonded = false
			}
			d.changed(pAt, "port %s (bonded %v, layer2 %v) is the %s network type: each machine's NIC names <device id>/%s on the project's NetworkDevice, and the ClusterNetwork's network is carried %s",
				pname, scalarValue(port, "bonded") != "false", layer2, networkType(pname, layer2), pname, map[bool]string{true: "untagged (portMode access)", false: "tagged (portMode trunk)"}[layer2])
			addrs := get(port, "ip_addresses")
			if !isSeq(addrs) {
				continue
			}
			for j, a := range addrs.Content {
				aAt := pAt.field("ip_addresses").index(j)
				vxlan := scalarValue(a, "vxlanId")
				link := pname
				if vxlan != "" && !layer2 {
					link = pname + "." + vxlan
					id, _ := strconv.Atoi(vxlan)
					// A VLAN has its parent's MAC; bond0's is its first member's (the host has no NIC bond0).
					macOf := pname
					if pname == "bond0" {
						macOf = "eth0"
					}
					vlans = append(vlans, map[string]any{"id": link, "vlanID": id, "vlanLink": pname, "macAddress": map[string]any{"fromHostInterface": macOf}})
				}
				poolName := fmt.Sprintf("%s-%s", name, vxlan)
				viewKey := fmt.Sprintf("%s-%s-%s", scalarValue(spec, "metro"), vxlan, strings.TrimSpace(scalarValue(a, "address")))
				pool, err := ipPool(poolName, scalarValue(a, "address"), scalarValue(a, "gateway"), map[string]any{ipam.AllocationViewKeyAnnotation: viewKey})
				if err != nil {
					d.mustFix(aAt.field("address"), "%v", err)
					continue
				}
				pools = append(pools, pool)
				entry := map[string]any{"id": link + "-ipv4", "link": link, "ipAddressFromIPPool": poolName}
				if len(routes) > 0 {
					entry["routes"] = routes
				}
				ipv4 = append(ipv4, entry)
				d.changed(aAt, "VXLAN %s became VLAN sub-interface %s with an address from IPPool %s (range %s, gateway %s); the pool's claims show in ConfigMap %s under %s", vxlan, link, poolName, scalarValue(a, "address"), scalarValue(a, "gateway"), ipam.AllocationViewName, ipam.ConfigMapKey(viewKey))
				if s := scalarValue(a, "subnetSize"); s != "" {
					d.warn(aAt.field("subnetSize"), "%s is not used: the address gets the range's prefix so the gateway stays on link", s)
				}
			}
		}
	}
	if len(ipv4) == 0 {
		d.warn(at.field("ports"), "no port with ip_addresses: the host's network data configures no VLAN")
	}
	if bonded {
		bonds = append(bonds, map[string]any{"id": "bond0", "bondMode": "802.3ad", "bondLinks": []any{"eth0", "eth1"},
			"macAddress": map[string]any{"fromHostInterface": "eth0"}})
	}
	links := map[string]any{"ethernets": ethernets}
	if len(bonds) > 0 {
		links["bonds"] = bonds
	}
	if len(vlans) > 0 {
		links["vlans"] = vlans
	}
	dt := map[string]any{
		"apiVersion": groupInfrastructure + "/v1beta2", "kind": "Metal3DataTemplate",
		"metadata": map[string]any{"name": name, "annotations": map[string]any{l2userdata.TemplateAnnotation: "true"}},
		"spec":     map[string]any{"networkData": map[string]any{"links": links, "networks": map[string]any{"ipv4": ipv4}}},
	}
	if get(spec, "metro") != nil {
		d.changed(at.field("metro"), "is the first part of each pool's allocation view key; the VXLANs are looked up in the NetworkDevice's metro")
	}
	if get(spec, "project") != nil {
		d.changed(at.field("project"), "no place here: the project is the NetworkDevice's (from the PacketCluster)")
	}
	d.changed("kind", "PacketMachineTemplate %s became Metal3DataTemplate %s: the host's network data; its annotation %s makes each machine boot with the bootstrap cloud-config merged with the seed's VLAN user-data", name, name, l2userdata.TemplateAnnotation)
	return append([]*yaml.Node{toNode(dt)}, pools...)
}

// networkType is the Metal network type a seed port asks for.
func networkType(port string, layer2 bool) string {
	switch {
	case port == "bond0" && layer2:
		return "layer2-bonded"
	case port == "bond0":
		return "hybrid-bonded"
	case layer2:
		return "layer2-individual"
	}
	return "hybrid"
}

// splitConcatenated splits a document that holds several objects without `---` between them
// (the seed's two PacketMachineTemplates): a second top-level `kind:` starts a new document.
func splitConcatenated(in []byte) ([]byte, int) {
	var out []string
	split := 0
	for _, doc := range regexp.MustCompile(`(?m)^---[ \t]*$`).Split(string(in), -1) {
		lines := strings.Split(doc, "\n")
		kinds := 0
		var cur []string
		for _, l := range lines {
			if strings.HasPrefix(l, "kind:") {
				kinds++
				if kinds > 1 {
					out = append(out, strings.Join(cur, "\n"))
					cur = nil
					split++
				}
			}
			cur = append(cur, l)
		}
		out = append(out, strings.Join(cur, "\n"))
	}
	if split == 0 {
		return in, 0
	}
	return []byte(strings.Join(out, "\n---\n")), split
}
