package vendortest

import (
	"fmt"
	"strings"
)

// junosBondStatement handles an interface's bond statements (f after "interfaces NAME"):
//
//	description TEXT                                  (delete: description)
//	aggregated-ether-options lacp active              (delete: aggregated-ether-options)
//	aggregated-ether-options lacp periodic fast|slow
//	ether-options 802.3ad aeN                         (delete: ether-options 802.3ad)
//
// It returns "syntax" for anything else.
func junosBondStatement(p *PortConfig, set bool, f []string) string {
	switch {
	case set && len(f) == 2 && f[0] == "description":
		p.Description = f[1]
	case !set && len(f) == 1 && f[0] == "description":
		p.Description = ""
	case set && len(f) == 3 && f[0] == "aggregated-ether-options" && f[1] == "lacp" && f[2] == "active":
		p.BondMode = "lacp"
	case set && len(f) == 4 && f[0] == "aggregated-ether-options" && f[1] == "lacp" && f[2] == "periodic" && (f[3] == "fast" || f[3] == "slow"):
		p.LACPFast = f[3] == "fast"
	case !set && len(f) == 1 && f[0] == "aggregated-ether-options":
		p.BondMode, p.LACPFast = "", false
	case set && len(f) == 3 && f[0] == "ether-options" && f[1] == "802.3ad" && strings.HasPrefix(f[2], "ae"):
		p.Bond = f[2]
	case !set && len(f) == 2 && f[0] == "ether-options" && f[1] == "802.3ad":
		p.Bond = ""
	default:
		return "syntax"
	}
	return ""
}

// junosBondCheck is commit check for bonds: a member's ae exists, and a member has no
// ethernet-switching of its own.
func junosBondCheck(ports map[string]*PortConfig, name string, p *PortConfig) string {
	if p.Bond == "" {
		return ""
	}
	where := fmt.Sprintf("[edit interfaces %s ether-options 802.3ad]\n  'bundle'\n    ", name)
	if _, ok := ports[p.Bond]; !ok {
		return where + fmt.Sprintf("aggregated Ethernet interface %s is not configured\nerror: configuration check-out failed\n", p.Bond)
	}
	if p.Mode != "" || len(p.AccessGroups) > 0 {
		return where + fmt.Sprintf("interface %s is a member of %s and cannot have family ethernet-switching\nerror: configuration check-out failed\n", name, p.Bond)
	}
	return ""
}

// junosBondShow adds an interface's bond statements to its "show configuration interfaces |
// display json" entry, as Junos prints them.
func junosBondShow(p PortConfig, iface map[string]any) {
	if p.Description != "" {
		iface["description"] = p.Description
	}
	if p.BondMode == "lacp" {
		lacp := map[string]any{"active": []any{nil}}
		if p.LACPFast {
			lacp["periodic"] = "fast"
		}
		iface["aggregated-ether-options"] = map[string]any{"lacp": lacp}
	}
	if p.Bond != "" {
		iface["ether-options"] = map[string]any{"ieee-802.3ad": map[string]any{"bundle": p.Bond}}
	}
}
