package measure

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/metalwire/metalwire/internal/testneeds"
)

// newContainer makes a memory cgroup of limit bytes for a test and removes it when the test ends.
func newContainer(t *testing.T, limit int64) *Container {
	t.Helper()
	if os.Geteuid() != 0 {
		testneeds.Missing(t, "a memory cgroup for a benchmark's manager needs root")
	}
	c, err := NewContainer(fmt.Sprintf("metalwire-test-%d-%d", os.Getpid(), limit), limit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Remove(); err != nil {
			t.Errorf("removing the cgroup: %v", err)
		}
	})
	return c
}

// A benchmark's manager run in a container is in the cgroup from its first instruction, its
// memory counts there, and the kernel stops it at the limit: the run then says so.
func TestAContainerHoldsItsProcessToTheLimit(t *testing.T) {
	c := newContainer(t, 64<<20)
	cmd := exec.Command("cat", "/proc/self/cgroup")
	c.Wrap(cmd)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cat in the cgroup: %v", err)
	}
	if !strings.Contains(string(out), fmt.Sprintf("metalwire-test-%d-%d", os.Getpid(), 64<<20)) {
		t.Errorf("the wrapped process is not in the cgroup; its /proc/self/cgroup:\n%s", out)
	}

	// dd holds a block of bs bytes in memory at once.
	fits := exec.Command("dd", "if=/dev/zero", "of=/dev/null", "bs=32M", "count=1")
	c.Wrap(fits)
	if out, err := fits.CombinedOutput(); err != nil {
		t.Fatalf("32 MiB in a 64 MiB cgroup: %v\n%s", err, out)
	}
	peak, err := c.Peak()
	if err != nil {
		t.Fatal(err)
	}
	if peak < 32<<20 || peak > 64<<20 {
		t.Errorf("peak usage after holding 32 MiB in a 64 MiB cgroup = %d MiB, want 32-64", peak>>20)
	}
	if kills, err := c.OOMKills(); err != nil || kills != 0 {
		t.Errorf("OOM kills after a process that fitted = %d (%v), want 0", kills, err)
	}

	small := newContainer(t, 16<<20)
	over := exec.Command("dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1")
	small.Wrap(over)
	if err := over.Run(); err == nil {
		t.Fatal("a process holding 64 MiB in a 16 MiB cgroup ran to its end")
	}
	if kills, err := small.OOMKills(); err != nil || kills != 1 {
		t.Errorf("OOM kills after a process over the limit = %d (%v), want 1", kills, err)
	}
}

func TestContainerLimitReadsAQuantity(t *testing.T) {
	t.Setenv(ContainerEnv, "250Mi")
	if got, err := ContainerLimit(); err != nil || got != 250<<20 {
		t.Errorf("%s=250Mi: %d, %v; want %d", ContainerEnv, got, err, 250<<20)
	}
	t.Setenv(ContainerEnv, "lots")
	if _, err := ContainerLimit(); err == nil || !strings.Contains(err.Error(), "250Mi") {
		t.Errorf("%s=lots: error %v, want one showing the form", ContainerEnv, err)
	}
}
