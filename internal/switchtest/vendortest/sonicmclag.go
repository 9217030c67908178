package vendortest

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// SONiCMCLAGDomain is a SONiC switch's MCLAG domain (its MCLAG_DOMAIN row); a switch has at
// most one. Its members are port-channels whose PortConfig.MLAG is the domain's id.
type SONiCMCLAGDomain struct {
	ID                         int
	SourceIP, PeerIP, PeerLink string
}

// sonicMCLAG is SONiC's "config mclag ..." as sonic-utilities (with CONFIG_DB validation) takes it:
//
//	config mclag add DOMAIN SOURCE_IP PEER_IP [PEER_IFNAME]  (sets the domain of that id when it
//	                                  exists; refused while another domain is configured)
//	config mclag del DOMAIN           (its members go with it)
//	config mclag member add DOMAIN PortChannelN[,...]  (refused for a domain or port-channel
//	                                  CONFIG_DB lacks)
//	config mclag member del DOMAIN PortChannelN[,...]
//
// It returns SONiC's refusal or "".
func sonicMCLAG(cfg *Config, f []string) string {
	if len(f) < 4 {
		return "Usage: config mclag [OPTIONS] COMMAND [ARGS]..."
	}
	member := f[2] == "member" && len(f) == 6 && (f[3] == "add" || f[3] == "del")
	idArg := f[3]
	if member {
		idArg = f[4]
	}
	id, err := strconv.Atoi(idArg)
	if err != nil || id < 1 || id > 4095 {
		return fmt.Sprintf("Invalid ConfigDB. Error: MCLAG_DOMAIN %s: domain_id must be 1-4095", idArg)
	}
	cfg.mu.Lock()
	defer cfg.mu.Unlock()
	switch {
	case f[2] == "add" && (len(f) == 6 || len(f) == 7):
		for _, a := range f[4:6] {
			if ip, err := netip.ParseAddr(a); err != nil || !ip.Is4() {
				return fmt.Sprintf("Invalid ConfigDB. Error: %s is not an IPv4 address", a)
			}
		}
		d := &SONiCMCLAGDomain{ID: id, SourceIP: f[4], PeerIP: f[5], PeerLink: "None"}
		if len(f) == 7 {
			if _, ok := cfg.ports[f[6]]; !ok {
				return fmt.Sprintf("Invalid ConfigDB. Error: peer_link %s is neither a PORT nor a PORTCHANNEL", f[6])
			}
			d.PeerLink = f[6]
		}
		if cfg.mclag != nil && cfg.mclag.ID != id {
			return fmt.Sprintf("only one mclag Domain can be configured. Already one domain %d configured ", cfg.mclag.ID)
		}
		cfg.mclag = d
	case f[2] == "del" && len(f) == 4:
		if cfg.mclag == nil || cfg.mclag.ID != id {
			return fmt.Sprintf("Invalid ConfigDB. Error: MCLAG_DOMAIN %d failed to be deleted", id)
		}
		for _, p := range cfg.ports {
			if p.MLAG == id {
				p.MLAG = 0
			}
		}
		cfg.mclag = nil
	case member:
		for _, pc := range strings.Split(f[5], ",") {
			p, ok := cfg.ports[pc]
			_, isChannel := sonicChannelNumber(pc)
			switch {
			case f[3] == "add" && (cfg.mclag == nil || cfg.mclag.ID != id):
				return fmt.Sprintf("Invalid ConfigDB. Error: MCLAG_INTERFACE %d|%s: domain %d is not in MCLAG_DOMAIN", id, pc, id)
			case f[3] == "add" && (!ok || !isChannel):
				return fmt.Sprintf("Invalid ConfigDB. Error: MCLAG_INTERFACE %d|%s: %s is not in PORTCHANNEL", id, pc, pc)
			case f[3] == "add":
				p.MLAG = id
			case !ok || p.MLAG != id:
				return fmt.Sprintf("Failed to delete mclag member %s from mclag domain %d", pc, id)
			default:
				p.MLAG = 0
			}
		}
	default:
		return fmt.Sprintf("No such command %q.", strings.Join(f[2:], " "))
	}
	return ""
}

// sonicMCLAGTables fills sonic-cfggen's MCLAG_DOMAIN and MCLAG_INTERFACE tables.
func sonicMCLAGTables(cfg *Config, table string, out map[string]any) {
	cfg.mu.Lock()
	defer cfg.mu.Unlock()
	switch table {
	case "MCLAG_DOMAIN":
		if d := cfg.mclag; d != nil {
			out[strconv.Itoa(d.ID)] = map[string]string{"source_ip": d.SourceIP, "peer_ip": d.PeerIP, "peer_link": d.PeerLink}
		}
	case "MCLAG_INTERFACE":
		for name, p := range cfg.ports {
			if _, isChannel := sonicChannelNumber(name); isChannel && p.MLAG != 0 {
				out[fmt.Sprintf("%d|%s", p.MLAG, name)] = map[string]string{"if_type": "PortChannel"}
			}
		}
	}
}

// SONiCMCLAG is the switch's MCLAG domain, if it has one.
func (c *Config) SONiCMCLAG() (SONiCMCLAGDomain, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mclag == nil {
		return SONiCMCLAGDomain{}, false
	}
	return *c.mclag, true
}

// SetSONiCMCLAG sets the switch's MCLAG domain by hand, as an operator would outside metalwire
// (members of another id are dropped, as config mclag del does).
func (c *Config) SetSONiCMCLAG(d SONiCMCLAGDomain) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.ports {
		if p.MLAG != 0 && p.MLAG != d.ID {
			p.MLAG = 0
		}
	}
	c.mclag = &d
}
