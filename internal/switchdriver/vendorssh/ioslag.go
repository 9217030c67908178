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

// EOS and NX-OS bonds are port-channels. metalwire knows its own by their description,
// "metalwire <LAG name>" (with " mlag <pair> domain <id> peer <switch>" for an MLAG half), so a
// bond is found again whatever its number. A new bond takes the port-channel numbered after its
// lowest member's port (EOS Ethernet5 and Ethernet7: Port-Channel5, Ethernet49/1: 49; NX-OS
// Ethernet1/5: port-channel5, the slot left out): a port is in one bond only, so two bonds of
// one switch (one line card) never pick the same number. The multi-chassis id (EOS "mlag N",
// NX-OS "vpc N"), which must be the same on both switches of the pair, comes from the LAG name
// alone, which the fabric gives both halves: mlagID.

// lagDialect is what EOS and NX-OS write differently for bonds.
type lagDialect struct {
	os string
	// prefix names the port-channel interfaces ("Port-Channel", "port-channel").
	prefix string
	// max is the highest port-channel number and multi-chassis id.
	max int
	// mlag is the port-channel's multi-chassis line ("mlag", "vpc").
	mlag string
	// rate is a member's LACP rate line ("lacp timer", "lacp rate"), followed by fast or normal.
	rate string
	// slot: member names carry a slot before the port (NX-OS Ethernet1/5).
	slot bool
	// l2 adds "switchport" first (NX-OS).
	l2 bool
	// os10: OS10's VLAN lines (a trunk's untagged VLAN is its access VLAN; "switchport trunk
	// allowed vlan" adds, so what the bond had and should not is taken away first). mlag is
	// empty: OS10's VLT is not rendered, an MLAG half is refused.
	os10 bool
}

var (
	eosLAG  = lagDialect{os: "eos", prefix: "Port-Channel", max: 2000, mlag: "mlag", rate: "lacp timer"}
	nxosLAG = lagDialect{os: "nxos", prefix: "port-channel", max: 4096, mlag: "vpc", rate: "lacp rate", slot: true, l2: true}
	os10LAG = lagDialect{os: "dellos10", prefix: "port-channel", max: 128, rate: "lacp rate", slot: true, os10: true}
)

// mlagID is a bond's multi-chassis id: 1 + the FNV-1a 32-bit hash of the LAG name, modulo the
// OS's highest id (EOS mlag 1-2000, NX-OS vpc 1-4096). Two bonds of one switch whose names land
// on the same id: the switch refuses the second line and the batch fails with its message.
func (d lagDialect) mlagID(lag string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(lag))
	return 1 + int(int64(h.Sum32())%int64(d.max))
}

