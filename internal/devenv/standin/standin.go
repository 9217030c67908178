// Package standin is a STAND-IN switch: an in-memory fabric.Driver used by dev mode's host
// simulator and by the fabric controller's envtests. It is not a switch and configures nothing
// real; it keeps per address the ports and VLANs a real switch would, so the controller's
// read-back/diff/apply loop runs unchanged. Real switches use the openvswitch drivers.
package standin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// ErrDown is returned by Connect while a switch is marked down.
var ErrDown = errors.New("stand-in switch is down (connection refused)")

// Driver is the stand-in driver. Each address is one simulated switch, created on first use
// with the ports given to AddPorts (or any port named on first apply).
type Driver struct {
	// OS is the networkOS it registers as (for example "openvswitch" in tests, so the same
	// NetworkDevice manifests work against it).
	OS string

	mu       sync.Mutex
	switches map[string]*Switch
}

// New returns a stand-in driver answering for networkOS.
func New(networkOS string) *Driver { return &Driver{OS: networkOS, switches: map[string]*Switch{}} }

// Switch is one simulated switch.
type Switch struct {
	mu      sync.Mutex
	down    bool
	vlans   map[int]bool
	ports   map[string]fabric.Port
	lags    map[string]fabric.LAG
	acls    map[string]fabric.ACL
	applies int
	changes int
	log     []string
	inUse   bool
}

// NetworkOS implements fabric.Driver.
func (d *Driver) NetworkOS() string { return d.OS }

// SetsACLs implements fabric.ACLSetter: the stand-in keeps the lists it is given.
func (d *Driver) SetsACLs() bool { return true }

// SetsPortState implements fabric.PortStateSetter: the stand-in keeps each port's state.
func (d *Driver) SetsPortState() bool { return true }

// DefaultPort implements fabric.Driver.
func (d *Driver) DefaultPort() int { return 6640 }

// Switch returns the simulated switch at address, creating it.
func (d *Driver) Switch(address string) *Switch {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.switches[address]
	if !ok {
		s = &Switch{vlans: map[int]bool{}, ports: map[string]fabric.Port{}}
		d.switches[address] = s
	}
	return s
}

// Connect implements fabric.Driver.
func (d *Driver) Connect(_ context.Context, ep fabric.Endpoint) (fabric.Session, error) {
	s := d.Switch(ep.Address)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return nil, fmt.Errorf("switch %s at %s: %w", ep.Switch, ep.Address, ErrDown)
	}
	if s.inUse {
		return nil, fmt.Errorf("switch %s: two sessions at once (the controller must apply one batch at a time per switch)", ep.Switch)
	}
	s.inUse = true
	return &session{s: s}, nil
}

// AddPorts creates ports in the idle VLAN, as a switch's ports exist before anyone manages them.
func (s *Switch) AddPorts(idle int, names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		if _, ok := s.ports[n]; !ok {
			s.ports[n] = fabric.Port{Name: n, Mode: fabric.ModeAccess, VLAN: idle}
		}
	}
}

// SetPort sets a port as someone at the switch's console would, behind the controller's back.
func (s *Switch) SetPort(p fabric.Port) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ports[p.Name] = p
}

// SetDown makes Connect fail (true) or succeed again (false).
func (s *Switch) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Port returns a port's configuration.
func (s *Switch) Port(name string) (fabric.Port, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.ports[name]
	return p, ok
}

// VLANs returns the VLANs defined, ascending.
func (s *Switch) VLANs() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := slices.Collect(maps.Keys(s.vlans))
	sort.Ints(ids)
	return ids
}

// Counts returns how many batches were applied and how many changes they held.
func (s *Switch) Counts() (applies, changes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applies, s.changes
}

// Log returns every change applied, in order.
func (s *Switch) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

type session struct{ s *Switch }

func (ss *session) Info(context.Context) (fabric.Info, error) {
	return fabric.Info{Version: "metalwire stand-in switch (simulated)"}, nil
}

