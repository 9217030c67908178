package openconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/openconfig/gnmi/proto/gnmi"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Bonds are aggregate interfaces (openconfig-if-aggregate) with openconfig-lacp settings. Their
// names are the vendor's (Port-Channel5, PortChannel5, ae5, lag5), so a bond's aggregate is the
// one its name numbers within the switch's declared range, with the declared prefix
// (spec.switches[].aggregates, fabric.Aggregates.AggregateOf): found again by the name alone, and
// an aggregate outside the range is never read as a bond nor touched. An aggregate of the range
// that carries none of the bond's members is another bond's or the operator's, and is refused.
//
// The paths of a bond with aggregate A and member M:
//
//	/interfaces/interface[name=A]/config                          name, type ieee8023adLag, enabled
//	/interfaces/interface[name=A]/aggregation/config              lag-type LACP or STATIC
//	/interfaces/interface[name=A]/aggregation/switched-vlan/config the bond's VLANs (as a port's)
//	/lacp/interfaces/interface[name=A]/config                     name, interval FAST or SLOW,
//	                                                              lacp-mode ACTIVE (LACP bonds)
//	/interfaces/interface[name=M]/ethernet/config/aggregate-id    A
//
// No multi-chassis LAG: OpenConfig has no vendor-neutral model of one.

// lacpPath is openconfig-lacp's top container.
func lacpPath() *gnmi.Path { return &gnmi.Path{Elem: []*gnmi.PathElem{{Name: "lacp"}}} }

