package vendortest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// linuxSwitch is a switch whose CLI is a Linux shell (SONiC, Cumulus): driven over exec
// channels, one command each, the exit status saying whether it worked.
type linuxSwitch struct {
	run      func(s *Server, f []string) (string, int)
	errorMsg func(cmd string) string
}

func (l *linuxSwitch) newShell() shellState { return shellState{mode: "enable"} }
func (l *linuxSwitch) prompt(*shellState) string {
	return "admin@leaf1:~$ "
}

func (l *linuxSwitch) line(s *Server, _ *shellState, cmd string) (string, bool) {
	if cmd == "exit" {
		return "", true
	}
	out, _ := l.exec(s, cmd)
	return out, false
}

func (l *linuxSwitch) errorFor(cmd string) string { return l.errorMsg(cmd) }

func (l *linuxSwitch) exec(s *Server, cmd string) (string, int) {
	f := strings.Fields(cmd)
	if len(f) > 0 && f[0] == "sudo" {
		f = f[1:]
	}
	if len(f) == 0 {
		return "", 0
	}
	return l.run(s, f)
}

func init() {
	personalities["sonic"] = &linuxSwitch{run: sonicRun, errorMsg: func(cmd string) string {
		f := strings.Fields(cmd)
		if slices.Contains(f, "sonic-cfggen") {
			return "Error: redis.exceptions.ConnectionError: Error 111 connecting to /var/run/redis/redis.sock. Connection refused."
		}
		return "Usage: config vlan member add [OPTIONS] <vid> port\nTry \"config vlan member add -h\" for help.\n\nError: " + f[len(f)-1] + " is a router interface!"
	}}
	personalities["cumulus"] = &linuxSwitch{run: cumulusRun, errorMsg: func(cmd string) string {
		return "Error: Invalid config: " + cmd
	}}
}

