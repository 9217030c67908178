package vendortest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

func init() {
	personalities["eos"] = &iosLike{
		hostname: "leaf1", startMode: "exec",
		ifPrompt: "(config-if-%s)", vlanPrompt: "(config-vlan-%s)", ranges: true,
		lagPrefix: "Port-Channel", lagMax: 2000, mlagWord: "mlag", rateWord: "timer", acls: true,
		invalid: func(cmd string) string {
			return fmt.Sprintf("%% Invalid input (at token 0: '%s')", firstWord(cmd))
		},
		missing: func(string) string { return "% Invalid input" },
		show:    eosShow,
		save:    map[string]string{"write memory": "Copy completed successfully.\n"},
	}
	personalities["nxos"] = &iosLike{
		hostname: "leaf1", startMode: "enable",
		ifPrompt: "(config-if)", vlanPrompt: "(config-vlan)", ifRangePrompt: "(config-if-range)",
		needsVLAN: true, ranges: true, acls: true, nxosACLs: true,
		lagPrefix: "port-channel", lagMax: 4096, mlagWord: "vpc", rateWord: "rate",
		invalid: func(cmd string) string {
			return strings.Repeat(" ", len(cmd)/2) + "^\n% Invalid command at '^' marker."
		},
		missing: func(id string) string { return "ERROR: Access VLAN " + id + " does not exist" },
		show:    nxosShow,
		save: map[string]string{"copy running-config startup-config": "[########################################] 100%\n" +
			"Copy complete, now saving to disk (please wait)...\nCopy complete.\n"},
	}
}

func firstWord(cmd string) string {
	if f := strings.Fields(cmd); len(f) > 0 {
		return f[0]
	}
	return ""
}

func mustJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

// eosShow answers EOS's show commands with its JSON ("| json").
func eosShow(s *Server, cmd string) (string, bool) {
	cfg := s.Config
	switch cmd {
	case "show version | json":
		return mustJSON(map[string]any{"modelName": "vEOS-lab", "version": "4.31.2F", "serialNumber": "vendortest"}), true
	case "show vlan | json":
		vlans := map[string]any{}
		cfg.edit(func(v map[int]string, _ map[string]*PortConfig) {
			for id, name := range v {
				vlans[strconv.Itoa(id)] = map[string]any{"name": name, "status": "active", "interfaces": map[string]any{}, "dynamic": false}
			}
		})
		return mustJSON(map[string]any{"vlans": vlans, "sourceDetail": ""}), true
	case "show interfaces switchport | json":
		ports := map[string]any{}
		for _, n := range cfg.PortNames() {
			p, _ := cfg.Port(n)
			allowed := "ALL"
			if p.Allowed != nil {
				allowed = vlanList(p.Allowed)
			}
			ports[n] = map[string]any{"enabled": true, "switchportInfo": map[string]any{
				"mode": p.Mode, "accessVlanId": p.Access, "trunkingNativeVlanId": p.Native,
				"trunkAllowedVlans": allowed, "macLearning": true, "tpid": "0x8100"}}
		}
		return mustJSON(map[string]any{"switchports": ports}), true
	case "show running-config":
		return runningConfig(s), true
	case "show running-config | json":
		return eosRunningConfigJSON(s), true
	}
	return "", false
}

// nxosShow answers NX-OS's show commands with its JSON: TABLE_x/ROW_x, a row alone when there is one.
func nxosShow(s *Server, cmd string) (string, bool) {
	cfg := s.Config
	rows := func(r []map[string]any) any {
		if len(r) == 1 {
			return r[0]
		}
		return r
	}
	switch cmd {
	case "show version | json":
		return mustJSON(map[string]any{"nxos_ver_str": "10.3(4a)", "chassis_id": "Nexus9000 C9300v Chassis"}), true
	case "show vlan brief | json":
		var r []map[string]any
		cfg.edit(func(v map[int]string, _ map[string]*PortConfig) {
			for id, name := range v {
				r = append(r, map[string]any{"vlanshowbr-vlanid": strconv.Itoa(id), "vlanshowbr-vlanid-utf": strconv.Itoa(id),
					"vlanshowbr-vlanname": name, "vlanshowbr-vlanstate": "active", "vlanshowbr-shutstate": "noshutdown"})
			}
		})
		return mustJSON(map[string]any{"TABLE_vlanbriefxbrief": map[string]any{"ROW_vlanbriefxbrief": rows(r)}}), true
	case "show running-config interface":
		return nxosRunningConfigInterface(s), true
	case "show running-config aclmgr":
		return nxosRunningConfigACLs(s), true
	case "show interface switchport | json":
		var r []map[string]any
		for _, n := range cfg.PortNames() {
			p, _ := cfg.Port(n)
			trunk := "1-4094"
			if p.Allowed != nil {
				trunk = vlanList(p.Allowed)
			}
			r = append(r, map[string]any{"interface": n, "switchport": "Enabled", "oper_mode": p.Mode,
				"access_vlan": strconv.Itoa(p.Access), "native_vlan": strconv.Itoa(p.Native), "trunk_vlans": trunk})
		}
		return mustJSON(map[string]any{"TABLE_interface": map[string]any{"ROW_interface": rows(r)}}), true
	case "show running-config":
		return runningConfig(s), true
	}
	return "", false
}

// runningConfig is a long text, so paging shows when it is not turned off.
func runningConfig(s *Server) string {
	var b strings.Builder
	b.WriteString("! Command: show running-config\n")
	for _, id := range s.Config.VLANs() {
		fmt.Fprintf(&b, "vlan %d\n!\n", id)
	}
	for _, n := range s.Config.PortNames() {
		p, _ := s.Config.Port(n)
		fmt.Fprintf(&b, "interface %s\n   switchport mode %s\n   switchport access vlan %d\n!\n", n, p.Mode, p.Access)
	}
	b.WriteString("end\n")
	return b.String()
}
