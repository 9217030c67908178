package vendorssh

import (
	"fmt"
	"slices"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// SONiC bonds are port-channels, which SONiC names PortChannel0 to PortChannel9999 and labels in
// no way metalwire could read back. So a bond's port-channel is the one its name numbers within
// the switch's declared range (spec.switches[].aggregates, fabric.Aggregates.AggregateOf): found
// again every pass by the name alone, and a port-channel outside the range is never read as a
// bond nor touched. A port-channel of the range that carries none of a bond's members is another
// bond's (two names on one number) or the operator's: the bond is refused, naming it, rather
// than take it.
//
// SONiC's port-channels run LACP (teamd) only: a static bond is refused. A bond's MLAG half is
// an MCLAG member of the switch's declared domain (sonicmclag.go).

// sonicChannelPrefix is the name SONiC gives every port-channel.
const sonicChannelPrefix = "PortChannel"

// sonicAggregates is the endpoint's range with SONiC's prefix, or why bonds cannot be numbered.
func sonicAggregates(ep fabric.Endpoint) (fabric.Aggregates, error) {
	if ep.Aggregates == nil {
		return fabric.Aggregates{}, fabric.CheckAggregates(ep.Switch, "sonic", nil)
	}
	a := *ep.Aggregates
	a.Prefix = sonicChannelPrefix
	if err := fabric.CheckAggregates(ep.Switch, "sonic", &a); err != nil {
		return a, err
	}
	if a.Last > 9999 {
		return a, fmt.Errorf("spec.switches[%s].aggregates goes to %d, past PortChannel9999, SONiC's highest: lower aggregates.last", ep.Switch, a.Last)
	}
	return a, nil
}

// lag writes one bond change (PC the bond's port-channel, IDLE the idle VLAN):
//
//	ensure-lag: sudo config portchannel add PC --fast-rate true|false (when PC is missing; a
//	            PC of another rate is first emptied and deleted, as on remove-lag) /
//	            sudo config portchannel member del PC M, M back to an idle access port (each member
//	            the bond no longer has) /
//	            sudo config vlan member del V M (each membership a new member has) /
//	            sudo config portchannel member add PC M / sudo config interface startup M (a
//	            member found shut) /
//	            PC's MCLAG membership (an MLAG half: sonicRender.mclag) /
//	            PC's VLAN memberships as a port's / sudo config interface shutdown PC (portStatus
//	            down) or startup PC (found shut)
//	remove-lag: sudo config mclag member del DOMAIN PC (an MLAG half) /
//	            sudo config vlan member del V PC (each) / sudo config portchannel member del PC M
//	            (each) / sudo config portchannel del PC / each member back to an idle access port:
//	            sudo config vlan member add -u IDLE M, sudo config interface startup M (found shut)
func (r *sonicRender) lag(ep fabric.Endpoint, i int, c fabric.Change) error {
	l := c.LAG
	fail := func(format string, a ...any) error {
		return fmt.Errorf("change %d (%s): %s", i, c, fmt.Sprintf(format, a...))
	}
	if c.Op == fabric.OpEnsureLAG && l.MLAG != nil {
		if err := checkMCLAG(ep, l.MLAG); err != nil {
			return fail("%v", err)
		}
	}
	if c.Op == fabric.OpEnsureLAG && !l.LACP {
		return fmt.Errorf("change %d (%s): %w (networkOS sonic's port-channels run LACP only: set the network's lag.mode lacp)", i, c, fabric.ErrUnsupported)
	}
	agg, err := sonicAggregates(ep)
	if err != nil {
		return fail("%v", err)
	}
	pc, _ := agg.AggregateOf(l.Name)
	cur, exists := r.have.LAGs[l.Name]
	if c.Op == fabric.OpRemoveLAG {
		if l.Port.VLAN < 1 {
			return fail("networkOS sonic puts a bond's members back in an access VLAN; set the NetworkDevice's idleVLAN")
		}
		if exists {
			r.dropChannel(pc, cur)
		}
		for _, m := range slices.Compact(slices.Sorted(slices.Values(slices.Concat(l.Members, cur.Members)))) {
			was := r.have.Ports[m]
			if slices.Contains(cur.Members, m) {
				was.Mode, was.VLAN, was.Trunk = "", 0, nil // a member carries no VLAN of its own
			}
			r.idle(m, was, l.Port.VLAN)
		}
		return nil
	}
	if len(l.Members) == 0 {
		return fail("a bond needs at least one member")
	}
	if other, ok := r.taken[pc]; ok && other != l.Name {
		return fail("%s", agg.Shared(ep.Switch, pc, other, l.Name))
	}
	r.taken[pc] = l.Name
	if exists && len(cur.Members) > 0 && !slices.ContainsFunc(cur.Members, func(m string) bool { return slices.Contains(l.Members, m) }) {
		return fail("%s, the port-channel this bond's name numbers within spec.switches[%s].aggregates %d-%d, carries %s and none of the bond's members: it is another bond's whose name lands on the same number, or one made by hand inside the range; nothing was changed: free %s, or change the range (which renumbers every bond of the switch)",
			pc, ep.Switch, agg.First, agg.Last, strings.Join(cur.Members, ", "), pc)
	}
	if exists && cur.FastRate != l.FastRate {
		// The rate is fixed when the port-channel is made: it is made again.
		r.dropChannel(pc, cur)
		exists, cur = false, fabric.LAG{}
	}
	if !exists {
		r.add(fmt.Sprintf("sudo config portchannel add %s --fast-rate %t", pc, l.FastRate))
	}
	for _, m := range cur.Members {
		if !slices.Contains(l.Members, m) {
			r.add(fmt.Sprintf("sudo config portchannel member del %s %s", pc, m))
			was := r.have.Ports[m]
			was.Mode, was.VLAN, was.Trunk = "", 0, nil
			r.idle(m, was, max(ep.IdleVLAN, 1))
		}
	}
	for _, m := range slices.Sorted(slices.Values(l.Members)) {
		if slices.Contains(cur.Members, m) {
			continue
		}
		was := r.have.Ports[m]
		r.member(m, was, nil, nil)
		r.add(fmt.Sprintf("sudo config portchannel member add %s %s", pc, m))
		r.state(m, was, false)
	}
	r.mclag(pc, cur.MLAG, l.MLAG, ep)
	untagged, tagged := sonicVLANs(l.Port)
	r.member(pc, cur.Port, untagged, tagged)
	r.state(pc, cur.Port, l.Port.Down)
	return nil
}

// dropChannel empties and deletes a port-channel: its MCLAG membership, its VLAN memberships,
// then its members (SONiC refuses to delete a port-channel that has any).
func (r *sonicRender) dropChannel(pc string, cur fabric.LAG) {
	if cur.MLAG != nil {
		r.add(fmt.Sprintf("sudo config mclag member del %d %s", cur.MLAG.Domain, pc))
	}
	r.member(pc, cur.Port, nil, nil)
	for _, m := range cur.Members {
		r.add(fmt.Sprintf("sudo config portchannel member del %s %s", pc, m))
	}
	r.add("sudo config portchannel del " + pc)
}

// sonicAdmin is a PORT or PORTCHANNEL row's administrative state (and a port-channel's LACP
// rate).
type sonicAdmin struct {
	AdminStatus string `json:"admin_status"`
	FastRate    string `json:"fast_rate"`
}

// parseSONiCLAGs reads the bonds asked for (names that are no port) from the PORTCHANNEL and
// PORTCHANNEL_MEMBER tables: the port-channel each name numbers in the declared range, when it
// exists, with its members, LACP rate, administrative state, VLAN memberships (memberOf) and
// MLAG half (mclags, by port-channel).
// Without a declared range no bond is read: metalwire made none.
func parseSONiCLAGs(ep fabric.Endpoint, names []string, ports map[string]sonicAdmin, channelOut, memberOut string,
	memberOf func(string) fabric.Port, mclags map[string]*fabric.MLAG) (map[string]fabric.LAG, error) {
	var channels map[string]sonicAdmin
	if err := sonicJSON(channelOut, &channels); err != nil {
		return nil, fmt.Errorf("sonic-cfggen PORTCHANNEL: %w", err)
	}
	var memberRows map[string]any
	if err := sonicJSON(memberOut, &memberRows); err != nil {
		return nil, fmt.Errorf("sonic-cfggen PORTCHANNEL_MEMBER: %w", err)
	}
	members := map[string][]string{}
	for key := range memberRows {
		pc, port, ok := strings.Cut(key, "|")
		if !ok {
			return nil, fmt.Errorf("sonic-cfggen PORTCHANNEL_MEMBER: key %q is not <port-channel>|<port>", key)
		}
		members[pc] = append(members[pc], port)
	}
	agg, err := sonicAggregates(ep)
	if err != nil {
		return nil, nil //nolint:nilerr // no range: no bond of metalwire's to read; a bond asked is refused when rendered
	}
	out := map[string]fabric.LAG{}
	for _, n := range names {
		if _, isPort := ports[n]; isPort {
			continue
		}
		pc, _ := agg.AggregateOf(n)
		row, ok := channels[pc]
		if !ok {
			continue
		}
		p := memberOf(pc)
		p.Name = n
		p.Down = row.AdminStatus != "up"
		out[n] = fabric.LAG{Name: n, Members: slices.Sorted(slices.Values(members[pc])), LACP: true,
			FastRate: row.FastRate == "true", Port: p, MLAG: mclags[pc]}
	}
	return out, nil
}
