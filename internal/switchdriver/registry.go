// Package switchdriver holds the registry that maps a NetworkDevice switch's networkOS to the
// fabric.Driver that manages it. Each driver lives in its own package below this one and
// registers itself in Default from an init function; the fabric controller takes a *Registry as
// a field, so a test can hand it exactly the drivers it wants.
package switchdriver

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Registry maps networkOS values to drivers. The zero value is empty and ready to use.
type Registry struct {
	mu      sync.RWMutex
	drivers map[string]fabric.Driver
}

// Default is the registry the manager uses; driver packages register into it.
var Default = &Registry{}

// Register adds d under d.NetworkOS(), replacing any driver of that name.
func (r *Registry) Register(d fabric.Driver) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.drivers == nil {
		r.drivers = map[string]fabric.Driver{}
	}
	r.drivers[d.NetworkOS()] = d
}

// Clone returns a registry with the same drivers, to add to without changing r.
func (r *Registry) Clone() *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := &Registry{drivers: make(map[string]fabric.Driver, len(r.drivers))}
	maps.Copy(out.drivers, r.drivers)
	return out
}

// For returns the driver of networkOS, or an error listing the registered ones.
func (r *Registry) For(networkOS string) (fabric.Driver, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if d, ok := r.drivers[networkOS]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("no switch driver for networkOS %q in this manager; drivers: %s", networkOS, strings.Join(r.namesLocked(), ", "))
}

// Names lists the registered networkOS values, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namesLocked()
}

func (r *Registry) namesLocked() []string {
	names := make([]string, 0, len(r.drivers))
	for n := range r.drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return []string{"(none)"}
	}
	return names
}

// Register adds d to Default.
func Register(d fabric.Driver) { Default.Register(d) }

// For returns Default's driver of networkOS.
func For(networkOS string) (fabric.Driver, error) { return Default.For(networkOS) }