func (ss *session) Read(_ context.Context, ports []string) (fabric.State, error) {
	s := ss.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st := fabric.State{Ports: map[string]fabric.Port{}}
	for _, n := range ports {
		if p, ok := s.ports[n]; ok {
			p.Trunk = slices.Clone(p.Trunk)
			st.Ports[n] = p
		}
		if l, ok := s.lags[n]; ok {
			if st.LAGs == nil {
				st.LAGs = map[string]fabric.LAG{}
			}
			l.Members, l.Port.Trunk = slices.Clone(l.Members), slices.Clone(l.Port.Trunk)
			st.LAGs[n] = l
		}
		if a, ok := s.acls[n]; ok {
			if st.ACLs == nil {
				st.ACLs = map[string]fabric.ACL{}
			}
			st.ACLs[n] = cloneACL(a)
		}
	}
	ids := slices.Collect(maps.Keys(s.vlans))
	sort.Ints(ids)
	for _, id := range ids {
		st.VLANs = append(st.VLANs, fabric.VLAN{ID: id})
	}
	return st, nil
}

func (ss *session) Apply(_ context.Context, batch fabric.Batch) error {
	s := ss.s
	s.mu.Lock()
	defer s.mu.Unlock()
	// Check the whole batch before changing anything, as a transaction would.
	defined := maps.Clone(s.vlans)
	for _, c := range batch {
		switch c.Op {
		case fabric.OpEnsureVLAN:
			defined[c.VLAN.ID] = true
		case fabric.OpRemoveVLAN:
			delete(defined, c.VLAN.ID)
		case fabric.OpAccessPort, fabric.OpTrunkPort:
			if !vlansPresent(defined, c.Port) {
				return fmt.Errorf("%s: a VLAN of the port is not defined on the switch", c)
			}
		case fabric.OpEnsureLAG, fabric.OpRemoveLAG:
			if c.LAG.MLAG != nil {
				return fmt.Errorf("%s: %w (the stand-in switch has no multi-chassis LAG)", c, fabric.ErrUnsupported)
			}
			if c.Op == fabric.OpEnsureLAG && !vlansPresent(defined, c.LAG.Port) {
				return fmt.Errorf("%s: a VLAN of the bond is not defined on the switch", c)
			}
		case fabric.OpEnsureACL:
			if _, err := c.ACL.FlowsOf(); err != nil {
				return fmt.Errorf("%s: %w", c, err)
			}
		case fabric.OpResetPort, fabric.OpRemoveACL:
		default:
			return fmt.Errorf("%s: %w", c.Op, fabric.ErrUnsupported)
		}
	}
	s.applies++
	s.changes += len(batch)
	for _, c := range batch {
		s.log = append(s.log, c.String())
		switch c.Op {
		case fabric.OpEnsureVLAN:
			s.vlans[c.VLAN.ID] = true
		case fabric.OpRemoveVLAN:
			delete(s.vlans, c.VLAN.ID)
		case fabric.OpAccessPort, fabric.OpTrunkPort, fabric.OpResetPort:
			p := c.Port
			p.Trunk = slices.Clone(p.Trunk)
			s.ports[p.Name] = p
		case fabric.OpEnsureLAG: // the members' ports become the bond's
			l := c.LAG
			l.Members, l.Port.Trunk = slices.Clone(l.Members), slices.Clone(l.Port.Trunk)
			for _, m := range l.Members {
				delete(s.ports, m)
			}
			if s.lags == nil {
				s.lags = map[string]fabric.LAG{}
			}
			s.lags[l.Name] = l
		case fabric.OpEnsureACL:
			if s.acls == nil {
				s.acls = map[string]fabric.ACL{}
			}
			s.acls[c.ACL.Name] = cloneACL(c.ACL)
		case fabric.OpRemoveACL:
			delete(s.acls, c.ACL.Name)
		case fabric.OpRemoveLAG: // each member an idle access port again
			if l, ok := s.lags[c.LAG.Name]; ok {
				delete(s.lags, l.Name)
				for _, m := range l.Members {
					s.ports[m] = fabric.Port{Name: m, Mode: fabric.ModeAccess, VLAN: c.LAG.Port.VLAN}
				}
			}
		}
	}
	return nil
}

func cloneACL(a fabric.ACL) fabric.ACL {
	a.Members, a.HostMACs, a.Rules, a.Flows = slices.Clone(a.Members), slices.Clone(a.HostMACs), slices.Clone(a.Rules), slices.Clone(a.Flows)
	return a
}

func vlansPresent(defined map[int]bool, p fabric.Port) bool {
	ids := p.Trunk
	if p.Mode == fabric.ModeAccess {
		ids = []int{p.VLAN}
	}
	for _, id := range ids {
		if !defined[id] {
			return false
		}
	}
	return true
}

func (ss *session) Close() error {
	ss.s.mu.Lock()
	defer ss.s.mu.Unlock()
	ss.s.inUse = false
	return nil
}
