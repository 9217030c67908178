package openvswitch_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/switchdriver/openvswitch"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// TestBenchFabricDrivers (make bench-fabric-drivers) measures the OVSDB driver alone: N switches
// (FABRIC_BENCH_SWITCHES, default 20) of M ports (FABRIC_BENCH_PORTS, default 100), one batch
// per switch putting every port in a VLAN, all switches at once; then the same batch again,
// which must send nothing. It prints the time and the transactions per switch.
func TestBenchFabricDrivers(t *testing.T) {
	if os.Getenv("METALWIRE_BENCH") != "1" {
		t.Skip("a benchmark: run it with make bench-fabric-drivers (METALWIRE_BENCH=1)")
	}
	n, m := envInt(t, "FABRIC_BENCH_SWITCHES", 20), envInt(t, "FABRIC_BENCH_PORTS", 100)
	start := time.Now()
	fleet := ovstest.StartFleet(t, n, m)
	fmt.Printf("started %d ovsdb-servers with %d ports each in %s\n", n, m, time.Since(start).Round(time.Millisecond))

	round := func(name string) (time.Duration, []int) {
		t.Helper()
		txns := make([]int, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		begin := time.Now()
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				txns[i], errs[i] = applyOne(fleet, i)
			}(i)
		}
		wg.Wait()
		d := time.Since(begin)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: switch %d: %v", name, i, err)
			}
		}
		return d, txns
	}
	d1, t1 := round("join")
	d2, t2 := round("again")
	for i := range t1 {
		if t1[i] != 1 || t2[i] != 0 {
			t.Fatalf("switch %d: %d then %d transactions, want 1 then 0", i, t1[i], t2[i])
		}
	}
	for i, s := range fleet.Switches {
		if got := s.Ports(t)[fleet.Ports[i][m-1]]; got.Tag != 1001+m-1 {
			t.Fatalf("switch %d: last port reads %+v after the batch", i, got)
		}
	}
	fmt.Printf("join:  %d switches x %d ports, one batch each: %s, transactions per switch %v\n", n, m, d1.Round(time.Millisecond), t1)
	fmt.Printf("again: same state re-applied: %s, transactions per switch %v\n", d2.Round(time.Millisecond), t2)
}

// applyOne opens a session to switch i, puts port j in VLAN 1001+j, and returns the
// transactions sent.
func applyOne(fleet *ovstest.Fleet, i int) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := fleet.Switches[i]
	sess, err := openvswitch.Driver{}.Connect(ctx, fabric.Endpoint{Switch: fmt.Sprint("sw", i), Address: s.TCPRemote, Bridge: fleet.Bridges[i]})
	if err != nil {
		return 0, err
	}
	defer func() { _ = sess.Close() }()
	batch := fabric.Batch{}
	for j, p := range fleet.Ports[i] {
		batch = append(batch, fabric.Change{Op: fabric.OpAccessPort, Port: fabric.Port{Name: p, Mode: fabric.ModeAccess, VLAN: 1001 + j}})
	}
	if err := sess.Apply(ctx, batch); err != nil {
		return 0, err
	}
	return sess.(*openvswitch.Session).Changes(), nil
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}
