package vendortest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

func init() {
	personalities["dellos10"] = &iosLike{
		hostname: "OS10", startMode: "enable",
		ifPrompt: "(conf-if-%s)", vlanPrompt: "(conf-if-vl-%s)",
		vlanIsInterface: true, addAllowed: true, needsVLAN: true, acls: true, os10ACLs: true,
		lagPrefix: "port-channel", lagMax: 128, rateWord: "rate",
		invalid: func(string) string { return "% Error: Unrecognized command." },
		missing: func(id string) string { return "% Error: vlan" + id + " does not exist." },
		show:    os10Show,
		save:    map[string]string{"write memory": ""},
	}
}

// os10Show answers OS10's show commands; OS10 prints text, no JSON.
func os10Show(s *Server, cmd string) (string, bool) {
	switch cmd {
	case "show version":
		return "Dell SmartFabric OS10 Enterprise\nCopyright (c) 1999-2025 by Dell Inc. All Rights Reserved.\n" +
			"OS Version: 10.5.6.0\nBuild Version: 10.5.6.0.133\nSystem Type: S5248F-ON\n", true
	case "show running-configuration":
		var b strings.Builder
		b.WriteString("! Version 10.5.6.0\n!\nhostname OS10\n!\n")
		for _, id := range s.Config.VLANs() {
			fmt.Fprintf(&b, "interface vlan%d\n no shutdown\n!\n", id)
		}
		for _, n := range s.Config.PortNames() {
			p, _ := s.Config.Port(n)
			fmt.Fprintf(&b, "interface %s\n", n)
			if p.Shutdown {
				b.WriteString(" shutdown\n")
			} else {
				b.WriteString(" no shutdown\n")
			}
			if p.Mode == "trunk" {
				b.WriteString(" switchport mode trunk\n")
			}
			if p.Access != 1 {
				fmt.Fprintf(&b, " switchport access vlan %d\n", p.Access)
			}
			if len(p.Allowed) > 0 {
				fmt.Fprintf(&b, " switchport trunk allowed vlan %s\n", vlanList(p.Allowed))
			}
			if p.Description != "" {
				fmt.Fprintf(&b, " description %q\n", p.Description)
			}
			if p.Channel > 0 {
				fmt.Fprintf(&b, " channel-group %d mode %s\n", p.Channel, p.ChannelMode)
			}
			if p.LACPFast {
				b.WriteString(" lacp rate fast\n")
			}
			for _, g := range p.AccessGroups {
				fmt.Fprintf(&b, " %s\n", g)
			}
			b.WriteString(" flowcontrol receive on\n!\n")
		}
		os10ACLSections(s.Config, &b)
		return b.String(), true
	}
	return "", false
}

// os10ACLSections prints the access lists as "show running-configuration" does: a block per
// list, its entries "seq N TEXT" in sequence order.
func os10ACLSections(cfg *Config, b *strings.Builder) {
	for _, name := range cfg.ACLNames() {
		a, _ := cfg.ACL(name)
		kw := "ip"
		if a.V6 {
			kw = "ipv6"
		}
		fmt.Fprintf(b, "%s access-list %s\n", kw, name)
		for _, seq := range slices.Sorted(maps.Keys(a.Entries)) {
			fmt.Fprintf(b, " seq %d %s\n", seq, a.Entries[seq])
		}
		b.WriteString("!\n")
	}
}