func ifacePath(name string, elems ...string) *gnmi.Path {
	p := &gnmi.Path{Elem: []*gnmi.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": name}}}}
	for _, e := range elems {
		p.Elem = append(p.Elem, &gnmi.PathElem{Name: e})
	}
	return p
}

func lacpInterfacePath(name string, elems ...string) *gnmi.Path {
	p := &gnmi.Path{Elem: []*gnmi.PathElem{{Name: "lacp"}, {Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": name}}}}
	for _, e := range elems {
		p.Elem = append(p.Elem, &gnmi.PathElem{Name: e})
	}
	return p
}

// lacpConfig is an aggregate's /lacp/interfaces/interface/config.
type lacpConfig struct {
	Interval string `json:"interval"`
	Mode     string `json:"lacp-mode"`
}

// parseLACP reads /lacp: each aggregate's LACP settings by its name.
func parseLACP(raw []byte) (map[string]lacpConfig, error) {
	var lacp struct {
		Interfaces struct {
			Interface []struct {
				Name   string     `json:"name"`
				Config lacpConfig `json:"config"`
			} `json:"interface"`
		} `json:"interfaces"`
	}
	if err := decode(raw, "lacp", &lacp); err != nil {
		return nil, fmt.Errorf("/lacp: %w", err)
	}
	out := map[string]lacpConfig{}
	for _, i := range lacp.Interfaces.Interface {
		out[i.Name] = i.Config
	}
	return out, nil
}

// aggregates is the endpoint's declared range, or why bonds cannot be named.
func aggregates(ep fabric.Endpoint) (fabric.Aggregates, error) {
	if err := fabric.CheckAggregates(ep.Switch, NetworkOS, ep.Aggregates); err != nil {
		return fabric.Aggregates{}, err
	}
	return *ep.Aggregates, nil
}

// members lists the interfaces whose aggregate-id is agg, sorted.
func (t tree) members(agg string) []string {
	var out []string
	for n, i := range t.ifaces {
		if i.Ethernet.Config.AggregateID == agg {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// bondsOf reads the bonds among names (names that are no interface): the aggregate each numbers
// in the declared range, when it exists as an aggregate. Without a declared range no bond is
// read: metalwire made none.
func (t tree) bondsOf(ep fabric.Endpoint, names []string) (map[string]fabric.LAG, error) {
	agg, err := aggregates(ep)
	if err != nil {
		return nil, nil //nolint:nilerr // no range: no bond of metalwire's to read; a bond asked is refused when sent
	}
	out := map[string]fabric.LAG{}
	for _, n := range names {
		if _, isIface := t.ifaces[n]; isIface {
			continue
		}
		a, _ := agg.AggregateOf(n)
		i, ok := t.ifaces[a]
		if !ok || !i.isAggregate() {
			continue
		}
		p, err := i.port()
		if err != nil {
			return nil, err
		}
		p.Name = n
		l := fabric.LAG{Name: n, Members: t.members(a), Port: p}
		if i.Aggregation != nil {
			l.LACP = i.Aggregation.Config.LAGType == "LACP"
		}
		l.FastRate = l.LACP && t.lacp[a].Interval == "FAST"
		out[n] = l
	}
	return out, nil
}

// lag adds one bond change to the Set (t and have: the switch before the batch). A member
// another bond of the batch takes (b.joining) is not made an idle port.
func (b *setBuilder) lag(ep fabric.Endpoint, t tree, have fabric.State, i int, c fabric.Change) error {
	l := c.LAG
	fail := func(format string, a ...any) error {
		return fmt.Errorf("change %d (%s): %s", i, c, fmt.Sprintf(format, a...))
	}
	if c.Op == fabric.OpEnsureLAG && l.MLAG != nil {
		return fmt.Errorf("change %d (%s): %w (networkOS %s renders no multi-chassis LAG: OpenConfig models none)", i, c, fabric.ErrUnsupported, NetworkOS)
	}
	agg, err := aggregates(ep)
	if err != nil {
		return fail("%v", err)
	}
	a, _ := agg.AggregateOf(l.Name)
	cur, exists := have.LAGs[l.Name]
	if c.Op == fabric.OpRemoveLAG {
		if l.Port.VLAN < 1 {
			return fail("networkOS %s puts a bond's members back in an access VLAN; set the NetworkDevice's idleVLAN", NetworkOS)
		}
		if exists {
			b.req.Delete = append(b.req.Delete, ifacePath(a))
			if _, ok := t.lacp[a]; ok {
				b.req.Delete = append(b.req.Delete, lacpInterfacePath(a))
			}
		}
		for _, m := range slices.Compact(slices.Sorted(slices.Values(slices.Concat(l.Members, cur.Members)))) {
			b.leave(t, m, l.Port.VLAN)
		}
		return nil
	}
	if len(l.Members) == 0 {
		return fail("a bond needs at least one member")
	}
	if other, ok := b.taken[a]; ok && other != l.Name {
		return fail("%s", agg.Shared(ep.Switch, a, other, l.Name))
	}
	b.taken[a] = l.Name
	if i, ok := t.ifaces[a]; ok && !i.isAggregate() {
		return fail("interface %s, the aggregate this bond's name numbers within spec.switches[%s].aggregates, exists and is no aggregate: check aggregates.prefix", a, ep.Switch)
	}
	if exists && len(cur.Members) > 0 && !slices.ContainsFunc(cur.Members, func(m string) bool { return slices.Contains(l.Members, m) }) {
		return fail("%s, the aggregate this bond's name numbers within spec.switches[%s].aggregates %d-%d, carries %s and none of the bond's members: it is another bond's whose name lands on the same number, or one made by hand inside the range; nothing was changed: free %s, or change the range (which renumbers every bond of the switch)",
			a, ep.Switch, agg.First, agg.Last, strings.Join(cur.Members, ", "), a)
	}
	for _, m := range l.Members {
		if id := t.ifaces[m].Ethernet.Config.AggregateID; id != "" && id != a && !agg.Owns(id) {
			return fail("member %s is in aggregate %s, outside spec.switches[%s].aggregates %d-%d: metalwire takes no port from an aggregate it does not own; take %s out of %s first",
				m, id, ep.Switch, agg.First, agg.Last, m, id)
		}
	}
	lagType := "STATIC"
	if l.LACP {
		lagType = "LACP"
	}
	b.req.Update = append(b.req.Update,
		&gnmi.Update{Path: ifacePath(a, "config"), Val: jsonVal(map[string]any{"name": a, "type": "iana-if-type:ieee8023adLag", "enabled": !l.Port.Down})},
		&gnmi.Update{Path: ifacePath(a, "aggregation", "config"), Val: jsonVal(map[string]any{"lag-type": lagType})})
	b.req.Replace = append(b.req.Replace, &gnmi.Update{Path: ifacePath(a, "aggregation", "switched-vlan", "config"), Val: jsonVal(switchedConfig(l.Port))})
	if l.LACP {
		interval := "SLOW"
		if l.FastRate {
			interval = "FAST"
		}
		b.req.Replace = append(b.req.Replace, &gnmi.Update{Path: lacpInterfacePath(a, "config"), Val: jsonVal(map[string]any{"name": a, "interval": interval, "lacp-mode": "ACTIVE"})})
	} else if _, ok := t.lacp[a]; ok {
		b.req.Delete = append(b.req.Delete, lacpInterfacePath(a))
	}
	for _, m := range cur.Members {
		if !slices.Contains(l.Members, m) {
			b.leave(t, m, max(ep.IdleVLAN, 1))
		}
	}
	for _, m := range l.Members {
		if t.ifaces[m].Ethernet.SwitchedVLAN.Config != nil {
			b.req.Delete = append(b.req.Delete, ifacePath(m, "ethernet", "switched-vlan"))
		}
		b.req.Update = append(b.req.Update,
			&gnmi.Update{Path: ifacePath(m, "ethernet", "config"), Val: jsonVal(map[string]any{"aggregate-id": a})},
			&gnmi.Update{Path: ifacePath(m, "config"), Val: jsonVal(map[string]any{"enabled": true})})
	}
	return nil
}

// leave takes a port out of its aggregate, as an idle access port of vlan, up; unless the batch
// puts it in another bond.
func (b *setBuilder) leave(t tree, port string, vlan int) {
	if b.joining[port] {
		return
	}
	if t.ifaces[port].Ethernet.Config.AggregateID != "" {
		b.req.Delete = append(b.req.Delete, ifacePath(port, "ethernet", "config", "aggregate-id"))
	}
	b.req.Replace = append(b.req.Replace, &gnmi.Update{Path: switchedVLANPath(port), Val: jsonVal(map[string]any{"interface-mode": "ACCESS", "access-vlan": vlan})})
	b.req.Update = append(b.req.Update, &gnmi.Update{Path: ifacePath(port, "config"), Val: jsonVal(map[string]any{"enabled": true})})
}

// switchedConfig is a switched-vlan config for a port's VLANs.
func switchedConfig(p fabric.Port) map[string]any {
	if p.Mode != fabric.ModeTrunk {
		return map[string]any{"interface-mode": "ACCESS", "access-vlan": p.VLAN}
	}
	v := map[string]any{"interface-mode": "TRUNK", "trunk-vlans": p.Trunk}
	if p.VLAN > 0 {
		v["native-vlan"] = p.VLAN
	}
	return v
}