// sonicRun is SONiC's click CLI ("config vlan ...", "config save") and sonic-cfggen's JSON view
// of CONFIG_DB. A port's untagged membership is PortConfig.Access (0: none), its tagged
// memberships PortConfig.Allowed.
func sonicRun(s *Server, f []string) (string, int) {
	cmd := strings.Join(f, " ")
	fail := func(format string, a ...any) (string, int) { return "Error: " + fmt.Sprintf(format, a...) + "\n", 1 }
	cfg := s.Config
	switch {
	case cmd == "show version":
		return "SONiC Software Version: SONiC.202311.1\nDistribution: Debian 12.5\nKernel: 6.1.0-11-2-amd64\nPlatform: x86_64-kvm_x86_64-r0\n", 0
	case cmd == "config save -y":
		return "Running command: /usr/local/bin/sonic-cfggen -d --print-data > /etc/sonic/config_db.json\n", 0
	case len(f) == 4 && f[0] == "sonic-cfggen" && f[1] == "-d" && f[2] == "--var-json":
		return sonicTable(cfg, f[3]), 0
	case len(f) >= 4 && f[0] == "sonic-cfggen" && f[1] == "-a" && f[len(f)-1] == "--write-to-db":
		return sonicWrite(cfg, f)
	case len(f) == 4 && f[0] == "config" && f[1] == "vlan" && (f[2] == "add" || f[2] == "del"):
		id, err := strconv.Atoi(f[3])
		if err != nil || id < 1 || id > 4094 {
			return fail("Invalid VLAN ID %s (1-4094)", f[3])
		}
		var out string
		cfg.edit(func(vlans map[int]string, ports map[string]*PortConfig) {
			_, exists := vlans[id]
			switch {
			case f[2] == "add" && exists:
				out = fmt.Sprintf("Vlan%d already exists", id)
			case f[2] == "add":
				vlans[id] = fmt.Sprintf("Vlan%d", id)
			case !exists:
				out = fmt.Sprintf("Vlan%d does not exist", id)
			default:
				for _, p := range ports {
					if p.Access == id || slices.Contains(p.Allowed, id) {
						out = fmt.Sprintf("Vlan%d can not be removed. First remove vlan members", id)
						return
					}
				}
				delete(vlans, id)
			}
		})
		if out != "" {
			return fail("%s", out)
		}
		return "", 0
	case len(f) == 4 && f[0] == "config" && f[1] == "interface" && (f[2] == "shutdown" || f[2] == "startup"):
		var out string
		cfg.edit(func(_ map[int]string, ports map[string]*PortConfig) {
			p, ok := ports[f[3]]
			if !ok {
				out = "Interface name is invalid. Please enter a valid interface name!!"
				return
			}
			p.Shutdown = f[2] == "shutdown"
		})
		if out != "" {
			return fail("%s", out)
		}
		return "", 0
	case len(f) >= 3 && f[0] == "config" && f[1] == "mclag":
		if msg := sonicMCLAG(cfg, f); msg != "" {
			return fail("%s", msg)
		}
		return "", 0
	case len(f) >= 3 && f[0] == "config" && f[1] == "portchannel":
		if msg := sonicPortChannel(cfg, f); msg != "" {
			return fail("%s", msg)
		}
		return "", 0
	case len(f) >= 6 && f[0] == "config" && f[1] == "vlan" && f[2] == "member" && (f[3] == "add" || f[3] == "del"):
		untagged := f[4] == "-u"
		args := f[4:]
		if untagged {
			args = f[5:]
		}
		if len(args) != 2 {
			return fail("usage: config vlan member %s [-u] <vid> <port>", f[3])
		}
		id, err := strconv.Atoi(args[0])
		if err != nil {
			return fail("Invalid VLAN ID %s", args[0])
		}
		port := args[1]
		var out string
		cfg.edit(func(vlans map[int]string, ports map[string]*PortConfig) {
			p, ok := ports[port]
			if _, have := vlans[id]; !have {
				out = fmt.Sprintf("Vlan%d doesn't exist", id)
				return
			}
			if !ok {
				out = port + " does not exist"
				return
			}
			member := p.Access == id || slices.Contains(p.Allowed, id)
			switch {
			case f[3] == "add" && p.ChannelMode != "":
				out = port + " is part of portchannel!"
			case f[3] == "add" && member:
				out = fmt.Sprintf("%s is already a member of Vlan%d", port, id)
			case f[3] == "add" && untagged && p.Access != 0:
				out = fmt.Sprintf("%s is already untagged member of Vlan%d", port, p.Access)
			case f[3] == "add" && untagged:
				p.Access = id
			case f[3] == "add":
				p.Allowed = addInts(p.Allowed, id)
			case !member:
				out = fmt.Sprintf("%s is not a member of Vlan%d", port, id)
			case p.Access == id:
				p.Access = 0
			default:
				p.Allowed = removeInts(p.Allowed, id)
			}
			p.Mode = "access"
			if len(p.Allowed) > 0 {
				p.Mode = "trunk"
			}
			p.Native = p.Access
		})
		if out != "" {
			return fail("%s", out)
		}
		return "", 0
	}
	return fmt.Sprintf("Usage: config [OPTIONS] COMMAND [ARGS]...\n\nError: No such command %q.\n", f[0]), 2
}

