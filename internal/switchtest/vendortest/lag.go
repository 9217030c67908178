package vendortest

import (
	"fmt"
	"strconv"
	"strings"
)

// lagCommands are the interface-mode commands of port-channels and their members (EOS, NX-OS).
var lagCommands = map[string]bool{"channel-group": true, "lacp": true, "description": true, "mlag": true, "vpc": true}

// portChannel handles "interface Port-ChannelN" (creating it, as EOS does) and
// "no interface Port-ChannelN" (removing it; its members leave the channel). NX-OS:
// port-channelN.
func (c *iosLike) portChannel(s *Server, st *shellState, no bool, name, cmd string) string {
	n, err := strconv.Atoi(strings.TrimPrefix(name, c.lagPrefix))
	if err != nil || n < 1 || n > c.lagMax {
		return c.invalid(cmd) + "\n"
	}
	s.Config.edit(func(_ map[int]string, ports map[string]*PortConfig) {
		if no {
			delete(ports, name)
			for _, p := range ports {
				if p.Channel == n {
					p.Channel, p.ChannelMode = 0, ""
				}
			}
			return
		}
		if _, ok := ports[name]; !ok {
			ports[name] = defaultPort()
		}
	})
	if !no {
		st.mode, st.context, st.ports = "config-if", name, []string{name}
	}
	return ""
}

// lagLine handles channel-group, the LACP rate (EOS "lacp timer", NX-OS "lacp rate"),
// description and the multi-chassis id (EOS "mlag", NX-OS "vpc") on the interfaces being
// configured.
func (c *iosLike) lagLine(cfg *Config, names []string, no bool, f []string, cmd string) string {
	var msg string
	cfg.edit(func(_ map[int]string, ports map[string]*PortConfig) {
		for _, name := range names {
			if msg == "" {
				msg = c.lagOne(ports, name, no, f, cmd)
			}
		}
	})
	if msg != "" {
		return msg + "\n"
	}
	return ""
}

func (c *iosLike) lagOne(ports map[string]*PortConfig, name string, no bool, f []string, cmd string) string {
	p := ports[name]
	isChannel := strings.HasPrefix(name, c.lagPrefix)
	switch {
	case f[0] == "description" && no:
		p.Description = ""
	case f[0] == "description" && len(f) > 1:
		p.Description = strings.Join(f[1:], " ")
	case f[0] == "channel-group" && no && len(f) == 1 && !isChannel:
		p.Channel, p.ChannelMode = 0, ""
	case f[0] == "channel-group" && !no && len(f) == 4 && f[2] == "mode" && !isChannel &&
		(f[3] == "active" || f[3] == "passive" || f[3] == "on"):
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 1 || n > c.lagMax {
			return c.invalid(cmd)
		}
		pc := c.lagPrefix + f[1]
		if _, ok := ports[pc]; !ok {
			ports[pc] = defaultPort()
		}
		p.Channel, p.ChannelMode = n, f[3]
	case f[0] == "lacp" && !no && len(f) == 3 && f[1] == c.rateWord && (f[2] == "fast" || f[2] == "normal") && !isChannel:
		p.LACPFast = f[2] == "fast"
	case f[0] == c.mlagWord && no && len(f) == 1 && isChannel:
		p.MLAG = 0
	case f[0] == c.mlagWord && !no && len(f) == 2 && isChannel:
		id, err := strconv.Atoi(f[1])
		if err != nil || id < 1 || id > c.lagMax {
			return c.invalid(cmd)
		}
		for other, q := range ports {
			if other != name && q.MLAG == id {
				return fmt.Sprintf("%% %s %d is already configured on %s", c.mlagWord, id, other)
			}
		}
		p.MLAG = id
	default:
		return c.invalid(cmd)
	}
	return ""
}

// interfaceLines are a port's configuration lines as the running configuration shows them
// (defaults left out).
func (c *iosLike) interfaceLines(p PortConfig) []string {
	var lines []string
	if p.Description != "" {
		lines = append(lines, "description "+p.Description)
	}
	if p.Mode == "trunk" {
		lines = append(lines, "switchport mode trunk")
	}
	if p.Access != 1 {
		lines = append(lines, fmt.Sprintf("switchport access vlan %d", p.Access))
	}
	if p.Allowed != nil {
		lines = append(lines, "switchport trunk allowed vlan "+vlanList(p.Allowed))
	}
	if p.Native != 1 {
		lines = append(lines, fmt.Sprintf("switchport trunk native vlan %d", p.Native))
	}
	if p.Channel > 0 {
		lines = append(lines, fmt.Sprintf("channel-group %d mode %s", p.Channel, p.ChannelMode))
	}
	if p.LACPFast {
		lines = append(lines, "lacp "+c.rateWord+" fast")
	}
	if p.MLAG > 0 {
		lines = append(lines, fmt.Sprintf("%s %d", c.mlagWord, p.MLAG))
	}
	lines = append(lines, p.AccessGroups...)
	if p.Shutdown {
		lines = append(lines, "shutdown")
	}
	return lines
}

// eosRunningConfigJSON is "show running-config | json": each configuration mode's lines under
// "cmds", a submode's lines nested under its own "cmds".
func eosRunningConfigJSON(s *Server) string {
	c := personalities["eos"].(*iosLike)
	top := map[string]any{}
	for _, id := range s.Config.VLANs() {
		top[fmt.Sprintf("vlan %d", id)] = map[string]any{"cmds": map[string]any{}}
	}
	for _, n := range s.Config.PortNames() {
		p, _ := s.Config.Port(n)
		cmds := map[string]any{}
		for _, l := range c.interfaceLines(p) {
			cmds[l] = nil
		}
		top["interface "+n] = map[string]any{"cmds": cmds, "comments": []string{}}
	}
	eosACLSections(s.Config, top)
	return mustJSON(map[string]any{"cmds": top, "header": []string{"! device: leaf1 (vEOS-lab, EOS-4.31.2F)"}})
}

// nxosRunningConfigInterface is NX-OS's "show running-config interface": text, each interface's
// lines indented under it, a blank line between.
func nxosRunningConfigInterface(s *Server) string {
	c := personalities["nxos"].(*iosLike)
	var b strings.Builder
	b.WriteString("\n!Command: show running-config interface\n!Running configuration last done at: Thu Nov 26 16:00:00 2026\n\nversion 10.3(4a) Bios:version\n")
	for _, n := range s.Config.PortNames() {
		p, _ := s.Config.Port(n)
		fmt.Fprintf(&b, "\ninterface %s\n", n)
		b.WriteString("  switchport\n")
		for _, l := range c.interfaceLines(p) {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		if !p.Shutdown {
			b.WriteString("  no shutdown\n")
		}
	}
	return b.String()
}
