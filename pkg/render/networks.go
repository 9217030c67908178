package render

import (
	"fmt"
	"net/netip"

	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// Networking renders network_data.json. Links are written bonds, ethernets, VLANs, then bridges;
// networks ipv4, ipv6, ipv4_dhcp, ipv6_dhcp, ipv6_slaac; every network has network_id (= id) and
// routes, every route services, and every link a MAC, as the schema Ironic enforces requires.
// A nil nd renders an empty document.
func Networking(nd *infrav1.NetworkData, f *Facts) (*NetworkData, error) {
	return networking(NetworkDataField, nd, f)
}

// PreprovisioningNetworking renders the preprovisioningNetworkData of a
// Metal3PreprovisioningDataTemplate: the same document, with messages naming its fields.
func PreprovisioningNetworking(nd *infrav1.NetworkData, f *Facts) (*NetworkData, error) {
	return networking(PreprovisioningNetworkDataField, nd, f)
}

// Where network data lives in the two template kinds, for messages.
const (
	NetworkDataField                = "networkData"
	PreprovisioningNetworkDataField = "preprovisioningNetworkData"
)

func networking(root string, nd *infrav1.NetworkData, f *Facts) (*NetworkData, error) {
	out := &NetworkData{Links: []Link{}, Networks: []Network{}, Services: []Service{}}
	if nd == nil {
		return out, nil
	}
	ndLinks, err := bondsFromFabric(root, ptr.Deref(nd.Links, infrav1.NetworkDataLinks{}), f)
	if err != nil {
		return nil, err
	}
	links, err := newLinkSet(root, &ndLinks, f)
	if err != nil {
		return nil, err
	}
	if out.Links, err = renderLinks(&ndLinks, links); err != nil {
		return nil, err
	}
	r := networkRenderer{f: f, links: links, root: root}
	if out.Networks, err = r.networks(ptr.To(ptr.Deref(nd.Networks, infrav1.NetworkDataNetworks{}))); err != nil {
		return nil, err
	}
	services := ptr.Deref(nd.Services, infrav1.NetworkDataService{})
	dns := texts(services.DNS)
	if out.Services, err = r.services(root+".services", dns, services.DNSFromIPPool, 0); err != nil {
		return nil, err
	}
	return out, nil
}

type networkRenderer struct {
	f     *Facts
	links *linkSet
	root  string
}

// staticSource is the address part of an ipv4 or ipv6 network.
type staticSource struct {
	pool    poolSource
	inline  *infrav1.NetworkDataIPAddress
	netmask *int32
}

func (r *networkRenderer) networks(n *infrav1.NetworkDataNetworks) ([]Network, error) {
	nws := templateNetworks(r.root, n)
	out := make([]Network, 0, len(nws))
	for _, nw := range nws {
		var net Network
		var err error
		if nw.src != nil {
			net, err = r.static(nw.field, nw.typ, nw.id, nw.link, *nw.src)
		} else {
			net, err = r.dynamic(nw.field, nw.typ, nw.id, nw.link)
		}
		if err != nil {
			return nil, err
		}
		if net.Routes, err = r.routes(nw.routes, nw.ipv4); err != nil {
			return nil, err
		}
		out = append(out, net)
	}
	return out, nil
}

// templateNetwork is a network of the template of any type, as the renderer and the pool
// check read it.
type templateNetwork struct {
	field, typ, id, link string
	src                  *staticSource // nil: the host takes its address itself (DHCP, SLAAC)
	routes               []route
	ipv4                 bool
}

// templateNetworks reads the template's networks in the order they are rendered: ipv4, ipv6,
// ipv4DHCP, ipv6DHCP, ipv6SLAAC.
func templateNetworks(root string, n *infrav1.NetworkDataNetworks) []templateNetwork {
	field := root + ".networks."
	var out []templateNetwork
	out = readNetworks(out, field+"ipv4", n.IPv4, func(f string, nw *infrav1.NetworkDataIPv4) templateNetwork {
		src := staticSource{staticPool(f, nw.IPAddressFromIPPool, nw.FromPoolRef, nw.FromPoolAnnotation), nw.IPAddress, nw.Netmask}
		return templateNetwork{f, NetworkIPv4, nw.ID, string(nw.Link), &src, routesOf(f, nw.Routes, routeOf4), true}
	})
	out = readNetworks(out, field+"ipv6", n.IPv6, func(f string, nw *infrav1.NetworkDataIPv6) templateNetwork {
		src := staticSource{staticPool(f, nw.IPAddressFromIPPool, nw.FromPoolRef, nw.FromPoolAnnotation), nw.IPAddress, nw.Netmask}
		return templateNetwork{f, NetworkIPv6, nw.ID, string(nw.Link), &src, routesOf(f, nw.Routes, routeOf6), false}
	})
	out = readNetworks(out, field+"ipv4DHCP", n.IPv4DHCP, func(f string, nw *infrav1.NetworkDataIPv4DHCP) templateNetwork {
		return templateNetwork{f, NetworkIPv4DHCP, nw.ID, string(nw.Link), nil, routesOf(f, nw.Routes, routeOf4), true}
	})
	for _, typ := range []struct {
		name, typ string
		items     []infrav1.NetworkDataIPv6DHCP
	}{{"ipv6DHCP", NetworkIPv6DHCP, n.IPv6DHCP}, {"ipv6SLAAC", NetworkIPv6SLAAC, n.IPv6SLAAC}} {
		out = readNetworks(out, field+typ.name, typ.items, func(f string, nw *infrav1.NetworkDataIPv6DHCP) templateNetwork {
			return templateNetwork{f, typ.typ, nw.ID, string(nw.Link), nil, routesOf(f, nw.Routes, routeOf6), false}
		})
	}
	return out
}

// readNetworks appends the networks of one list of the template at field, read by read.
func readNetworks[N any](out []templateNetwork, field string, items []N, read func(field string, nw *N) templateNetwork) []templateNetwork {
	for i := range items {
		out = append(out, read(fmt.Sprintf("%s[%d]", field, i), &items[i]))
	}
	return out
}

// dynamic renders a DHCP or SLAAC network: no address, just the link.
func (r *networkRenderer) dynamic(field, typ, id, link string) (Network, error) {
	if id == "" {
		return Network{}, invalid(field+".id", "is empty; give the network a name (it is also written as network_id)")
	}
	if err := r.links.check(field+".link", link); err != nil {
		return Network{}, err
	}
	return Network{ID: id, Type: typ, Link: link, NetworkID: id, Routes: []Route{}}, nil
}

// static renders an ipv4 or ipv6 network with its address from a pool or from the index.
func (r *networkRenderer) static(field, typ, id, link string, src staticSource) (Network, error) {
	net, err := r.dynamic(field, typ, id, link)
	if err != nil {
		return Network{}, err
	}
	ipv4 := typ == NetworkIPv4
	family := familyOf(ipv4)
	var addr netip.Addr
	var prefixLen int
	switch {
	case src.pool.set():
		a, err := src.pool.address(r.f)
		if err != nil {
			return Network{}, err
		}
		ref, _ := src.pool.resolve(r.f)
		if addr, err = poolValue(src.pool.field, ref, "address", a.Address, family); err != nil {
			return Network{}, err
		}
		prefixLen = a.Prefix
		if err := checkPrefix(src.pool.field, prefixLen, ipv4); err != nil {
			return Network{}, explain(err, "pool %s gave prefix %d: ", ref, prefixLen)
		}
	case src.inline != nil:
		rng := addressRange{start: (*string)(src.inline.Start), end: (*string)(src.inline.End), subnet: (*string)(src.inline.Subnet), step: src.inline.Step}
		a, subnetLen, err := rng.at(field+".ipAddress", r.f.Index)
		if err != nil {
			return Network{}, err
		}
		if a.Is4() != ipv4 {
			return Network{}, invalid(field+".ipAddress", "gives %s, not an IPv%d address; move it to networks.ipv%d", a, family, 10-family)
		}
		addr, prefixLen = a, subnetLen
		if src.netmask != nil {
			prefixLen = int(*src.netmask)
		}
		if prefixLen < 0 {
			return Network{}, invalid(field+".netmask", "is needed when ipAddress has no subnet; give the prefix length, such as %d", map[bool]int{true: 24, false: 64}[ipv4])
		}
		if err := checkPrefix(field+".netmask", prefixLen, ipv4); err != nil {
			return Network{}, err
		}
	default:
		return Network{}, invalid(field, "has no address; set ipAddressFromIPPool, fromPoolRef, fromPoolAnnotation or ipAddress (or use ipv%dDHCP)", family)
	}
	net.IPAddress, net.PrefixLen, net.Netmask = addr.String(), prefixLen, netmask(prefixLen, ipv4)
	return net, nil
}

// route is a template route of either family (routeOf4, routeOf6).
type route struct {
	field   string // where the route stands in the template: networks.ipv4[0].routes[1]
	network string
	prefix  int32
	gwText  *string
	gwPool  poolSource
	dns     []string
	dnsPool *string
}

// routesOf reads the routes of a network at field with of, the reader of their family.
func routesOf[R any](field string, routes []R, of func(field string, rt R) route) []route {
	out := make([]route, len(routes))
	for i, rt := range routes {
		out[i] = of(fmt.Sprintf("%s.routes[%d]", field, i), rt)
	}
	return out
}

func routeOf4(field string, rt infrav1.NetworkDataRoutev4) route {
	services := ptr.Deref(rt.Services, infrav1.NetworkDataServicev4{})
	return route{field, string(rt.Network), ptr.Deref(rt.Prefix, 0), (*string)(rt.Gateway.String),
		gatewayPool(field+".gateway", rt.Gateway.FromIPPool, rt.Gateway.FromPoolRef, rt.Gateway.FromPoolAnnotation),
		texts(services.DNS), services.DNSFromIPPool}
}

func routeOf6(field string, rt infrav1.NetworkDataRoutev6) route {
	services := ptr.Deref(rt.Services, infrav1.NetworkDataServicev6{})
	return route{field, string(rt.Network), ptr.Deref(rt.Prefix, 0), (*string)(rt.Gateway.String),
		gatewayPool(field+".gateway", rt.Gateway.FromIPPool, rt.Gateway.FromPoolRef, rt.Gateway.FromPoolAnnotation),
		texts(services.DNS), services.DNSFromIPPool}
}

// texts are addresses of the template as the strings the renderer parses.
func texts[S ~string](in []S) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = string(s)
	}
	return out
}

