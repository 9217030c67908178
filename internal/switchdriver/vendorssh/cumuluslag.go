package vendorssh

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Cumulus bonds are NVUE bond interfaces named as the fabric names the LAG (lag0123456789: a
// valid Linux interface name). An MLAG half carries "bond mlag id N" (CLAG), N from the LAG name
// alone (cumulusMLAGID), and a description "metalwire:<pair>:<domain>:<peer>" (":" is in no
// Kubernetes name) so that read back gives the pair and peer it was made for.

// cumulusMLAGID is a bond's "bond mlag id": 1 + the FNV-1a 32-bit hash of the LAG name, modulo
// 65535 (NVUE's ids are 1-65535), the same on both switches of the pair.
func cumulusMLAGID(lag string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(lag))
	return 1 + int(int64(h.Sum32())%65535)
}

// renderCumulusLAG writes one bond change (L the bond, BR the bridge domain):
//
//	ensure-lag: nv unset interface M bridge domain BR (each member: out of the bridge on its own) /
//	            nv set interface L bond member M (each member) / nv set interface L bond mode lacp
//	            (static: static) / nv set interface L bond lacp-rate fast (or slow) /
//	            nv set interface L bond mlag id N (or nv unset interface L bond mlag) /
//	            nv set interface L description metalwire[:PAIR:DOMAIN:PEER] /
//	            nv unset interface L bridge domain BR / the bond's access or trunk lines, as a
//	            port's, and nv set interface L link state down (portStatus down; else up); each
//	            member gets link state up; a member the bond no longer has: nv unset interface L
//	            bond member M and M back to the idle VLAN, up
//	remove-lag: nv unset interface L / nv set interface M bridge domain BR access IDLE and
//	            nv set interface M link state up (each member)
func renderCumulusLAG(ep fabric.Endpoint, have fabric.State, i int, c fabric.Change) ([]string, error) {
	br := cumulusBridge(ep)
	l := c.LAG
	cur, exists := have.LAGs[l.Name]
	access := func(port string, vlan int) string {
		return fmt.Sprintf("nv set interface %s bridge domain %s access %d", port, br, vlan)
	}
	if c.Op == fabric.OpRemoveLAG {
		if l.Port.VLAN < 1 {
			return nil, fmt.Errorf("change %d (%s): networkOS cumulus puts a bond's members back in an access VLAN; set the NetworkDevice's idleVLAN", i, c)
		}
		var lines []string
		if exists {
			lines = append(lines, "nv unset interface "+l.Name)
		}
		for _, m := range slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(l.Members), cur.Members...)))) {
			lines = append(lines, access(m, l.Port.VLAN), "nv set interface "+m+" "+linkState(false))
		}
		return lines, nil
	}
	if len(l.Members) == 0 {
		return nil, fmt.Errorf("change %d (%s): a bond needs at least one member", i, c)
	}
	if m := l.MLAG; m != nil && (!mlagLabel.MatchString(m.Pair) || !mlagLabel.MatchString(m.Peer) || m.Domain < 0) {
		return nil, fmt.Errorf("change %d (%s): MLAG pair %q, peer %q or domain %d is not a name or id networkOS cumulus can carry", i, c, m.Pair, m.Peer, m.Domain)
	}
	set := "nv set interface " + l.Name + " "
	members := slices.Sorted(slices.Values(l.Members))
	var lines []string
	for _, m := range members {
		lines = append(lines, fmt.Sprintf("nv unset interface %s bridge domain %s", m, br))
	}
	for _, m := range members {
		lines = append(lines, set+"bond member "+m, "nv set interface "+m+" "+linkState(false))
	}
	mode, rate := "static", "slow"
	if l.LACP {
		mode = "lacp"
		if l.FastRate {
			rate = "fast"
		}
	}
	lines = append(lines, set+"bond mode "+mode, set+"bond lacp-rate "+rate)
	desc := "metalwire"
	if m := l.MLAG; m != nil {
		lines = append(lines, set+"bond mlag id "+strconv.Itoa(cumulusMLAGID(l.Name)))
		desc += fmt.Sprintf(":%s:%d:%s", m.Pair, m.Domain, m.Peer)
	} else if exists && cur.MLAG != nil {
		lines = append(lines, "nv unset interface "+l.Name+" bond mlag")
	}
	lines = append(lines, set+"description "+desc, fmt.Sprintf("nv unset interface %s bridge domain %s", l.Name, br))
	p := l.Port
	if p.Mode == fabric.ModeTrunk {
		lines = append(lines, fmt.Sprintf("%sbridge domain %s vlan %s", set, br, joinInts(trunkVLANs(p))))
		if p.VLAN > 0 {
			lines = append(lines, fmt.Sprintf("%sbridge domain %s untagged %d", set, br, p.VLAN))
		}
	} else {
		if p.VLAN < 1 {
			return nil, fmt.Errorf("change %d (%s): an access bond needs a VLAN", i, c)
		}
		lines = append(lines, access(l.Name, p.VLAN))
	}
	lines = append(lines, set+linkState(p.Down))
	for _, m := range cur.Members {
		if !slices.Contains(l.Members, m) {
			lines = append(lines, "nv unset interface "+l.Name+" bond member "+m, access(m, max(ep.IdleVLAN, 1)), "nv set interface "+m+" "+linkState(false))
		}
	}
	return lines, nil
}

// nvueBond is an interface's "bond" in "nv config show -o json".
type nvueBond struct {
	Member   map[string]any `json:"member"`
	Mode     string         `json:"mode"`
	LACPRate string         `json:"lacp-rate"`
	MLAG     *struct {
		ID flexInt `json:"id"`
	} `json:"mlag"`
}

// lag reads a bond back: its members, mode (NVUE's default is lacp), rate, and MLAG half when it
// has the id metalwire gives it and metalwire's description.
func (b nvueBond) lag(name, description string, port fabric.Port) fabric.LAG {
	l := fabric.LAG{Name: name, Members: slices.Sorted(maps.Keys(b.Member)), Port: port,
		LACP: b.Mode != "static"}
	l.FastRate = l.LACP && b.LACPRate == "fast"
	if f := strings.Split(description, ":"); b.MLAG != nil && int(b.MLAG.ID) == cumulusMLAGID(name) && len(f) == 4 && f[0] == "metalwire" {
		if d, err := strconv.Atoi(f[2]); err == nil {
			l.MLAG = &fabric.MLAG{Pair: f[1], Domain: d, Peer: f[3]}
		}
	}
	return l
}
