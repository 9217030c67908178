package vendortest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// junos is the Junos CLI (ELS switching): operational mode (>), configuration mode (#, "[edit]")
// editing a candidate configuration with set and delete, "commit check" and "commit" to make
// it the running configuration, "rollback 0" to drop the changes. "configure" edits the shared
// candidate, which outlives the session; "configure private" one of the session's own.
// The shared candidate is Server.staged, a private one shellState.private.
type junos struct{}

func init() {
	personalities["junos"] = junos{}
}

func (j junos) newShell() shellState { return shellState{mode: "op"} }

func (j junos) prompt(st *shellState) string {
	if st.mode == "config" {
		return "\n[edit]\nadmin@leaf1# "
	}
	return "admin@leaf1> "
}

func (j junos) exec(*Server, string) (string, int) { return "error: use the CLI\n", 1 }

func (j junos) errorFor(cmd string) string {
	if strings.HasPrefix(cmd, "commit") {
		return "[edit interfaces ge-0/0/0 unit 0 family ethernet-switching]\n  'vlan'\n    " +
			"Interface ge-0/0/0.0 has VLAN members on both access and trunk\nerror: configuration check-out failed"
	}
	return strings.Repeat(" ", 14) + "^\nsyntax error."
}

// candidate is what a configuration-mode shell edits.
func (j junos) candidate(s *Server, st *shellState) *Config {
	if st.private != nil {
		return st.private
	}
	return s.stagedConfig()
}

func (j junos) line(s *Server, st *shellState, cmd string) (string, bool) {
	if st.mode != "config" {
		return j.opLine(s, st, cmd)
	}
	cand := j.candidate(s, st)
	f := strings.Fields(cmd)
	switch {
	case cmd == "exit configuration-mode" || cmd == "exit" || cmd == "quit":
		st.private = nil
		st.mode = "op"
		return "Exiting configuration mode\n", false
	case cmd == "rollback 0":
		cand.replace(s.Config)
		return "load complete\n", false
	case cmd == "commit check":
		if msg := junosCheck(cand); msg != "" {
			return msg, false
		}
		return "configuration check succeeds\n", false
	case cmd == "commit":
		if msg := junosCheck(cand); msg != "" {
			return msg, false
		}
		s.Config.replace(cand)
		return "commit complete\n", false
	case len(f) >= 2 && (f[0] == "set" || f[0] == "delete"):
		if msg := junosEdit(cand, f[0] == "set", f[1:]); msg != "" {
			return msg, false
		}
		return "", false
	case len(f) >= 1 && f[0] == "show":
		return "", false
	}
	return j.errorFor(cmd) + "\n", false
}

func (j junos) opLine(s *Server, st *shellState, cmd string) (string, bool) {
	switch cmd {
	case "exit", "quit":
		return "", true
	case "set cli screen-length 0":
		st.noPaging = true
		return "Screen length set to 0\n", false
	case "set cli screen-width 511":
		return "Screen width set to 511\n", false
	case "set cli complete-on-space off":
		return "Disabling complete-on-space\n", false
	case "configure", "configure private":
		st.mode = "config"
		if cmd == "configure private" {
			st.private = s.Config.Clone()
			return "warning: uncommitted changes will be discarded on exit\nEntering configuration mode\n", false
		}
		return "Entering configuration mode\n", false
	case "show version | display json":
		return mustJSON(map[string]any{"software-information": []any{map[string]any{
			"host-name":     []any{map[string]any{"data": "leaf1"}},
			"product-model": []any{map[string]any{"data": "ex4400-48t"}},
			"junos-version": []any{map[string]any{"data": "23.4R2.13"}},
		}}}), false
	case "show configuration vlans | display json":
		return junosVLANs(s.Config), false
	case "show configuration interfaces | display json":
		return junosInterfaces(s.Config), false
	case "show configuration firewall family ethernet-switching | display json":
		return junosFilters(s.Config), false
	case "show configuration":
		return runningConfig(s), false
	}
	return "                 ^\nunknown command.\n", false
}

// junosEdit applies one set or delete to the candidate; a statement it does not know is a
// syntax error, as on the switch.
func junosEdit(c *Config, set bool, f []string) string {
	syntax := strings.Repeat(" ", 14) + "^\nsyntax error.\n"
	var msg string
	c.edit(func(vlans map[int]string, ports map[string]*PortConfig) {
		switch {
		case f[0] == "vlans" && len(f) == 4 && set && f[2] == "vlan-id":
			id, err := strconv.Atoi(f[3])
			if err != nil || id < 1 || id > 4094 {
				msg = fmt.Sprintf("error: Value %s is not within range (1..4094)\n", f[3])
				return
			}
			vlans[id] = f[1]
		case f[0] == "vlans" && len(f) == 2 && !set:
			for id, name := range vlans {
				if name == f[1] {
					delete(vlans, id)
					return
				}
			}
			msg = "warning: statement not found\n"
		case f[0] == "interfaces" && len(f) == 2 && !set:
			// The whole interface: an ae goes, a port keeps no configuration.
			if p, ok := ports[f[1]]; ok && strings.HasPrefix(f[1], "ae") {
				delete(ports, f[1])
			} else if ok {
				*p = PortConfig{}
			}
		case f[0] == "firewall":
			msg = junosFilterStatement(c, set, f[1:])
			if msg == "warning: statement not found\n" {
				return
			}
		case f[0] == "interfaces" && len(f) >= 3:
			p, ok := ports[f[1]]
			if !ok {
				// Junos accepts any interface name in the candidate; commit check refuses it.
				p = &PortConfig{}
				ports[f[1]] = p
			}
			msg = junosInterface(p, vlans, set, f[2:])
			if msg == "syntax" {
				msg = syntax
			}
		default:
			msg = syntax
		}
	})
	return msg
}

