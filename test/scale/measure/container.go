package measure

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ContainerEnv runs a benchmark's manager as a container with that memory limit runs it (a
// Kubernetes quantity, as a Deployment's resources.limits.memory: "250Mi"): in a memory cgroup
// of its own limited to it, where the manager reads the limit and takes its soft limit from it
// (internal/memorylimit) as in a pod, and where the kernel counts the binary's pages with its heap
// and reclaims them when the limit is near, as it does in a container. Unset, the manager runs
// with no cgroup limit and the Deployment's soft limit (ManagerMemoryLimit). Needs root and a
// cgroup memory controller (v1 or v2).
const ContainerEnv = "BENCH_MEMORY_LIMIT"

// ContainerLimit is the memory limit ContainerEnv asks for, 0 when it is unset.
func ContainerLimit() (int64, error) {
	s := os.Getenv(ContainerEnv)
	if s == "" {
		return 0, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Value() <= 0 {
		return 0, fmt.Errorf("%s=%q: want a memory size as a Deployment gives one, e.g. 250Mi", ContainerEnv, s)
	}
	return q.Value(), nil
}

// Container is a memory cgroup a benchmark runs a process in.
type Container struct {
	// Limit is its memory limit in bytes.
	Limit int64
	dir   string
	v1    bool
}

// NewContainer makes a memory cgroup named name, limited to limit bytes, below the one this
// process is in. Remove removes it.
func NewContainer(name string, limit int64) (*Container, error) {
	parent, v1, err := memoryCgroup()
	if err != nil {
		return nil, err
	}
	c := &Container{Limit: limit, dir: filepath.Join(parent, name), v1: v1}
	if !v1 {
		// A v2 cgroup's children get a memory controller only when the parent hands it down.
		if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
			return nil, fmt.Errorf("giving the memory controller to cgroups below %s: %w (a v2 cgroup that holds processes cannot; run the benchmark from a cgroup of its own)", parent, err)
		}
	}
	if err := os.Mkdir(c.dir, 0o750); err != nil {
		return nil, fmt.Errorf("making the benchmark's memory cgroup: %w (it needs root)", err)
	}
	file, value := "memory.max", strconv.FormatInt(limit, 10)
	if v1 {
		file = "memory.limit_in_bytes"
	}
	if err := os.WriteFile(filepath.Join(c.dir, file), []byte(value), 0); err != nil {
		_ = c.Remove()
		return nil, fmt.Errorf("setting the memory limit of %s: %w", c.dir, err)
	}
	return c, nil
}

// Wrap makes cmd enter the cgroup before it runs its program: a shell writes its own pid to the
// cgroup and then becomes the program, so cmd.Process.Pid is the program's and nothing the
// program allocates is counted elsewhere. Call it before cmd.Start.
func (c *Container) Wrap(cmd *exec.Cmd) {
	program := cmd.Path
	cmd.Path = "/bin/sh"
	cmd.Args = append([]string{"sh", "-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(c.dir, "cgroup.procs"), program}, cmd.Args[1:]...)
}

// Peak is the most memory the cgroup's processes have used at once, in bytes: what a container's
// peak usage counts (the page cache its processes read, the binary's pages among it, as well as
// their own memory).
func (c *Container) Peak() (int64, error) {
	if c.v1 {
		return readInt(filepath.Join(c.dir, "memory.max_usage_in_bytes"))
	}
	return readInt(filepath.Join(c.dir, "memory.peak"))
}

// OOMKills is how many of the cgroup's processes the kernel has killed for its memory limit.
func (c *Container) OOMKills() (int64, error) {
	file := "memory.events"
	if c.v1 {
		file = "memory.oom_control"
	}
	data, err := os.ReadFile(filepath.Join(c.dir, file))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s/%s counts no oom_kill", c.dir, file)
}

// Describe says what the cgroup is, for a benchmark's output.
func (c *Container) Describe() string {
	return fmt.Sprintf("a memory cgroup limited to %.0f MiB", float64(c.Limit)/(1<<20))
}

// Remove removes the cgroup; its processes must have ended.
func (c *Container) Remove() error { return os.Remove(c.dir) }

// Evict drops the file at path from the page cache (what no process maps), so that the next
// process to read it reads it again and the pages count in that process's cgroup: a container's
// binary is read by the container, not by the build that wrote it.
func Evict(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s out before dropping it from the page cache: %w", path, err)
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// memoryCgroup is the directory of the memory cgroup this process is in, and whether it is a
// cgroup v1 memory controller's (a hybrid system's memory controller is v1).
func memoryCgroup() (dir string, v1 bool, err error) {
	mounts, err := procfs.GetMounts()
	if err != nil {
		return "", false, err
	}
	var v1Memory, v2 string
	for _, m := range mounts {
		if m.Root != "/" {
			continue
		}
		switch _, memory := m.SuperOptions["memory"]; {
		case m.FSType == "cgroup2":
			v2 = m.MountPoint
		case m.FSType == "cgroup" && memory:
			v1Memory = m.MountPoint
		}
	}
	self, err := procfs.Self()
	if err != nil {
		return "", false, err
	}
	groups, err := self.Cgroups()
	if err != nil {
		return "", false, err
	}
	for _, g := range groups {
		if slices.Contains(g.Controllers, "memory") && v1Memory != "" {
			return filepath.Join(v1Memory, g.Path), true, nil
		}
	}
	for _, g := range groups {
		if g.HierarchyID == 0 && v2 != "" {
			return filepath.Join(v2, g.Path), false, nil
		}
	}
	return "", false, errors.New("this process is in no cgroup with a memory controller (/proc/self/cgroup, /proc/self/mountinfo)")
}

func readInt(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
}
