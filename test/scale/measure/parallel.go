package measure

import (
	"sync"
	"sync/atomic"
	"testing"
)

// Parallel runs fn for 0..n-1 on workers goroutines, as many clients writing at once, and fails
// the test on the first error.
func Parallel(t *testing.T, workers, n int, fn func(i int) error) {
	t.Helper()
	if err := RunParallel(workers, n, fn); err != nil {
		t.Fatal(err)
	}
}

// RunParallel runs fn for 0..n-1 on workers goroutines and returns the first error.
func RunParallel(workers, n int, fn func(i int) error) error {
	var next atomic.Int64
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil once closed and empty
}