func junosInterface(p *PortConfig, vlans map[int]string, set bool, f []string) string {
	eth := []string{"unit", "0", "family", "ethernet-switching"}
	switch {
	case len(f) == 1 && f[0] == "disable":
		p.Shutdown = set
	case len(f) == 1 && f[0] == "native-vlan-id" && !set:
		p.Native = 0
	case len(f) == 2 && f[0] == "native-vlan-id" && set:
		id, err := strconv.Atoi(f[1])
		if err != nil {
			return "syntax"
		}
		p.Native = id
	case len(f) == 4 && slices.Equal(f, eth) && !set:
		p.Mode, p.Access, p.Allowed, p.AccessGroups = "", 0, nil, nil
	case len(f) == 5 && slices.Equal(f[:4], eth) && f[4] == "interface-mode" && !set:
		p.Mode = ""
	case len(f) == 5 && slices.Equal(f[:4], eth) && f[4] == "vlan" && !set:
		p.Access, p.Allowed = 0, nil
	case len(f) >= 5 && slices.Equal(f[:4], eth) && f[4] == "filter":
		return junosFilterBinding(p, set, f[5:])
	case len(f) == 6 && slices.Equal(f[:4], eth) && f[4] == "interface-mode" && set && (f[5] == "access" || f[5] == "trunk"):
		p.Mode = f[5]
	case len(f) == 7 && slices.Equal(f[:4], eth) && f[4] == "vlan" && f[5] == "members" && set:
		id, err := strconv.Atoi(f[6])
		if err != nil {
			for v, name := range vlans {
				if name == f[6] {
					id, err = v, nil
				}
			}
		}
		if err != nil {
			return "syntax"
		}
		p.Allowed = addInts(p.Allowed, id)
		if p.Mode == "access" {
			p.Access = id
		}
	default:
		return junosBondStatement(p, set, f)
	}
	return ""
}

// junosCheck is commit check: every VLAN a port names exists, an access port has one, a native
// VLAN is one of the trunk's members.
func junosCheck(c *Config) string {
	var msg string
	c.edit(func(vlans map[int]string, ports map[string]*PortConfig) {
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for n := range ports {
				if !yield(n) {
					return
				}
			}
		}) {
			p := ports[name]
			if msg = junosBondCheck(ports, name, p); msg != "" {
				return
			}
			if msg = junosFilterCheck(c.acls, name, p); msg != "" {
				return
			}
			where := fmt.Sprintf("[edit interfaces %s unit 0 family ethernet-switching]\n  'vlan'\n    ", name)
			for _, id := range p.Allowed {
				if _, ok := vlans[id]; !ok {
					msg = where + fmt.Sprintf("VLAN %d is not defined\nerror: configuration check-out failed\n", id)
					return
				}
			}
			if p.Mode == "access" && len(p.Allowed) > 1 {
				msg = where + "Access interface can have only one VLAN member\nerror: configuration check-out failed\n"
				return
			}
			if p.Native != 0 && p.Mode == "trunk" && !slices.Contains(p.Allowed, p.Native) {
				msg = fmt.Sprintf("[edit interfaces %s]\n  'native-vlan-id'\n    native vlan %d is not a member of the trunk\nerror: configuration check-out failed\n", name, p.Native)
				return
			}
		}
	})
	return msg
}

// junosVLANs prints "show configuration vlans | display json".
func junosVLANs(c *Config) string {
	var list []any
	c.edit(func(vlans map[int]string, _ map[string]*PortConfig) {
		for _, id := range slices.Sorted(func(yield func(int) bool) {
			for id := range vlans {
				if !yield(id) {
					return
				}
			}
		}) {
			list = append(list, map[string]any{"name": vlans[id], "vlan-id": strconv.Itoa(id)})
		}
	})
	return mustJSON(map[string]any{"configuration": map[string]any{"vlans": map[string]any{"vlan": list}}})
}

// junosInterfaces prints "show configuration interfaces | display json". The factory default of
// the emulation (access, VLAN 1) is written as members "default".
func junosInterfaces(c *Config) string {
	names := c.PortNames()
	list := make([]any, 0, len(names))
	for _, n := range names {
		p, _ := c.Port(n)
		iface := map[string]any{"name": n}
		es := map[string]any{}
		junosFilterShow(p, es)
		if p.Mode != "" {
			members := make([]string, 0, len(p.Allowed)+1)
			ids := p.Allowed
			if p.Mode == "access" && len(ids) == 0 {
				ids = []int{p.Access}
			}
			for _, id := range ids {
				members = append(members, strconv.Itoa(id))
			}
			es["interface-mode"], es["vlan"] = p.Mode, map[string]any{"members": members}
		}
		if len(es) > 0 {
			iface["unit"] = []any{map[string]any{"name": "0", "family": map[string]any{"ethernet-switching": es}}}
		}
		if p.Native != 0 && p.Mode == "trunk" {
			iface["native-vlan-id"] = strconv.Itoa(p.Native)
		}
		if p.Shutdown {
			iface["disable"] = []any{nil}
		}
		junosBondShow(p, iface)
		list = append(list, iface)
	}
	return mustJSON(map[string]any{"configuration": map[string]any{"interfaces": map[string]any{"interface": list}}})
}
