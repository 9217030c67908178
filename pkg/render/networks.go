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
	out := make([]Network, 0, len(n.IPv4)+len(n.IPv6)+len(n.IPv4DHCP)+len(n.IPv6DHCP)+len(n.IPv6SLAAC))
	for i := range n.IPv4 {
		nw := &n.IPv4[i]
		field := fmt.Sprintf("%s.networks.ipv4[%d]", r.root, i)
		src := staticSource{staticPool(field, nw.IPAddressFromIPPool, nw.FromPoolRef, nw.FromPoolAnnotation), nw.IPAddress, nw.Netmask}
		net, err := r.static(field, NetworkIPv4, nw.ID, string(nw.Link), src)
		if err != nil {
			return nil, err
		}
		if net.Routes, err = r.routes(routesOf(field, nw.Routes, routeOf4), true); err != nil {
			return nil, err
		}
		out = append(out, net)
	}
	for i := range n.IPv6 {
		nw := &n.IPv6[i]
		field := fmt.Sprintf("%s.networks.ipv6[%d]", r.root, i)
		src := staticSource{staticPool(field, nw.IPAddressFromIPPool, nw.FromPoolRef, nw.FromPoolAnnotation), nw.IPAddress, nw.Netmask}
		net, err := r.static(field, NetworkIPv6, nw.ID, string(nw.Link), src)
		if err != nil {
			return nil, err
		}
		if net.Routes, err = r.routes(routesOf(field, nw.Routes, routeOf6), false); err != nil {
			return nil, err
		}
		out = append(out, net)
	}
	for i := range n.IPv4DHCP {
		nw := &n.IPv4DHCP[i]
		field := fmt.Sprintf("%s.networks.ipv4DHCP[%d]", r.root, i)
		net, err := r.dynamic(field, NetworkIPv4DHCP, nw.ID, string(nw.Link))
		if err != nil {
			return nil, err
		}
		if net.Routes, err = r.routes(routesOf(field, nw.Routes, routeOf4), true); err != nil {
			return nil, err
		}
		out = append(out, net)
	}
	for _, list := range []struct {
		name, typ string
		items     []infrav1.NetworkDataIPv6DHCP
	}{{"ipv6DHCP", NetworkIPv6DHCP, n.IPv6DHCP}, {"ipv6SLAAC", NetworkIPv6SLAAC, n.IPv6SLAAC}} {
		for i := range list.items {
			nw := &list.items[i]
			field := fmt.Sprintf("%s.networks.%s[%d]", r.root, list.name, i)
			net, err := r.dynamic(field, list.typ, nw.ID, string(nw.Link))
			if err != nil {
				return nil, err
			}
			if net.Routes, err = r.routes(routesOf(field, nw.Routes, routeOf6), false); err != nil {
				return nil, err
			}
			out = append(out, net)
		}
	}
	return out, nil
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
