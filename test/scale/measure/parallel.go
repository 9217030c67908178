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
	for err := range errs {
		t.Fatal(err)
	}
}