func sonicTable(cfg *Config, table string) string {
	out := map[string]any{}
	switch table {
	case "VLAN":
		for _, id := range cfg.VLANs() {
			out[fmt.Sprintf("Vlan%d", id)] = map[string]string{"vlanid": strconv.Itoa(id)}
		}
	case "VLAN_MEMBER":
		for _, n := range cfg.PortNames() {
			p, _ := cfg.Port(n)
			if p.Access != 0 {
				out[fmt.Sprintf("Vlan%d|%s", p.Access, n)] = map[string]string{"tagging_mode": "untagged"}
			}
			for _, v := range p.Allowed {
				out[fmt.Sprintf("Vlan%d|%s", v, n)] = map[string]string{"tagging_mode": "tagged"}
			}
		}
	case "PORTCHANNEL", "PORTCHANNEL_MEMBER":
		sonicChannelTables(cfg, table, out)
	case "MCLAG_DOMAIN", "MCLAG_INTERFACE":
		sonicMCLAGTables(cfg, table, out)
	case "ACL_TABLE", "ACL_RULE":
		out = sonicDBTable(cfg, table)
	case "PORT":
		for i, n := range cfg.PortNames() {
			p, _ := cfg.Port(n)
			if _, isChannel := sonicChannelNumber(n); isChannel {
				continue
			}
			admin := "up"
			if p.Shutdown {
				admin = "down"
			}
			out[n] = map[string]string{"admin_status": admin, "mtu": "9100", "speed": "100000", "index": strconv.Itoa(i)}
		}
	}
	if len(out) == 0 {
		return "" // sonic-cfggen prints nothing for a table CONFIG_DB lacks
	}
	return mustJSON(out)
}

// cumulusRun is NVUE: "nv set/unset" stage changes in a pending revision (Server.staged), "nv
// config apply -y" applies it, "nv config detach" drops it, "nv config show -o json" shows the
// applied configuration.
func cumulusRun(s *Server, f []string) (string, int) {
	fail := func(format string, a ...any) (string, int) { return "Error: " + fmt.Sprintf(format, a...) + "\n", 1 }
	cmd := strings.Join(f, " ")
	switch cmd {
	case "nv --version":
		return "NVUE 5.9.0 (Cumulus Linux 5.9.0)\n", 0
	case "nv config show -o json":
		return cumulusShow(s.Config), 0
	case "nv config detach":
		s.takeStaged()
		return "", 0
	case "nv config apply -y":
		if p := s.takeStaged(); p != nil {
			if msg := cumulusACLApply(p); msg != "" {
				return fail("%s", msg)
			}
			s.Config.replace(p)
		}
		return "applied [rev_id: 2]\n", 0
	case "nv config save":
		return "saved [rev_id: 2]\n", 0
	}
	if len(f) < 2 || f[0] != "nv" || (f[1] != "set" && f[1] != "unset") {
		return fail("Invalid command %q", cmd)
	}
	set := f[1] == "set"
	a := f[2:]
	pending := s.stagedConfig()
	var out string
	switch {
	case len(a) == 5 && a[0] == "bridge" && a[1] == "domain" && a[3] == "vlan":
		ids, err := parseVLANList(a[4])
		if err != nil {
			return fail("%q is not a valid vlan", a[4])
		}
		pending.edit(func(vlans map[int]string, _ map[string]*PortConfig) {
			for _, id := range ids {
				if set {
					vlans[id] = ""
				} else {
					delete(vlans, id)
				}
			}
		})
	case len(a) >= 2 && a[0] == "acl":
		out = cumulusACL(pending, set, a, cmd)
	case len(a) >= 4 && a[0] == "interface" && a[2] == "acl":
		out = cumulusACLBinding(pending, set, a, cmd)
	case len(a) >= 4 && a[0] == "interface" && a[2] == "link" && a[3] == "state":
		out = cumulusLinkState(pending, set, a, cmd)
	case len(a) >= 2 && a[0] == "interface" && (len(a) == 2 || a[2] == "bond" || a[2] == "description"):
		out = cumulusBond(pending, set, a, cmd)
	case len(a) >= 5 && a[0] == "interface" && a[2] == "bridge" && a[3] == "domain":
		// NVUE takes ranges and lists of interfaces: "swp1-4,swp7".
		names, err := expandPorts(a[1])
		if err != nil {
			return fail("interface %s does not exist", a[1])
		}
		pending.edit(func(vlans map[int]string, ports map[string]*PortConfig) {
			for _, n := range names {
				if _, ok := ports[n]; !ok {
					out = fmt.Sprintf("interface %s does not exist", n)
					return
				}
			}
			for _, n := range names {
				if out = cumulusPort(vlans, ports[n], set, a, cmd); out != "" {
					return
				}
			}
		})
	default:
		return fail("Invalid config: %s", cmd)
	}
	if out != "" {
		return fail("%s", out)
	}
	return "", 0
}

