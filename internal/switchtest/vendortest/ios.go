package vendortest

import (
	"fmt"
	"strconv"
	"strings"
)

// iosLike is the industry-standard CLI EOS, NX-OS and Dell OS10 share: exec (>), privileged
// (#, "enable"), "configure terminal", interface and VLAN submodes, "exit" and "end".
type iosLike struct {
	hostname string
	// startMode is where a login lands: "exec" (then "enable") or "enable".
	startMode string
	// ifPrompt and vlanPrompt are the submode prompts, with %s for the interface or VLAN;
	// ifRangePrompt, when set, is the one of several interfaces (NX-OS "(config-if-range)").
	ifPrompt, vlanPrompt, ifRangePrompt string
	// vlanIsInterface: OS10 defines VLANs as "interface vlan N".
	vlanIsInterface bool
	// addAllowed: "switchport trunk allowed vlan L" adds to the list (OS10) rather than replacing it.
	addAllowed bool
	// needsVLAN: a port may only name a VLAN that exists (OS10, NX-OS).
	needsVLAN bool
	// ranges: "interface" and "vlan" take ranges and lists ("interface Ethernet1-4,7",
	// "vlan 1001-1003"), and what follows applies to every port or VLAN named (EOS, NX-OS).
	ranges bool
	// lagPrefix names the port-channel interfaces ("Port-Channel"): "interface Port-ChannelN"
	// creates one, "no interface" removes it, and members take "channel-group N mode M" (EOS).
	// Empty: the OS's emulation has no LAG commands. lagMax is the highest port-channel number
	// and multi-chassis id; mlagWord the port-channel's multi-chassis line ("mlag", NX-OS
	// "vpc"); rateWord the member's LACP rate line's second word ("timer", NX-OS "rate").
	lagPrefix string
	lagMax    int
	// acls: "ip access-list NAME" and "ipv6 access-list NAME" (mode config-acl, entries with
	// sequence numbers) and "ip access-group NAME in|out" on interfaces (EOS).
	acls bool
	// os10ACLs: the lists are OS10's: prompts (conf-ipv4-acl) and (conf-ipv6-acl), entries
	// "seq N ..." shown as typed (os10EntryText).
	os10ACLs bool
	// nxosACLs: the lists are NX-OS's: prompt (config-acl), entries shown as typed (ICMPv6 is
	// "icmp" in an IPv6 list), bound to a switchport inbound only with "ip port access-group NAME
	// in" and "ipv6 port traffic-filter NAME in".
	nxosACLs           bool
	mlagWord, rateWord string
	invalid            func(cmd string) string
	missing            func(what string) string
	show               func(s *Server, cmd string) (string, bool)
	save               map[string]string
}

func (c *iosLike) newShell() shellState { return shellState{mode: c.startMode} }

func (c *iosLike) prompt(st *shellState) string {
	switch st.mode {
	case "exec":
		return c.hostname + ">"
	case "enable":
		return c.hostname + "#"
	case "config":
		return c.hostname + "(config)#"
	case "config-if":
		if len(st.ports) > 1 && c.ifRangePrompt != "" {
			return c.hostname + c.ifRangePrompt + "#"
		}
		return c.hostname + strings.ReplaceAll(c.ifPrompt, "%s", st.context) + "#"
	case "config-vlan":
		return c.hostname + strings.ReplaceAll(c.vlanPrompt, "%s", st.context) + "#"
	case "config-acl":
		if c.os10ACLs && st.aclV6 {
			return c.hostname + "(conf-ipv6-acl)#"
		} else if c.os10ACLs {
			return c.hostname + "(conf-ipv4-acl)#"
		}
		if c.nxosACLs {
			return c.hostname + "(config-acl)#"
		}
		return c.hostname + "(config-acl-" + st.context + ")#"
	}
	return c.hostname + "#"
}

func (c *iosLike) errorFor(cmd string) string { return c.invalid(cmd) }

func (c *iosLike) exec(*Server, string) (string, int) {
	return "exec channels are not served; open a shell\n", 1
}

