package generate

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

// poolMark stands for ip[<network>] when a unit's template is rendered for a Metal3DataTemplate:
// the address comes from the network's IPPool, per host, at provisioning.
const poolMark = "ippool."

// PoolName is the IPPool of a network for a cluster.
func PoolName(cluster, network string) string { return cluster + "-" + network }

// Templates turns the file into phase 2's objects, for MachineDeployments and control planes:
// one IPPool (ipam.metal3.io) per network, holding its addressRange or addresses, prefix,
// gateway and DNS servers; per logical unit a Metal3DataTemplate carrying the unit's template
// (osNetConfig, rendered per host by the data controller into the host's metaData) and a
// networkData with the unit's interfaces, bonds, bridges and VLANs, each ip[<network>] taken from
// the network's pool (ipAddressFromIPPool); then per unit its bootstrap configuration, which
// writes the host's files from its metaData and runs os-net-config (or netplan) before kubeadm:
// a KubeadmControlPlane for the controllers, a KubeadmConfigTemplate for each node pool.
func Templates(f *File, o Options) ([]byte, error) {
	var docs []map[string]any
	for _, name := range f.NetworkNames() {
		docs = append(docs, ipPool(f.Networks[name], o))
	}
	for _, u := range f.Units {
		tmpl, err := dataTemplate(f, u, o)
		if err != nil {
			return nil, err
		}
		docs = append(docs, tmpl)
	}
	for _, u := range f.Units {
		obj, err := bootstrapObject(u, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u.Path, err)
		}
		docs = append(docs, obj)
	}
	var buf bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		b, err := yaml.Marshal(d)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

func objectMeta(name string, o Options) map[string]any {
	m := map[string]any{"name": name, "labels": map[string]any{clusterNameLabel: o.Cluster}}
	if o.Namespace != "" {
		m["namespace"] = o.Namespace
	}
	return m
}

func ipPool(n *Network, o Options) map[string]any {
	var pools []any
	if n.AddressRange != nil {
		pools = append(pools, map[string]any{"start": n.AddressRange.Start.String(), "end": n.AddressRange.End.String()})
	}
	for _, a := range n.Addresses {
		pools = append(pools, map[string]any{"start": a.String(), "end": a.String()})
	}
	spec := map[string]any{
		"clusterName": o.Cluster,
		"namePrefix":  PoolName(o.Cluster, n.Name),
		"pools":       pools,
		"prefix":      n.Netmask,
	}
	if n.Gateway != "" {
		spec["gateway"] = n.Gateway
	}
	if len(n.DNSServers) > 0 {
		spec["dnsServers"] = n.DNSServers
	}
	return map[string]any{"apiVersion": "ipam.metal3.io/v1alpha1", "kind": "IPPool", "metadata": objectMeta(PoolName(o.Cluster, n.Name), o), "spec": spec}
}

// templateBuilder collects a Metal3DataTemplate's networkData from an os-net-config list.
type templateBuilder struct {
	cluster                          string
	ethernets, bonds, bridges, vlans []any
	ipv4, ipv6                       []any
	dns                              []any
	place                            string
}

func dataTemplate(f *File, u *Unit, o Options) (map[string]any, error) {
	ip := map[string]string{}
	for _, net := range u.Networks() {
		ip[net] = poolMark + net
	}
	text, err := f.render(u, &Node{Name: u.Name + "-template", Key: "template"}, ip)
	if err != nil {
		return nil, err
	}
	var list []any
	if err := yaml.Unmarshal([]byte(text), &list); err != nil {
		var doc struct {
			NetworkConfig []any `json:"network_config"`
		}
		if err := yaml.Unmarshal([]byte(text), &doc); err != nil || doc.NetworkConfig == nil {
			return nil, fmt.Errorf("%s.networkConfig, rendered for a template: is not a list of os-net-config objects, or network_config: holding one", u.Path)
		}
		list = doc.NetworkConfig
	}
	if o.Format == FormatNetplan {
		// Every host would fail to render it (osNetConfig.format: netplan): say so now.
		if _, err := osnetconfig.Netplan(list, nil); err != nil {
			return nil, fmt.Errorf("%s.networkConfig, as netplan: %w", u.Path, err)
		}
	}
	b := &templateBuilder{cluster: o.Cluster, place: u.Path + ".networkConfig"}
	for i, item := range list {
		if _, err := b.add(item, fmt.Sprintf("[%d]", i), ""); err != nil {
			return nil, fmt.Errorf("%s, as a Metal3DataTemplate: %w", b.place, err)
		}
	}
	links := map[string]any{}
	for k, v := range map[string][]any{"ethernets": b.ethernets, "bonds": b.bonds, "bridges": b.bridges, "vlans": b.vlans} {
		if len(v) > 0 {
			links[k] = v
		}
	}
	networks := map[string]any{}
	if len(b.ipv4) > 0 {
		networks["ipv4"] = b.ipv4
	}
	if len(b.ipv6) > 0 {
		networks["ipv6"] = b.ipv6
	}
	nd := map[string]any{"links": links, "networks": networks}
	if len(b.dns) > 0 {
		nd["services"] = map[string]any{"dns": b.dns}
	}
	return map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "Metal3DataTemplate",
		"metadata": objectMeta(o.Cluster+"-"+u.Name, o),
		"spec":     map[string]any{"clusterName": o.Cluster, "networkData": nd, "osNetConfig": osNetConfigTemplate(u, o)},
	}, nil
}

