package ovstest

import (
	"fmt"
	"sync"
	"testing"
)

// Fleet is many switches for benchmarks: ovsdb-server processes only (drivers need no
// datapath), each with one bridge of ports in the idle VLAN.
type Fleet struct {
	Switches []*Switch
	// Bridge names the managed bridge of Switches[i]; Ports[i] its ports.
	Bridges []string
	Ports   [][]string
}

// StartFleet starts n ovsdb-servers, each with a bridge of m ports (p0001...) tagged IdleVLAN,
// starting them a few at a time. Everything goes when the test ends. Call it from the test's
// own goroutine.
func StartFleet(t testing.TB, n, m int) *Fleet {
	t.Helper()
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
			s := StartSwitch(t, Options{})
			br := s.AddBridge(t, "br0")
			if m > 0 {
				s.AddPorts(t, br, IdleVLAN, ports...)
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
