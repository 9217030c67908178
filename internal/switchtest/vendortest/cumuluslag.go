package vendortest

import (
	"fmt"
	"strconv"
	"strings"
)

// cumulusBond stages NVUE's bond lines on the pending configuration:
//
//	nv set interface B bond member M      (creates bond B; M leaves any other bond)
//	nv unset interface B bond member M
//	nv set interface B bond mode lacp|static
//	nv set interface B bond lacp-rate fast|slow
//	nv set interface B bond mlag id N     nv unset interface B bond mlag
//	nv set interface I description TEXT   nv unset interface I description
//	nv unset interface B                  (removes the bond; its members are left unconfigured)
//
// It returns NVUE's refusal or "".
func cumulusBond(cfg *Config, set bool, a []string, cmd string) string {
	name := a[1]
	var msg string
	cfg.edit(func(_ map[int]string, ports map[string]*PortConfig) {
		p, exists := ports[name]
		isBond := exists && p.BondMode != ""
		switch {
		case len(a) == 2 && !set:
			if !exists {
				msg = fmt.Sprintf("interface %s does not exist", name)
				return
			}
			delete(ports, name)
			for _, q := range ports {
				if q.Bond == name {
					q.Bond = ""
				}
			}
		case a[2] == "description" && set && len(a) == 4 && exists:
			p.Description = a[3]
		case a[2] == "description" && !set && len(a) == 3 && exists:
			p.Description = ""
		case a[2] == "bond" && len(a) == 5 && a[3] == "member":
			m, ok := ports[a[4]]
			if !ok || m.BondMode != "" {
				msg = fmt.Sprintf("interface %s does not exist", a[4])
				return
			}
			if !set {
				if m.Bond == name {
					m.Bond = ""
				}
				return
			}
			if !exists {
				if _, swp := cumulusPortNumber(name); swp {
					msg = fmt.Sprintf("%s is a switch port; a bond needs another name", name)
					return
				}
				p = &PortConfig{BondMode: "lacp"}
				ports[name] = p
			}
			m.Bond = name
		case a[2] == "bond" && set && len(a) == 5 && a[3] == "mode" && isBond && (a[4] == "lacp" || a[4] == "static"):
			p.BondMode = a[4]
		case a[2] == "bond" && set && len(a) == 5 && a[3] == "lacp-rate" && isBond && (a[4] == "fast" || a[4] == "slow"):
			p.LACPFast = a[4] == "fast"
		case a[2] == "bond" && set && len(a) == 6 && a[3] == "mlag" && a[4] == "id" && isBond:
			id, err := strconv.Atoi(a[5])
			if err != nil || id < 1 || id > 65535 {
				msg = fmt.Sprintf("%q is not a valid mlag id", a[5])
				return
			}
			for other, q := range ports {
				if other != name && q.MLAG == id {
					msg = fmt.Sprintf("mlag id %d is already used by %s", id, other)
					return
				}
			}
			p.MLAG = id
		case a[2] == "bond" && !set && len(a) == 4 && a[3] == "mlag" && isBond:
			p.MLAG = 0
		default:
			msg = "Invalid config: " + cmd
		}
	})
	return msg
}

// cumulusPortNumber says whether name is a front-panel port (swpN).
func cumulusPortNumber(name string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "swp"))
	return n, err == nil && strings.HasPrefix(name, "swp")
}

// cumulusBondShow adds a bond's (or a member's) fields to its "nv config show -o json" entry.
func cumulusBondShow(cfg *Config, name string, p PortConfig, iface map[string]any) {
	if p.Description != "" {
		iface["description"] = p.Description
	}
	if p.BondMode == "" {
		return
	}
	iface["type"] = "bond"
	members := map[string]any{}
	for _, n := range cfg.PortNames() {
		if q, _ := cfg.Port(n); q.Bond == name {
			members[n] = map[string]any{}
		}
	}
	rate := "slow"
	if p.LACPFast {
		rate = "fast"
	}
	bond := map[string]any{"member": members, "mode": p.BondMode, "lacp-rate": rate}
	if p.MLAG > 0 {
		bond["mlag"] = map[string]any{"id": p.MLAG, "enable": "on"}
	}
	iface["bond"] = bond
}