// osNetConfigTemplate is the unit's template itself, for the data controller to render per host
// as phase 1 renders it per node: every network the template names gets its pool, and the
// unit's macMapping carries over, so a host with a mapped node's MACs gets that node's mapping
// file and name.
func osNetConfigTemplate(u *Unit, o Options) map[string]any {
	var networks []any
	seen := map[string]bool{}
	for _, r := range referencedNetworks(u.NetworkConfig) {
		if !seen[r.network] {
			seen[r.network] = true
			networks = append(networks, map[string]any{"name": r.network, "ipPool": PoolName(o.Cluster, r.network)})
		}
	}
	mappings := make([]any, 0, len(u.Nodes))
	for _, n := range u.Nodes {
		mappings = append(mappings, map[string]any{"name": n.Key, "interfaces": n.Mapping})
	}
	return map[string]any{
		"template": u.NetworkConfig, "unit": u.Name, "networks": networks, "macMappings": mappings,
		"format": string(dataTemplateFormat(o.Format)),
	}
}

// add maps one os-net-config object to links and networks and returns its link id.
func (b *templateBuilder) add(item any, place, parent string) (string, error) {
	obj, ok := item.(map[string]any)
	if !ok {
		return "", fmt.Errorf("%s is not an object", place)
	}
	typ, _ := obj["type"].(string)
	id, _ := obj["name"].(string)
	var members []string
	if list, ok := obj["members"].([]any); ok {
		for i, m := range list {
			mid, err := b.add(m, fmt.Sprintf("%s.members[%d]", place, i), id)
			if err != nil {
				return "", err
			}
			if mt, _ := m.(map[string]any)["type"].(string); mt != "vlan" {
				members = append(members, mid)
			}
		}
	}
	link := map[string]any{"id": id}
	if mtu, ok := osnetconfig.Int(obj["mtu"]); ok {
		link["mtu"] = mtu
	}
	switch typ {
	case "interface":
		link["type"] = "phy"
		link["macAddress"] = map[string]any{"fromHostInterface": id}
		b.ethernets = append(b.ethernets, link)
	case "linux_bond", "ovs_bond":
		params, err := osnetconfig.BondParameters(obj, typ)
		if err != nil {
			return "", fmt.Errorf("%s: %w", place, err)
		}
		mode, _ := params["mode"].(string)
		if mode == "" || typ == "ovs_bond" {
			// Open vSwitch bond modes (balance-slb, active-backup) are not Linux ones; the
			// template states the one both have.
			mode = "active-backup"
		}
		link["bondMode"] = mode
		if h, ok := params["transmit-hash-policy"].(string); ok {
			link["bondXmitHashPolicy"] = h
		}
		link["bondLinks"] = members
		b.bonds = append(b.bonds, link)
	case "linux_bridge", "ovs_bridge":
		if len(members) > 0 {
			link["bridgeLinks"] = members
		}
		b.bridges = append(b.bridges, link)
	case "vlan":
		vid, ok := osnetconfig.Int(obj["vlan_id"])
		if !ok {
			return "", fmt.Errorf("%s.vlan_id: want a number", place)
		}
		dev, _ := obj["device"].(string)
		if dev == "" {
			dev = parent
		}
		if id == "" {
			id = fmt.Sprintf("vlan%d", vid)
			link["id"] = id
		}
		link["vlanID"], link["vlanLink"] = vid, dev
		b.vlans = append(b.vlans, link)
	default:
		return "", fmt.Errorf("%s: type %q has no Metal3DataTemplate equivalent; use interface, vlan, linux_bond, ovs_bond, linux_bridge or ovs_bridge", place, typ)
	}
	if id == "" {
		return "", fmt.Errorf("%s: a %s needs a name", place, typ)
	}
	return id, b.addresses(obj, place, id)
}

// addresses maps a device's addresses (ip[<network>] only), routes and DNS servers.
func (b *templateBuilder) addresses(obj map[string]any, place, link string) error {
	list, _ := obj["addresses"].([]any)
	var pools []string
	for i, a := range list {
		m, _ := a.(map[string]any)
		v, _ := m["ip_netmask"].(string)
		if !strings.HasPrefix(v, poolMark) {
			return fmt.Errorf("%s.addresses[%d]: %q is a fixed address; a template shared by many hosts takes addresses from pools: write {{ ip['<network>'] }}", place, i, v)
		}
		pools = append(pools, strings.TrimPrefix(v, poolMark))
	}
	routes, _ := obj["routes"].([]any)
	for i, r := range routes {
		m, _ := r.(map[string]any)
		if d, _ := m["default"].(bool); !d {
			return fmt.Errorf("%s.routes[%d]: only default routes (through the pool's gateway) carry over to a template", place, i)
		}
	}
	for _, net := range pools {
		pool := PoolName(b.cluster, net)
		n := map[string]any{"id": net, "link": link, "ipAddressFromIPPool": pool}
		if len(routes) > 0 {
			n["routes"] = []any{map[string]any{"network": "0.0.0.0", "prefix": 0, "gateway": map[string]any{"fromIPPool": pool}}}
		}
		b.ipv4 = append(b.ipv4, n)
	}
	if dns, ok := obj["dns_servers"].([]any); ok {
		for _, d := range dns {
			if !slices.Contains(b.dns, d) {
				b.dns = append(b.dns, d)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !slices.Contains([]string{"type", "name", "members", "addresses", "routes", "dns_servers", "mtu", "vlan_id", "device", "bonding_options", "ovs_options", "use_dhcp", "primary"}, k) {
			return fmt.Errorf("%s.%s has no Metal3DataTemplate equivalent; remove it for --templates", place, k)
		}
	}
	return nil
}
