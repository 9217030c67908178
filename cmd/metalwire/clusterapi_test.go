package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/test/e2e/framework"
)

// TestMain builds metalwire-capi, which dev mode starts to run Cluster API's controllers, so that
// the dev and demo tests run this checkout's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "metalwire-capi-")
	if err == nil {
		err = framework.BuildClusterAPI(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

var clusterAPIPID = regexp.MustCompile(`process metalwire-capi, pid (\d+)`)

// clusterAPIProcess is the pid of metalwire-capi that dev mode's output names.
func clusterAPIProcess(g Gomega, out string) int {
	m := clusterAPIPID.FindStringSubmatch(out)
	g.Expect(m).NotTo(BeNil(), "dev mode names Cluster API's process: %s", out)
	pid, err := strconv.Atoi(m[1])
	g.Expect(err).NotTo(HaveOccurred())
	return pid
}

// running says whether process pid exists (and is not a zombie waiting for its parent).
func running(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// expectClusterAPIStopped: once dev mode has returned, the metalwire-capi it started is gone.
func expectClusterAPIStopped(g Gomega, out string) {
	pid := clusterAPIProcess(g, out)
	g.Expect(running(pid)).To(BeFalse(), "metalwire-capi (pid %d) outlived dev mode", pid)
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	var kids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			kids = append(kids, child)
		}
	}
	return kids
}

// TestDevKilledLeavesNoClusterAPIProcess: when `metalwire dev` is killed outright (no chance to
// stop anything), the metalwire-capi it started sees its stdin close and ends by itself.
func TestDevKilledLeavesNoClusterAPIProcess(t *testing.T) {
	g := NewWithT(t)
	tmp := t.TempDir()
	cli := filepath.Join(tmp, "metalwire")
	build := exec.Command("go", "build", "-o", cli, ".")
	out, err := build.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := exec.CommandContext(ctx, cli, "dev", "--hosts", "0", "--dir", filepath.Join(tmp, "dev"), "--no-build")
	stdout, err := dev.StdoutPipe()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dev.Start()).To(Succeed())
	// Whatever happens, nothing dev mode started is left: the control plane's processes do not
	// watch for their parent, so they are killed here once dev mode is.
	var leftovers []int
	t.Cleanup(func() {
		_ = dev.Process.Kill()
		_ = dev.Wait()
		for _, pid := range leftovers {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	var seen strings.Builder
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		seen.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "running; press Ctrl-C to stop") {
			break
		}
	}
	g.Expect(seen.String()).To(ContainSubstring("running; press Ctrl-C to stop"))
	capi := clusterAPIProcess(g, seen.String())
	leftovers = children(dev.Process.Pid)
	g.Expect(leftovers).To(ContainElement(capi))
	g.Expect(running(capi)).To(BeTrue())

	g.Expect(dev.Process.Kill()).To(Succeed())
	_ = dev.Wait()
	g.Eventually(func() bool { return running(capi) }, time.Minute, 100*time.Millisecond).Should(BeFalse(),
		"metalwire-capi (pid %d) outlived the killed dev mode", capi)
}