func (c *iosLike) line(s *Server, st *shellState, cmd string) (string, bool) {
	switch {
	case cmd == "end":
		if strings.HasPrefix(st.mode, "config") {
			st.mode = "enable"
		}
		return "", false
	case cmd == "exit":
		switch st.mode {
		case "config-if", "config-vlan", "config-acl":
			st.mode = "config"
		case "config":
			st.mode = "enable"
		default:
			return "", true
		}
		return "", false
	case strings.HasPrefix(st.mode, "config"):
		return c.configLine(s, st, cmd), false
	case cmd == "enable":
		st.mode = "enable"
		return "", false
	case cmd == "disable":
		st.mode = "exec"
		return "", false
	case cmd == "terminal length 0":
		st.noPaging = true
		return "", false
	case strings.HasPrefix(cmd, "terminal width") || strings.HasPrefix(cmd, "terminal length"):
		return "", false
	}
	if st.mode == "exec" {
		// Unprivileged: shows only.
		if out, ok := c.show(s, cmd); ok {
			return out, false
		}
		return c.invalid(cmd) + "\n", false
	}
	if cmd == "configure terminal" || cmd == "configure" {
		st.mode = "config"
		return "", false
	}
	if out, ok := c.save[cmd]; ok {
		return out, false
	}
	if out, ok := c.show(s, cmd); ok {
		return out, false
	}
	return c.invalid(cmd) + "\n", false
}

func (c *iosLike) configLine(s *Server, st *shellState, cmd string) string {
	f := strings.Fields(cmd)
	no := f[0] == "no"
	if no {
		f = f[1:]
	}
	if len(f) == 0 {
		return c.invalid(cmd) + "\n"
	}
	cfg := s.Config
	if c.acls {
		if out, handled := c.aclLine(cfg, st, no, f, cmd); handled {
			return out
		}
	}
	vlanArg := func(args []string) (int, bool) {
		if len(args) != 1 {
			return 0, false
		}
		id, err := strconv.Atoi(args[0])
		return id, err == nil && id >= 1 && id <= 4094
	}
	// VLANs.
	if (!c.vlanIsInterface && f[0] == "vlan") || (c.vlanIsInterface && len(f) >= 2 && f[0] == "interface" && f[1] == "vlan") {
		args := f[1:]
		if c.vlanIsInterface {
			args = f[2:]
		}
		ids, ok := c.vlanIDs(args, vlanArg)
		if !ok {
			return c.invalid(cmd) + "\n"
		}
		cfg.edit(func(vlans map[int]string, _ map[string]*PortConfig) {
			for _, id := range ids {
				if no {
					delete(vlans, id)
				} else if _, have := vlans[id]; !have {
					vlans[id] = fmt.Sprintf("VLAN%04d", id)
				}
			}
		})
		if !no {
			st.mode, st.context = "config-vlan", args[0]
		}
		return ""
	}
	if c.lagPrefix != "" && f[0] == "interface" && len(f) == 2 && strings.HasPrefix(f[1], c.lagPrefix) {
		return c.portChannel(s, st, no, f[1], cmd)
	}
	if f[0] == "interface" && len(f) == 2 && !no {
		ports := []string{f[1]}
		if c.ranges {
			var err error
			if ports, err = expandPorts(f[1]); err != nil {
				return c.invalid(cmd) + "\n"
			}
		}
		for _, p := range ports {
			if _, ok := cfg.Port(p); !ok {
				return c.invalid(cmd) + "\n"
			}
		}
		st.mode, st.context, st.ports = "config-if", f[1], ports
		return ""
	}
	if st.mode == "config-vlan" && f[0] == "name" {
		return ""
	}
	if st.mode == "config-if" && len(f) == 1 && f[0] == "shutdown" {
		cfg.edit(func(_ map[int]string, ports map[string]*PortConfig) {
			for _, name := range st.ports {
				ports[name].Shutdown = !no
			}
		})
		return ""
	}
	if st.mode == "config-if" && c.lagPrefix != "" && lagCommands[f[0]] {
		return c.lagLine(cfg, st.ports, no, f, cmd)
	}
	if st.mode != "config-if" || f[0] != "switchport" {
		return c.invalid(cmd) + "\n"
	}
	return c.switchport(cfg, st.ports, no, f[1:], cmd)
}

// vlanIDs reads the VLAN argument: one ID, or with ranges a list such as "1001-1003,1005".
func (c *iosLike) vlanIDs(args []string, one func([]string) (int, bool)) ([]int, bool) {
	if !c.ranges || len(args) != 1 {
		id, ok := one(args)
		return []int{id}, ok
	}
	ids, err := parseVLANList(args[0])
	if err != nil || len(ids) == 0 {
		return nil, false
	}
	for _, id := range ids {
		if id < 1 || id > 4094 {
			return nil, false
		}
	}
	return ids, true
}