// cumulusPort sets one interface from "nv set/unset interface P bridge domain BR ..." (a); it
// returns NVUE's refusal or "".
func cumulusPort(vlans map[int]string, p *PortConfig, set bool, a []string, cmd string) string {
	if !set && len(a) == 5 {
		p.Mode, p.Access, p.Native, p.Allowed = "", 0, 0, nil
		return ""
	}
	if len(a) != 7 || !set {
		return fmt.Sprintf("Invalid config: %s", cmd)
	}
	ids, err := parseVLANList(a[6])
	if err != nil {
		return fmt.Sprintf("%q is not a valid vlan", a[6])
	}
	for _, id := range ids {
		if _, ok := vlans[id]; !ok {
			return fmt.Sprintf("vlan %d is not defined in bridge domain %s", id, a[4])
		}
	}
	switch a[5] {
	case "access":
		p.Mode, p.Access = "access", ids[0]
	case "vlan":
		p.Mode, p.Allowed = "trunk", addInts(p.Allowed, ids...)
	case "untagged":
		p.Native = ids[0]
	default:
		return fmt.Sprintf("Invalid config: %s", cmd)
	}
	return ""
}

// cumulusShow prints "nv config show -o json": a header and the "set" tree of the configuration.
func cumulusShow(cfg *Config) string {
	vlans := map[string]any{}
	for _, id := range cfg.VLANs() {
		vlans[strconv.Itoa(id)] = map[string]any{}
	}
	ifaces := map[string]any{}
	for _, n := range cfg.PortNames() {
		p, _ := cfg.Port(n)
		dom := map[string]any{}
		switch p.Mode {
		case "access":
			dom["access"] = p.Access
		case "trunk":
			vl := map[string]any{}
			for _, v := range p.Allowed {
				vl[strconv.Itoa(v)] = map[string]any{}
			}
			dom["vlan"] = vl
			if p.Native != 0 {
				dom["untagged"] = p.Native
			}
		}
		iface := map[string]any{"type": "swp"}
		if p.Shutdown {
			iface["link"] = map[string]any{"state": map[string]any{"down": map[string]any{}}}
		}
		cumulusBondShow(cfg, n, p, iface)
		if len(dom) > 0 {
			iface["bridge"] = map[string]any{"domain": map[string]any{"br_default": dom}}
		}
		ifaces[n] = iface
	}
	set := map[string]any{
		"bridge":    map[string]any{"domain": map[string]any{"br_default": map[string]any{"vlan": vlans}}},
		"interface": ifaces,
	}
	cumulusACLShow(cfg, set, ifaces)
	doc := []any{
		map[string]any{"header": map[string]any{"model": "VX", "nvue-api-version": "nvue_v1", "rev-id": "1.0", "version": "Cumulus Linux 5.9.0"}},
		map[string]any{"set": set},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

// cumulusLinkState stages "nv set interface P link state up|down" (P a list or range) and "nv
// unset interface P link state" (back to up); it returns NVUE's refusal or "".
func cumulusLinkState(cfg *Config, set bool, a []string, cmd string) string {
	names, err := expandPorts(a[1])
	if err != nil {
		return fmt.Sprintf("interface %s does not exist", a[1])
	}
	down := false
	switch {
	case set && len(a) == 5 && (a[4] == "up" || a[4] == "down"):
		down = a[4] == "down"
	case !set && len(a) == 4:
	default:
		return "Invalid config: " + cmd
	}
	var msg string
	cfg.edit(func(_ map[int]string, ports map[string]*PortConfig) {
		for _, n := range names {
			if _, ok := ports[n]; !ok {
				msg = fmt.Sprintf("interface %s does not exist", n)
				return
			}
		}
		for _, n := range names {
			ports[n].Shutdown = down
		}
	})
	return msg
}
