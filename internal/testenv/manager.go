package testenv

import (
	"bytes"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"testing"
)

// ReportManagerExit reports the error a test's controller manager returned from Start. A
// runnable outliving the shutdown grace period is a known, rarely seen delay when a test's
// manager stops (docs/data-templating.md, known limits): it is logged, since the test's
// assertions about reconciling have passed or failed by then, together with the stacks of the
// goroutines still running controller code, which name the runnable that has not returned (the
// manager gives up waiting for it, it is still there). Any other error fails the test.
func ReportManagerExit(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if strings.Contains(err.Error(), "grace period") {
		t.Logf("manager shutdown was slow: %v\ngoroutines still in controller code:\n%s", err, controllerStacks())
		return
	}
	t.Errorf("manager: %v", err)
}

// controllerStacks are the stacks of the goroutines that run controller-runtime, client-go
// informer or metalwire code.
func controllerStacks() string {
	var all bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&all, 2); err != nil {
		return "(no goroutine dump: " + err.Error() + ")"
	}
	var out strings.Builder
	for _, g := range strings.Split(all.String(), "\n\n") {
		if strings.Contains(g, "sigs.k8s.io/controller-runtime") || strings.Contains(g, "github.com/metalwire/metalwire/internal/controller") ||
			strings.Contains(g, "k8s.io/client-go/tools/cache") {
			out.WriteString(g)
			out.WriteString("\n\n")
		}
	}
	return out.String()
}

// RunWithManagers runs a package's tests while its test managers run, then stops them (stop
// cancels their context) and waits for each (managers: what each Start returned on its
// channel). A manager that ended with an error fails the run, as a test would.
func RunWithManagers(m *testing.M, stop func(), managers ...<-chan error) int {
	code := m.Run()
	stop()
	for _, done := range managers {
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}
