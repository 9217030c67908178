package openvswitch_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/switchdriver/openvswitch"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// BenchmarkSession is what the networkdevice controller does to one switch per reconcile: open a
// session, read the version and the ports back, apply a batch of 10 of its 100 ports, close. It
// reports this process's CPU per session (cpu-ms/session), which, unlike wall time, a busy
// machine does not inflate: go test -bench Session ./internal/switchdriver/openvswitch.
// "dial" opens a connection per session (the zero Driver), "kept" reuses New's.
func BenchmarkSession(b *testing.B) {
	ovstest.Require(b, "ovsdb-server", "ovsdb-tool", "ovs-vsctl")
	fleet := ovstest.StartFleet(b, 1, 100)
	ep := fabric.Endpoint{Switch: "sw0", Address: fleet.Switches[0].TCPRemote, Bridge: fleet.Bridges[0]}
	kept := openvswitch.New()
	b.Cleanup(kept.CloseIdle)
	b.Run("dial", func(b *testing.B) { benchSessions(b, openvswitch.Driver{}, ep, fleet.Ports[0]) })
	b.Run("kept", func(b *testing.B) { benchSessions(b, kept, ep, fleet.Ports[0]) })
}

func benchSessions(b *testing.B, drv openvswitch.Driver, ep fabric.Endpoint, ports []string) {
	ctx := context.Background()
	b.ResetTimer()
	cpu0 := processCPU(b)
	for i := 0; i < b.N; i++ {
		sess, err := drv.Connect(ctx, ep)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := sess.Info(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := sess.Read(ctx, ports); err != nil {
			b.Fatal(err)
		}
		var batch fabric.Batch
		for j := 0; j < 10; j++ {
			p := ports[(i*10+j)%len(ports)]
			batch = append(batch, fabric.Change{Op: fabric.OpAccessPort, Port: fabric.Port{Name: p, Mode: fabric.ModeAccess, VLAN: 1000 + i%2}})
		}
		if err := sess.Apply(ctx, batch); err != nil {
			b.Fatal(err)
		}
		_ = sess.Close()
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/session")
}

func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