// expandPorts reads an interface range as EOS and NX-OS do: "Ethernet1-4,7,Ethernet49/1-2" is
// Ethernet1 to 4, Ethernet7, Ethernet49/1 and 49/2; a part without a name takes the one before.
func expandPorts(arg string) ([]string, error) {
	var out []string
	prefix := ""
	for _, part := range strings.Split(arg, ",") {
		i := len(part)
		for i > 0 && (part[i-1] >= '0' && part[i-1] <= '9' || part[i-1] == '-') {
			i--
		}
		if i > 0 {
			prefix = part[:i]
		} else if prefix == "" {
			return nil, fmt.Errorf("%q: no interface name", part)
		}
		if i == len(part) || (part[i] == '0' && !strings.Contains(part[i:], "-")) {
			out = append(out, part) // a name without a number, or whose number is not one (lag0012)
			continue
		}
		a, b, isRange := strings.Cut(part[i:], "-")
		first, err := strconv.Atoi(a)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", part, err)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(b); err != nil || last < first {
				return nil, fmt.Errorf("%q: not a range", part)
			}
		}
		for n := first; n <= last; n++ {
			out = append(out, prefix+strconv.Itoa(n))
		}
	}
	return out, nil
}

// switchport handles "[no] switchport ..." on the interfaces being configured.
func (c *iosLike) switchport(cfg *Config, names []string, no bool, f []string, cmd string) string {
	var msg string
	cfg.edit(func(vlans map[int]string, ports map[string]*PortConfig) {
		for _, name := range names {
			if msg == "" {
				msg = c.switchportOne(vlans, ports[name], no, f, cmd)
			}
		}
	})
	if msg != "" {
		return msg + "\n"
	}
	return ""
}

// switchportOne sets one port; it returns the switch's refusal or "".
func (c *iosLike) switchportOne(vlans map[int]string, p *PortConfig, no bool, f []string, cmd string) string {
	switch {
	case len(f) == 0: // "switchport" (NX-OS: layer 2 port)
	case len(f) == 2 && f[0] == "mode" && (f[1] == "access" || f[1] == "trunk") && !no:
		p.Mode = f[1]
	case len(f) == 2 && f[0] == "access" && f[1] == "vlan" && no:
		p.Access = 1
	case len(f) == 3 && f[0] == "access" && f[1] == "vlan" && !no:
		id, err := strconv.Atoi(f[2])
		if err != nil {
			return c.invalid(cmd)
		}
		if _, ok := vlans[id]; !ok && c.needsVLAN {
			return c.missing(f[2])
		}
		p.Access = id
	case len(f) == 3 && f[0] == "trunk" && f[1] == "native" && f[2] == "vlan" && no:
		p.Native = 1
	case len(f) == 4 && f[0] == "trunk" && f[1] == "native" && f[2] == "vlan" && !no:
		id, err := strconv.Atoi(f[3])
		if err != nil {
			return c.invalid(cmd)
		}
		p.Native = id
	case len(f) >= 3 && f[0] == "trunk" && f[1] == "allowed" && f[2] == "vlan":
		var ids []int
		if len(f) == 4 {
			var err error
			if ids, err = parseVLANList(f[3]); err != nil {
				return c.invalid(cmd)
			}
		}
		switch {
		case no && len(ids) == 0:
			p.Allowed = nil
		case no:
			p.Allowed = removeInts(p.Allowed, ids...)
		case c.addAllowed:
			p.Allowed = addInts(p.Allowed, ids...)
		default:
			p.Allowed = addInts(nil, ids...)
		}
	default:
		return c.invalid(cmd)
	}
	return ""
}

// parseVLANList reads "1001,1003-1005".
func parseVLANList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(a)
		if err != nil {
			return nil, err
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(b); err != nil {
				return nil, err
			}
		}
		for v := first; v <= last; v++ {
			out = append(out, v)
		}
	}
	return out, nil
}

// vlanList prints ids as the CLIs do: "1001-1003,1005".
func vlanList(ids []int) string {
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		} else {
			parts = append(parts, strconv.Itoa(ids[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
