package measure

import (
	"context"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// WatchPeakHeap samples the heap in use until ctx ends; the returned func gives the peak so far.
// It reads runtime/metrics, which does not stop the world as runtime.ReadMemStats does: ten
// samples a second of that were a visible part of the CPU this test charges to the manager.
func WatchPeakHeap(ctx context.Context) func() uint64 {
	var peak atomic.Uint64
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	var mu sync.Mutex
	sample := func() {
		mu.Lock()
		defer mu.Unlock()
		metrics.Read(samples)
		inUse := samples[0].Value.Uint64() + samples[1].Value.Uint64() // runtime.MemStats.HeapInuse
		if inUse > peak.Load() {
			peak.Store(inUse)
		}
	}
	sampleUntilDone(ctx, sample)
	return func() uint64 { sample(); return peak.Load() }
}

// sampleUntilDone calls sample now and every 100 ms until ctx ends.
func sampleUntilDone(ctx context.Context, sample func()) {
	sample()
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				sample()
			}
		}
	}()
}
