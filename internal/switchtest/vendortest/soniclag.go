package vendortest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// sonicPortChannel is SONiC's "config portchannel ..." as sonic-utilities checks it:
//
//	config portchannel add PortChannelN [--fast-rate true|false] [--min-links N]
//	config portchannel del PortChannelN        (refused while it has members, VLANs or is an
//	                                            MCLAG member)
//	config portchannel member add PortChannelN EthernetX (refused while X is in a VLAN or
//	                                                     another port-channel)
//	config portchannel member del PortChannelN EthernetX
//
// A port-channel is kept as a port of its name (its VLAN memberships and state as a port's);
// a member's Channel is the port-channel's number (its ChannelMode "active": it is a member). It returns SONiC's refusal or "".
func sonicPortChannel(cfg *Config, f []string) string {
	if len(f) < 4 {
		return "Usage: config portchannel [OPTIONS] COMMAND [ARGS]..."
	}
	name := f[3]
	n, ok := sonicChannelNumber(name)
	if f[2] == "member" && len(f) == 6 {
		name = f[4]
		n, ok = sonicChannelNumber(name)
	}
	if !ok {
		return fmt.Sprintf("%s is invalid!, name should have prefix 'PortChannel' and suffix '<0-9999>'", name)
	}
	var msg string
	cfg.edit(func(_ map[int]string, ports map[string]*PortConfig) {
		pc, exists := ports[name]
		switch {
		case f[2] == "add":
			fast := false
			for i := 4; i < len(f); i++ {
				switch {
				case f[i] == "--fast-rate" && i+1 < len(f) && (f[i+1] == "true" || f[i+1] == "false"):
					fast = f[i+1] == "true"
					i++
				case f[i] == "--min-links" && i+1 < len(f):
					i++
				default:
					msg = fmt.Sprintf("No such option: %s", f[i])
					return
				}
			}
			if exists {
				msg = name + " already exists!"
				return
			}
			ports[name] = &PortConfig{LACPFast: fast}
		case f[2] == "del" && len(f) == 4:
			switch {
			case !exists:
				msg = name + " is not present."
			case pc.Access != 0 || len(pc.Allowed) > 0:
				v := pc.Access
				if v == 0 {
					v = pc.Allowed[0]
				}
				msg = fmt.Sprintf("%s has vlan Vlan%d configured, remove vlan membership to proceed", name, v)
			case len(sonicMembers(ports, n)) > 0:
				msg = fmt.Sprintf("Portchannel %s contains members. Remove members before deleting Portchannel!", name)
			case pc.MLAG != 0:
				msg = fmt.Sprintf("Invalid ConfigDB. Error: %s is in MCLAG_INTERFACE of domain %d; remove it from the domain first", name, pc.MLAG)
			default:
				delete(ports, name)
			}
		case f[2] == "member" && len(f) == 6 && (f[3] == "add" || f[3] == "del"):
			port := f[5]
			p, isPort := ports[port]
			switch {
			case !strings.HasPrefix(port, "Ethernet") || !isPort:
				msg = "Interface name is invalid. Please enter a valid interface name!!"
			case !exists:
				msg = name + " is not present."
			case f[3] == "del" && (p.ChannelMode == "" || p.Channel != n):
				msg = fmt.Sprintf("%s is not a member of portchannel %s", port, name)
			case f[3] == "del":
				p.Channel, p.ChannelMode = 0, ""
			case p.Access != 0 || len(p.Allowed) > 0:
				v := p.Access
				if v == 0 {
					v = p.Allowed[0]
				}
				msg = fmt.Sprintf("%s Interface configured as VLAN_MEMBER under vlan : Vlan%d", port, v)
			case p.ChannelMode != "":
				msg = fmt.Sprintf("%s Interface is already member of PortChannel%d ", port, p.Channel)
			default:
				p.Channel, p.ChannelMode = n, "active"
			}
		default:
			msg = fmt.Sprintf("No such command %q.", strings.Join(f[2:], " "))
		}
	})
	return msg
}

// sonicChannelNumber reads PortChannelN (N 0-9999, the name at most 15 characters).
func sonicChannelNumber(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, "PortChannel")
	n, err := strconv.Atoi(digits)
	return n, ok && err == nil && digits != "" && !strings.HasPrefix(digits, "+") && n >= 0 && n <= 9999 && len(name) <= 15
}

// sonicMembers are the ports in port-channel n, sorted.
func sonicMembers(ports map[string]*PortConfig, n int) []string {
	var out []string
	for name, p := range ports {
		if p.ChannelMode != "" && p.Channel == n && strings.HasPrefix(name, "Ethernet") {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// sonicChannelTables fills sonic-cfggen's PORTCHANNEL and PORTCHANNEL_MEMBER tables.
func sonicChannelTables(cfg *Config, table string, out map[string]any) {
	for _, name := range cfg.PortNames() {
		p, _ := cfg.Port(name)
		_, isChannel := sonicChannelNumber(name)
		switch {
		case table == "PORTCHANNEL" && isChannel:
			admin := "up"
			if p.Shutdown {
				admin = "down"
			}
			out[name] = map[string]string{"admin_status": admin, "fast_rate": strconv.FormatBool(p.LACPFast), "lacp_key": "auto", "min_links": "1", "mtu": "9100"}
		case table == "PORTCHANNEL_MEMBER" && !isChannel && p.ChannelMode != "":
			out[fmt.Sprintf("PortChannel%d|%s", p.Channel, name)] = map[string]any{}
		}
	}
}

// AddSONiCPortChannel makes a port-channel of those members as an operator would by hand,
// outside metalwire: the members leave their VLANs.
func (c *Config) AddSONiCPortChannel(name string, members ...string) {
	n, _ := sonicChannelNumber(name)
	c.edit(func(_ map[int]string, ports map[string]*PortConfig) {
		ports[name] = &PortConfig{}
		for _, m := range members {
			if p, ok := ports[m]; ok {
				p.Mode, p.Access, p.Native, p.Allowed = "", 0, 0, nil
				p.Channel, p.ChannelMode = n, "active"
			}
		}
	})
}

// LeaveSONiCPortChannel takes a member out of its port-channel by hand, as "config portchannel
// member del" does.
func (c *Config) LeaveSONiCPortChannel(port string) {
	c.edit(func(_ map[int]string, ports map[string]*PortConfig) {
		if p, ok := ports[port]; ok {
			p.Channel, p.ChannelMode = 0, ""
		}
	})
}