// routes renders a network's routes of one family.
func (r *networkRenderer) routes(routes []route, ipv4 bool) ([]Route, error) {
	out := make([]Route, 0, len(routes))
	for _, rt := range routes {
		o, err := r.route(rt, ipv4)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func (r *networkRenderer) route(rt route, ipv4 bool) (Route, error) {
	field := rt.field
	family := familyOf(ipv4)
	dest, err := parseAddr(field+".network", rt.network, family)
	if err != nil {
		return Route{}, err
	}
	prefixLen := int(rt.prefix)
	if err := checkPrefix(field+".prefix", prefixLen, ipv4); err != nil {
		return Route{}, err
	}
	var gw netip.Addr
	switch {
	case rt.gwPool.set():
		a, err := rt.gwPool.address(r.f)
		if err != nil {
			return Route{}, err
		}
		ref, _ := rt.gwPool.resolve(r.f)
		if a.Gateway == "" {
			return Route{}, invalid(rt.gwPool.field, "pool %s has no gateway for this host's address; add a gateway to the pool, or set gateway.string", ref)
		}
		if gw, err = poolValue(rt.gwPool.field, ref, "gateway", a.Gateway, family); err != nil {
			return Route{}, err
		}
	case rt.gwText != nil:
		if gw, err = parseAddr(field+".gateway.string", *rt.gwText, family); err != nil {
			return Route{}, err
		}
	default:
		return Route{}, invalid(field+".gateway", "is missing; set string, fromIPPool, fromPoolRef or fromPoolAnnotation")
	}
	services, err := r.services(field+".services", rt.dns, rt.dnsPool, family)
	if err != nil {
		return Route{}, err
	}
	return Route{
		Network:   dest.String(),
		Netmask:   netmask(prefixLen, ipv4),
		PrefixLen: prefixLen,
		Gateway:   gw.String(),
		Services:  services,
	}, nil
}

// services writes DNS servers: the listed ones, then the pool's. family 4 or 6 restricts them to
// that family (route services); 0 allows both (the document's services).
func (r *networkRenderer) services(field string, dns []string, pool *string, family int) ([]Service, error) {
	out := make([]Service, 0, len(dns))
	for i, d := range dns {
		a, err := parseAddr(fmt.Sprintf("%s.dns[%d]", field, i), d, family)
		if err != nil {
			return nil, err
		}
		out = append(out, Service{Type: ServiceDNS, Address: a.String()})
	}
	src := dnsPool(field, pool)
	if !src.set() {
		return out, nil
	}
	a, err := src.address(r.f)
	if err != nil {
		return nil, err
	}
	for _, d := range a.DNSServers {
		ref, _ := src.resolve(r.f)
		addr, err := poolValue(src.field, ref, "DNS server", d, family)
		if err != nil {
			return nil, err
		}
		out = append(out, Service{Type: ServiceDNS, Address: addr.String()})
	}
	return out, nil
}

// poolValue parses an address a pool gave; family 0 accepts both.
func poolValue(field string, ref PoolRef, what, value string, family int) (netip.Addr, error) {
	a, err := netip.ParseAddr(value)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, invalid(field, "pool %s gave %s %q, which is not an IP address; fix the pool's IPAddress", ref, what, value)
	}
	a = a.Unmap()
	if family == 4 && !a.Is4() || family == 6 && !a.Is6() {
		return netip.Addr{}, invalid(field, "pool %s gave %s %s, which is not an IPv%d address; use a pool of IPv%d addresses here", ref, what, a, family, family)
	}
	return a, nil
}
