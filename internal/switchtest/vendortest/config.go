// Package vendortest emulates vendor switches over SSH for tests and benchmarks: an SSH server
// (golang.org/x/crypto/ssh) per networkOS (eos, nxos, junos, sonic, dellos10, cumulus) that
// behaves like that OS as a driver sees it: its prompts and modes (exec, privileged,
// configuration, Junos' candidate configuration and commit), paging until it is turned off, its
// error lines for commands it refuses, its JSON (or text) show output, and a running
// configuration it keeps, so what is read back is what was applied.
//
// The emulation covers the commands metalwire's drivers send and the show commands they read;
// anything else is refused with the OS's error line, as a real switch refuses a typo.
package vendortest

import (
	"maps"
	"slices"
	"sort"
	"sync"
)

// PortConfig is one port's switching configuration as the switch keeps it.
type PortConfig struct {
	// Mode is "access" or "trunk".
	Mode string
	// Access is the access VLAN (also kept while the port is a trunk, as the CLIs do).
	Access int
	// Native is the trunk's native VLAN; Allowed its allowed VLANs, ascending.
	Native  int
	Allowed []int
	// Description is the interface's description line.
	Description string
	// Channel is the port-channel a member port belongs to (0: none), ChannelMode its
	// "channel-group N mode" (active, passive, on), LACPFast its "lacp timer fast".
	Channel     int
	ChannelMode string
	LACPFast    bool
	// MLAG is a port-channel's "mlag N" (0: none); NVUE: a bond's "bond mlag id".
	MLAG int
	// AccessGroups are the interface's access-list bindings as typed ("ip access-group L in").
	AccessGroups []string
	// Shutdown is the port's administrative state: shut (EOS, NX-OS, OS10 "shutdown"; Junos
	// "disable"; NVUE "link state down"; SONiC admin_status down).
	Shutdown bool
	// Bond is the NVUE bond a member port belongs to (""); BondMode is a bond's "bond mode"
	// (lacp, static; "" for a port that is no bond). LACPFast is its "bond lacp-rate fast".
	Bond, BondMode string
}

// Config is a switch's configuration: its VLANs and its ports.
type Config struct {
	mu    sync.Mutex
	vlans map[int]string
	ports map[string]*PortConfig
	// acls are the access lists by name.
	acls map[string]*ACLConfig
	// mclag is a SONiC switch's MCLAG domain (nil: none).
	mclag *SONiCMCLAGDomain
	// db are a SONiC switch's CONFIG_DB tables kept as rows (sonicacl.go), by table and key.
	db map[string]map[string]map[string]any
}

// ACLConfig is an access list: its family and its entries by sequence number, as the switch
// shows them.
type ACLConfig struct {
	V6      bool
	Entries map[int]string
}

// NewConfig is a factory-default switch: VLAN 1, the ports access ports of VLAN 1.
func NewConfig(ports ...string) *Config {
	c := &Config{vlans: map[int]string{1: "default"}, ports: map[string]*PortConfig{}, acls: map[string]*ACLConfig{}}
	for _, p := range ports {
		c.ports[p] = defaultPort()
	}
	return c
}

func defaultPort() *PortConfig { return &PortConfig{Mode: "access", Access: 1, Native: 1} }

// VLANs lists the defined VLAN ids, ascending.
func (c *Config) VLANs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.vlans))
}

// Port returns a copy of a port's configuration.
func (c *Config) Port(name string) (PortConfig, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.ports[name]
	if !ok {
		return PortConfig{}, false
	}
	cp := *p
	cp.Allowed = slices.Clone(p.Allowed)
	cp.AccessGroups = slices.Clone(p.AccessGroups)
	return cp, true
}

// SetShutdown shuts (or opens) a port as an operator would by hand, outside metalwire.
func (c *Config) SetShutdown(port string, down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.ports[port]; ok {
		p.Shutdown = down
	}
}

// SetACLEntry writes an entry of an existing access list as an operator would by hand, outside
// metalwire (text as the switch shows it).
func (c *Config) SetACLEntry(list string, seq int, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.acls[list]; ok {
		a.Entries[seq] = text
	}
}

// ACL returns a copy of an access list.
func (c *Config) ACL(name string) (ACLConfig, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.acls[name]
	if !ok {
		return ACLConfig{}, false
	}
	return ACLConfig{V6: a.V6, Entries: maps.Clone(a.Entries)}, true
}

// ACLNames lists the access lists, sorted.
func (c *Config) ACLNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.acls))
}

// PortNames lists the ports, sorted.
func (c *Config) PortNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.ports))
}

// Clone is a deep copy (Junos' candidate configuration).
func (c *Config) Clone() *Config {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &Config{vlans: maps.Clone(c.vlans), ports: map[string]*PortConfig{}, acls: map[string]*ACLConfig{}}
	for n, p := range c.ports {
		cp := *p
		cp.Allowed = slices.Clone(p.Allowed)
		cp.AccessGroups = slices.Clone(p.AccessGroups)
		out.ports[n] = &cp
	}
	for n, a := range c.acls {
		out.acls[n] = &ACLConfig{V6: a.V6, Entries: maps.Clone(a.Entries)}
	}
	return out
}

// replace takes other's content (a commit).
func (c *Config) replace(other *Config) {
	o := other.Clone()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.vlans, c.ports, c.acls = o.vlans, o.ports, o.acls
}

// edit runs f on the configuration under its lock.
func (c *Config) edit(f func(vlans map[int]string, ports map[string]*PortConfig)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c.vlans, c.ports)
}

func addInts(list []int, add ...int) []int {
	for _, v := range add {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	sort.Ints(list)
	return list
}

func removeInts(list []int, rm ...int) []int {
	return slices.DeleteFunc(list, func(v int) bool { return slices.Contains(rm, v) })
}