// mlagLabel matches the pair and peer names written into a description (Kubernetes names).
var mlagLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9.\-]{0,61}[a-z0-9])?$`)

// lagDescription is the port-channel's description line's text.
func lagDescription(l fabric.LAG) string {
	d := "metalwire " + l.Name
	if l.MLAG != nil {
		d += fmt.Sprintf(" mlag %s domain %d peer %s", l.MLAG.Pair, l.MLAG.Domain, l.MLAG.Peer)
	}
	return d
}

// channel is the port-channel number a new bond takes: its lowest member's port number.
func (d lagDialect) channel(members []string) (int, error) {
	best := 0
	for _, m := range members {
		nums := strings.FieldsFunc(m, func(r rune) bool { return r < '0' || r > '9' })
		if d.slot && len(nums) > 1 {
			nums = nums[1:]
		}
		if d.os10 && len(nums) > 1 {
			nums = nums[1:] // ethernet1/1/5: unit, slot, port
		}
		n := 0
		if len(nums) > 0 {
			n, _ = strconv.Atoi(nums[0])
		}
		if n < 1 || n > d.max {
			return 0, fmt.Errorf("member %q has no port number in 1-%d to number the port-channel after", m, d.max)
		}
		if best == 0 || n < best {
			best = n
		}
	}
	return best, nil
}

// idleLines put a port back as an idle access port of vlan, out of any channel.
func (d lagDialect) idleLines(vlan int) []string {
	if d.os10 {
		return []string{"no channel-group", "switchport mode access", fmt.Sprintf("switchport access vlan %d", vlan), "no shutdown"}
	}
	lines := []string{"no channel-group"}
	if d.l2 {
		lines = append(lines, "switchport")
	}
	return append(lines, "switchport mode access", fmt.Sprintf("switchport access vlan %d", vlan),
		"no switchport trunk allowed vlan", "no switchport trunk native vlan", "no shutdown")
}

// renderLAG writes one bond change (NX-OS: "switchport" before the switchport lines, "vpc ID",
// "lacp rate"):
//
//	ensure-lag: interface Port-ChannelN / description metalwire L [mlag P domain D peer S] /
//	            the bond's VLAN lines (as an access or trunk port) / shutdown (portStatus down; else
//	            no shutdown) / mlag ID (or no mlag) / exit,
//	            interface MEMBERS / channel-group N mode active (static: mode on) /
//	            lacp timer fast (or normal; static: none) / no shutdown / exit, and each member the
//	            bond no longer has back to the idle VLAN
//	remove-lag: interface MEMBERS / no channel-group / switchport mode access /
//	            switchport access vlan IDLE / no switchport trunk allowed vlan /
//	            no switchport trunk native vlan / no shutdown / exit, then no interface Port-ChannelN
//
// The bond's state is its port-channel's; its members are always up.
func (d lagDialect) renderLAG(ep fabric.Endpoint, have fabric.State, i int, c fabric.Change) ([]string, error) {
	l := c.LAG
	cur, exists := have.LAGs[l.Name]
	if c.Op == fabric.OpRemoveLAG {
		if l.Port.VLAN < 1 {
			return nil, fmt.Errorf("change %d (%s): networkOS %s puts a bond's members back in an access VLAN; set the NetworkDevice's idleVLAN", i, c, d.os)
		}
		members := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(l.Members), cur.Members...))))
		lines := d.portLines(members, d.idleLines(l.Port.VLAN))
		if exists {
			lines = append(lines, "no interface "+cur.Port.Name)
		}
		return lines, nil
	}
	if len(l.Members) == 0 {
		return nil, fmt.Errorf("change %d (%s): a bond needs at least one member", i, c)
	}
	if m := l.MLAG; m != nil && (!mlagLabel.MatchString(m.Pair) || !mlagLabel.MatchString(m.Peer) || m.Domain < 0) {
		return nil, fmt.Errorf("change %d (%s): MLAG pair %q, peer %q or domain %d is not a name or id networkOS %s can carry", i, c, m.Pair, m.Peer, m.Domain, d.os)
	}
	iface := cur.Port.Name
	if !exists {
		n, err := d.channel(l.Members)
		if err != nil {
			return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
		}
		iface = d.prefix + strconv.Itoa(n)
	}
	num := strings.TrimPrefix(iface, d.prefix)
	lines := []string{"interface " + iface, "description " + lagDescription(l)}
	p := l.Port
	switch {
	case p.Mode != fabric.ModeTrunk && p.VLAN < 1:
		return nil, fmt.Errorf("change %d (%s): an access bond needs a VLAN", i, c)
	case d.os10:
		lines = append(lines, os10VLANLines(cur.Port, p)...)
	case p.Mode == fabric.ModeTrunk:
		if d.l2 {
			lines = append(lines, "switchport")
		}
		native := "no switchport trunk native vlan"
		if p.VLAN > 0 {
			native = fmt.Sprintf("switchport trunk native vlan %d", p.VLAN)
		}
		lines = append(lines, "switchport mode trunk", "switchport trunk allowed vlan "+joinInts(trunkVLANs(p)), native)
	default:
		idle := d.idleLines(p.VLAN)
		lines = append(lines, idle[1:len(idle)-1]...)
	}
	lines = append(lines, shutdownLine(p.Down))
	switch {
	case l.MLAG != nil && d.mlag == "":
		return nil, unsupported(d.os, i, c)
	case l.MLAG != nil:
		lines = append(lines, fmt.Sprintf("%s %d", d.mlag, d.mlagID(l.Name)))
	case d.mlag != "":
		lines = append(lines, "no "+d.mlag)
	}
	lines = append(lines, "exit")
	mode, timer := "on", "normal"
	if l.LACP {
		mode = "active"
		if l.FastRate {
			timer = "fast"
		}
	}
	member := []string{fmt.Sprintf("channel-group %s mode %s", num, mode)}
	if l.LACP {
		member = append(member, d.rate+" "+timer)
	}
	member = append(member, "no shutdown")
	lines = append(lines, d.portLines(l.Members, member)...)
	var gone []string
	for _, m := range cur.Members {
		if !slices.Contains(l.Members, m) {
			gone = append(gone, m)
		}
	}
	if len(gone) > 0 {
		idle := max(ep.IdleVLAN, 1)
		lines = append(lines, d.portLines(gone, d.idleLines(idle))...)
	}
	return lines, nil
}

// os10VLANLines are a bond's VLAN lines on OS10, as renderOS10 writes a port's; cur is what the
// bond carries now.
func os10VLANLines(cur, p fabric.Port) []string {
	var lines []string
	drop := func(keep []int) {
		if cur.Mode != fabric.ModeTrunk {
			return
		}
		for _, v := range cur.Trunk {
			if !slices.Contains(keep, v) {
				lines = append(lines, fmt.Sprintf("no switchport trunk allowed vlan %d", v))
			}
		}
	}
	if p.Mode != fabric.ModeTrunk {
		drop(nil)
		return append(lines, "switchport mode access", fmt.Sprintf("switchport access vlan %d", p.VLAN))
	}
	lines = append(lines, "switchport mode trunk")
	drop(p.Trunk)
	lines = append(lines, "switchport trunk allowed vlan "+joinInts(p.Trunk))
	if p.VLAN > 0 {
		return append(lines, fmt.Sprintf("switchport access vlan %d", p.VLAN))
	}
	return append(lines, "no switchport access vlan")
}

// portLines configures ports (named in ranges where they run on; OS10, whose ranges are another
// command, one by one) with the same body.
func (d lagDialect) portLines(ports, body []string) []string {
	names := slices.Sorted(slices.Values(ports))
	if !d.os10 {
		names = portRanges(ports)
	}
	var lines []string
	for _, r := range names {
		lines = append(append(append(lines, "interface "+r), body...), "exit")
	}
	return lines
}

// eosSections reads "show running-config | json" as each interface's configuration lines, and
// every top-level section's (an access list's entries, by "ip access-list NAME").
func eosSections(out string) (ifaces, top map[string][]string, err error) {
	var rc struct {
		Cmds map[string]struct {
			Cmds map[string]json.RawMessage `json:"cmds"`
		} `json:"cmds"`
	}
	if err := json.Unmarshal([]byte(out), &rc); err != nil {
		return nil, nil, err
	}
	ifaces, top = map[string][]string{}, map[string][]string{}
	for section, body := range rc.Cmds {
		lines := make([]string, 0, len(body.Cmds))
		for line := range body.Cmds {
			lines = append(lines, line)
		}
		top[section] = lines
		if iface, ok := strings.CutPrefix(section, "interface "); ok {
			ifaces[iface] = lines
		}
	}
	return ifaces, top, nil
}

// textSections reads a running configuration printed as text (NX-OS "show running-config
// interface", OS10 "show running-configuration": neither has a JSON form) as each interface's
// configuration lines (the indented lines under "interface X").
func textSections(out string) map[string][]string {
	secs := map[string][]string{}
	iface := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r ")
		switch {
		case strings.HasPrefix(line, "interface "):
			iface = strings.TrimPrefix(line, "interface ")
			secs[iface] = secs[iface][:0]
		case strings.HasPrefix(line, " ") && iface != "":
			secs[iface] = append(secs[iface], strings.TrimSpace(line))
		default:
			iface = ""
		}
	}
	return secs
}

// parseLAGs reads the bonds named in names from the interfaces' configuration lines: a
// port-channel with metalwire's description, its members ("channel-group N mode M"), their LACP
// rate and its multi-chassis id. ports are the switchports read; a bond's Port is its
// port-channel's (named as the switch names it). members are the ports in any of the named bonds.
func (d lagDialect) parseLAGs(secs map[string][]string, ports map[string]fabric.Port, names []string) (map[string]fabric.LAG, map[string]bool) {
	type channel struct {
		lag        fabric.LAG
		fast, slow bool
	}
	byNum := map[string]*channel{}
	for iface, lines := range secs {
		num, ok := strings.CutPrefix(iface, d.prefix)
		if !ok {
			continue
		}
		var desc []string
		id := 0
		for _, line := range lines {
			if rest, ok := strings.CutPrefix(strings.ReplaceAll(line, `"`, ""), "description metalwire "); ok {
				desc = strings.Fields(rest)
			}
			if rest, ok := strings.CutPrefix(line, d.mlag+" "); ok {
				id, _ = strconv.Atoi(rest)
			}
		}
		if len(desc) == 0 || !slices.Contains(names, desc[0]) {
			continue
		}
		l := fabric.LAG{Name: desc[0], Port: ports[iface]}
		l.Port.Name = iface
		if len(desc) == 7 && desc[1] == "mlag" && desc[3] == "domain" && desc[5] == "peer" && id == d.mlagID(desc[0]) {
			if dom, err := strconv.Atoi(desc[4]); err == nil {
				l.MLAG = &fabric.MLAG{Pair: desc[2], Domain: dom, Peer: desc[6]}
			}
		}
		byNum[num] = &channel{lag: l}
	}
	members := map[string]bool{}
	for port, lines := range secs {
		var ch *channel
		fast := false
		for _, line := range lines {
			if f := strings.Fields(line); len(f) == 4 && f[0] == "channel-group" && f[2] == "mode" {
				if ch = byNum[f[1]]; ch != nil {
					ch.lag.LACP = f[3] != "on"
				}
			}
			fast = fast || line == d.rate+" fast"
		}
		if ch == nil {
			continue
		}
		members[port] = true
		ch.lag.Members = append(ch.lag.Members, port)
		ch.fast = ch.fast || fast
		ch.slow = ch.slow || !fast
	}
	lags := map[string]fabric.LAG{}
	for _, ch := range byNum {
		slices.Sort(ch.lag.Members)
		ch.lag.FastRate = ch.lag.LACP && ch.fast && !ch.slow
		lags[ch.lag.Name] = ch.lag
	}
	return lags, members
}
