package ovstest

import (
	"fmt"
	"sync"
	"testing"
)

// Fleet is many switches for benchmarks: by default ovsdb-server processes only (drivers need no
// datapath), each with one bridge of ports in the idle VLAN.
type Fleet struct {
	Switches []*Switch
	// Bridge names the managed bridge of Switches[i]; Ports[i] its ports.
	Bridges []string
	Ports   [][]string
}

// FleetOptions says what StartFleetWith starts.
type FleetOptions struct {
	// VSwitchd also runs an ovs-vswitchd (user space, in a network namespace of its own with
	// no name, so nothing outlives the test binary) per switch, and makes every port's interface a dummy one: each port then has an OpenFlow port
	// number, as access lists (flows matching in_port) and port state (port-mods) need, but no
	// kernel device and no cable. Each bridge's OpenFlow management socket (MgmtRemote) exists
	// and every port has its number when StartFleetWith returns.
	VSwitchd bool
}

// StartFleet starts n ovsdb-servers, each with a bridge of m ports (p0001...) tagged IdleVLAN,
// starting them a few at a time. Everything goes when the test ends. Call it from the test's
// own goroutine.
func StartFleet(t testing.TB, n, m int) *Fleet {
	t.Helper()
	return StartFleetWith(t, n, m, FleetOptions{})
}

// StartFleetWith is StartFleet with options (an ovs-vswitchd per switch).
func StartFleetWith(t testing.TB, n, m int, opts FleetOptions) *Fleet {
	t.Helper()
	if opts.VSwitchd {
		Require(t, "ovs-vswitchd", "ovs-ofctl", "unshare")
	}
	f := &Fleet{Switches: make([]*Switch, n), Bridges: make([]string, n), Ports: make([][]string, n)}
	ports := make([]string, m)
	for j := range ports {
		ports[j] = fmt.Sprintf("p%04d", j+1)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			s := StartSwitch(t, Options{VSwitchd: opts.VSwitchd, UnnamedNamespace: true, DummyPorts: true})
			br := s.AddBridge(t, "br0")
			switch {
			case m == 0:
			case opts.VSwitchd:
				s.AddDummyPorts(t, br, IdleVLAN, ports...)
			default:
				s.AddPorts(t, br, IdleVLAN, ports...)
			}
			if opts.VSwitchd {
				s.WaitMgmt(t, br)
				s.WaitOFPorts(t, ports...)
			}
			f.Switches[i], f.Bridges[i], f.Ports[i] = s, br, ports
		}(i)
	}
	wg.Wait()
	if t.Failed() { // a switch failed to start in its goroutine; stop here, on the test's own
		t.FailNow()
	}
	return f
}
