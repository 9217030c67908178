package vendorssh

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// EOS bonds are port-channels. metalwire knows its own by their description, "metalwire <LAG
// name>" (with " mlag <pair> domain <id> peer <switch>" for an MLAG half), so a bond is found
// again whatever its number. A new bond takes Port-Channel<N>, N the port number of its lowest
// member (Ethernet5 and Ethernet7: Port-Channel5; Ethernet49/1: 49): a port is in one bond
// only, so two bonds never pick the same number. The MLAG id, which must be the same on both
// switches of the pair, comes from the LAG name alone (the fabric gives both halves the same
// name): eosMLAGID.

const eosMaxChannel = 2000

// eosMLAGID is the "mlag N" of a bond: 1 + the FNV-1a 32-bit hash of the LAG name, modulo 2000
// (EOS's mlag ids are 1-2000). Two bonds of one switch whose names land on the same id: the
// switch refuses the second "mlag" line and the batch fails with its message.
func eosMLAGID(lag string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(lag))
	return 1 + int(h.Sum32()%eosMaxChannel)
}

// mlagLabel matches the pair and peer names written into a description (Kubernetes names).
var mlagLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9.\-]{0,61}[a-z0-9])?$`)

// eosDescription is the port-channel's description line's text.
func eosDescription(l fabric.LAG) string {
	d := "metalwire " + l.Name
	if l.MLAG != nil {
		d += fmt.Sprintf(" mlag %s domain %d peer %s", l.MLAG.Pair, l.MLAG.Domain, l.MLAG.Peer)
	}
	return d
}

// eosChannel is the port-channel number a new bond takes: its lowest member's port number.
func eosChannel(members []string) (int, error) {
	best := 0
	for _, m := range members {
		digits := strings.TrimLeftFunc(m, func(r rune) bool { return r < '0' || r > '9' })
		end := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' })
		if end >= 0 {
			digits = digits[:end]
		}
		n, err := strconv.Atoi(digits)
		if err != nil || n < 1 || n > eosMaxChannel {
			return 0, fmt.Errorf("member %q has no port number in 1-%d to number the port-channel after", m, eosMaxChannel)
		}
		if best == 0 || n < best {
			best = n
		}
	}
	return best, nil
}

// idleLines put a port back as an idle access port of vlan, out of any channel.
func idleLines(vlan int) []string {
	return []string{"no channel-group", "switchport mode access", fmt.Sprintf("switchport access vlan %d", vlan),
		"no switchport trunk allowed vlan", "no switchport trunk native vlan"}
}

// renderEOSLAG writes one bond change:
//
//	ensure-lag: interface Port-ChannelN / description metalwire L [mlag P domain D peer S] /
//	            the bond's VLAN lines (as an access or trunk port) / mlag ID (or no mlag) / exit,
//	            interface MEMBERS / channel-group N mode active (static: mode on) /
//	            lacp timer fast (or normal) / exit, and each member the bond no longer has back
//	            to the idle VLAN
//	remove-lag: interface MEMBERS / no channel-group / switchport mode access /
//	            switchport access vlan IDLE / no switchport trunk allowed vlan /
//	            no switchport trunk native vlan / exit, then no interface Port-ChannelN
func renderEOSLAG(ep fabric.Endpoint, have fabric.State, i int, c fabric.Change) ([]string, error) {
	l := c.LAG
	cur, exists := have.LAGs[l.Name]
	if c.Op == fabric.OpRemoveLAG {
		if l.Port.VLAN < 1 {
			return nil, fmt.Errorf("change %d (%s): networkOS eos puts a bond's members back in an access VLAN; set the NetworkDevice's idleVLAN", i, c)
		}
		members := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(l.Members), cur.Members...))))
		lines := portLines(members, idleLines(l.Port.VLAN))
		if exists {
			lines = append(lines, "no interface "+cur.Port.Name)
		}
		return lines, nil
	}
	if len(l.Members) == 0 {
		return nil, fmt.Errorf("change %d (%s): a bond needs at least one member", i, c)
	}
	if m := l.MLAG; m != nil && (!mlagLabel.MatchString(m.Pair) || !mlagLabel.MatchString(m.Peer) || m.Domain < 0) {
		return nil, fmt.Errorf("change %d (%s): MLAG pair %q, peer %q or domain %d is not a name or id eos can carry", i, c, m.Pair, m.Peer, m.Domain)
	}
	iface := cur.Port.Name
	if !exists {
		n, err := eosChannel(l.Members)
		if err != nil {
			return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
		}
		iface = fmt.Sprintf("Port-Channel%d", n)
	}
	num := strings.TrimPrefix(iface, "Port-Channel")
	lines := []string{"interface " + iface, "description " + eosDescription(l)}
	p := l.Port
	if p.Mode == fabric.ModeTrunk {
		native := "no switchport trunk native vlan"
		if p.VLAN > 0 {
			native = fmt.Sprintf("switchport trunk native vlan %d", p.VLAN)
		}
		lines = append(lines, "switchport mode trunk", "switchport trunk allowed vlan "+joinInts(trunkVLANs(p)), native)
	} else {
		if p.VLAN < 1 {
			return nil, fmt.Errorf("change %d (%s): an access bond needs a VLAN", i, c)
		}
		lines = append(lines, idleLines(p.VLAN)[1:]...)
	}
	if l.MLAG != nil {
		lines = append(lines, fmt.Sprintf("mlag %d", eosMLAGID(l.Name)))
	} else {
		lines = append(lines, "no mlag")
	}
	lines = append(lines, "exit")
	mode, timer := "on", "normal"
	if l.LACP {
		mode = "active"
		if l.FastRate {
			timer = "fast"
		}
	}
	lines = append(lines, portLines(l.Members, []string{fmt.Sprintf("channel-group %s mode %s", num, mode), "lacp timer " + timer})...)
	var gone []string
	for _, m := range cur.Members {
		if !slices.Contains(l.Members, m) {
			gone = append(gone, m)
		}
	}
	if len(gone) > 0 {
		idle := max(ep.IdleVLAN, 1)
		lines = append(lines, portLines(gone, idleLines(idle))...)
	}
	return lines, nil
}

// portLines configures ports (named in ranges where they run on) with the same body.
func portLines(ports, body []string) []string {
	var lines []string
	for _, r := range portRanges(ports) {
		lines = append(append(append(lines, "interface "+r), body...), "exit")
	}
	return lines
}

// parseEOSLAGs reads "show running-config | json" for the bonds named in names: a port-channel
// with metalwire's description, its members ("channel-group N mode M"), their LACP timer and its
// "mlag N". ports are the switchports read; a bond's Port is its port-channel's (named as the
// switch names it). members are the ports in any of the named bonds.
func parseEOSLAGs(out string, ports map[string]fabric.Port, names []string) (map[string]fabric.LAG, map[string]bool, error) {
	var rc struct {
		Cmds map[string]struct {
			Cmds map[string]json.RawMessage `json:"cmds"`
		} `json:"cmds"`
	}
	if err := json.Unmarshal([]byte(out), &rc); err != nil {
		return nil, nil, err
	}
	type channel struct {
		lag    fabric.LAG
		fast   bool
		anyLow bool
	}
	byNum := map[string]*channel{}
	for section, body := range rc.Cmds {
		iface, ok := strings.CutPrefix(section, "interface Port-Channel")
		if !ok {
			continue
		}
		var desc []string
		mlag := 0
		for line := range body.Cmds {
			if d, ok := strings.CutPrefix(line, "description metalwire "); ok {
				desc = strings.Fields(d)
			}
			if id, ok := strings.CutPrefix(line, "mlag "); ok {
				mlag, _ = strconv.Atoi(id)
			}
		}
		if len(desc) == 0 || !slices.Contains(names, desc[0]) {
			continue
		}
		name := "Port-Channel" + iface
		l := fabric.LAG{Name: desc[0], Port: ports[name]}
		l.Port.Name = name
		if len(desc) == 7 && desc[1] == "mlag" && desc[3] == "domain" && desc[5] == "peer" && mlag == eosMLAGID(desc[0]) {
			if d, err := strconv.Atoi(desc[4]); err == nil {
				l.MLAG = &fabric.MLAG{Pair: desc[2], Domain: d, Peer: desc[6]}
			}
		}
		byNum[iface] = &channel{lag: l}
	}
	members := map[string]bool{}
	for section, body := range rc.Cmds {
		port, ok := strings.CutPrefix(section, "interface ")
		if !ok {
			continue
		}
		var ch *channel
		fast := false
		for line := range body.Cmds {
			if f := strings.Fields(line); len(f) == 4 && f[0] == "channel-group" && f[2] == "mode" {
				if ch = byNum[f[1]]; ch != nil {
					ch.lag.LACP = f[3] != "on"
				}
			}
			fast = fast || line == "lacp timer fast"
		}
		if ch == nil {
			continue
		}
		members[port] = true
		ch.lag.Members = append(ch.lag.Members, port)
		ch.fast = ch.fast || fast
		ch.anyLow = ch.anyLow || !fast
	}
	lags := map[string]fabric.LAG{}
	for _, ch := range byNum {
		slices.Sort(ch.lag.Members)
		ch.lag.FastRate = ch.lag.LACP && ch.fast && !ch.anyLow
		lags[ch.lag.Name] = ch.lag
	}
	return lags, members, nil
}
