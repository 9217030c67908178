package ovstest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/testneeds"
)

// Schema is where Debian's openvswitch-common puts the Open_vSwitch database schema.
const Schema = "/usr/share/openvswitch/vswitch.ovsschema"

// Require skips the test (or fails it when CI=true) unless it runs as root and every named tool
// is on PATH.
func Require(t testing.TB, tools ...string) {
	t.Helper()
	missing := []string{}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	why := ""
	switch {
	case len(missing) > 0:
		why = fmt.Sprintf("needs %s on PATH (make test-deps installs openvswitch-switch, openssh-server, iproute2, iputils-ping, ethtool)", strings.Join(missing, ", "))
	case os.Geteuid() != 0:
		why = "needs root (network namespaces, veth pairs, sshd)"
	}
	if why == "" {
		return
	}
	testneeds.Missing(t, "this test %s", why)
}

// Switch is one Open vSwitch: an ovsdb-server and, when started, an ovs-vswitchd.
type Switch struct {
	// Dir holds the database, sockets, pid and log files. It is short, so unix socket paths fit.
	Dir string
	// Socket is the database's unix socket path; UnixRemote and TCPRemote are OVSDB remotes.
	Socket     string
	UnixRemote string
	TCPRemote  string
	// TCPAddr is the loopback host:port ovsdb-server listens on.
	TCPAddr string
	// prefix makes interface and namespace names of this switch unique on the machine.
	prefix string
	// Namespace is the network namespace ovs-vswitchd and the switch ends of cables live in
	// ("" when only the database runs).
	Namespace string
}

// Options says what StartSwitch starts.
type Options struct {
	// VSwitchd starts ovs-vswitchd (user space) so bridges forward packets. Without it only the
	// database runs: enough for drivers, not for pings.
	VSwitchd bool
	// UnnamedNamespace runs ovs-vswitchd (VSwitchd) in a network namespace with no name
	// (unshare --net), which ends with the process: nothing is left behind even when the test
	// binary is killed, but no host can be cabled to the switch (Namespace is "").
	UnnamedNamespace bool
	// DummyPorts lets ovs-vswitchd (VSwitchd) make interfaces of type dummy (--enable-dummy):
	// ports with an OpenFlow port number and no kernel device behind them (AddDummyPorts).
	DummyPorts bool
	// ExtraRemotes are passed to ovsdb-server as --remote (e.g. "pssl:0:127.0.0.1").
	ExtraRemotes []string
	// ExtraArgs are passed to ovsdb-server (e.g. --private-key=..., --certificate=...).
	ExtraArgs []string
}

// StartSwitch starts a fresh Open vSwitch database (and ovs-vswitchd when asked) and removes it
// when the test ends.
func StartSwitch(t testing.TB, opts Options) *Switch {
	t.Helper()
	tools := []string{"ovsdb-tool", "ovsdb-server", "ovs-vsctl"}
	if opts.VSwitchd {
		tools = append(tools, "ovs-vswitchd", "ip", "ping")
	}
	Require(t, tools...)
	if _, err := os.Stat(Schema); err != nil {
		Require(t, "vswitch.ovsschema-at-"+Schema)
	}
	dir, err := os.MkdirTemp("", "mwovs")
	if err != nil {
		t.Fatal(err)
	}
	// A non-root SSH user runs ovs-vsctl against this database: let it reach the socket.
	if err := os.Chmod(dir, 0o755); err != nil { //nolint:gosec // the SSH test user runs ovs-vsctl against this directory's socket
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := &Switch{Dir: dir, Socket: filepath.Join(dir, "db.sock"), prefix: "m" + randomHex(3)}
	s.UnixRemote = "unix:" + s.Socket
	db := filepath.Join(dir, "conf.db")
	run(t, nil, "ovsdb-tool", "create", db, Schema)

	port := FreePort(t)
	s.TCPAddr = fmt.Sprintf("127.0.0.1:%d", port)
	s.TCPRemote = "tcp:" + s.TCPAddr
	args := make([]string, 0, 6+len(opts.ExtraRemotes)+len(opts.ExtraArgs))
	args = append(args, db,
		"--remote=punix:"+s.Socket,
		fmt.Sprintf("--remote=ptcp:%d:127.0.0.1", port),
		"--unixctl="+filepath.Join(dir, "ovsdb-server.ctl"),
		"--pidfile="+filepath.Join(dir, "ovsdb-server.pid"),
		"--log-file="+filepath.Join(dir, "ovsdb-server.log"),
	)
	for _, r := range opts.ExtraRemotes {
		args = append(args, "--remote="+r)
	}
	args = append(args, opts.ExtraArgs...)
	s.start(t, "ovsdb-server", "ovsdb-server", args...)
	// Answering, not only there: the socket file exists from bind, a moment before the server
	// listens, and a loaded machine stretches that moment.
	waitFor(t, "ovsdb-server socket "+s.Socket, func() bool {
		c, err := net.Dial("unix", s.Socket)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	})
	if err := os.Chmod(s.Socket, 0o666); err != nil { //nolint:gosec // a test database: the SSH test user must reach it
		t.Fatal(err)
	}
	s.Vsctl(t, "init")
	if opts.VSwitchd {
		// ovs-vswitchd runs in a network namespace of its own: its tap devices (the datapath's
		// "ovs-netdev", one per bridge) have fixed names, and switches of tests running at once
		// must not share them. The database socket is a file, so it reaches it from there.
		args := []string{"ovs-vswitchd", "--disable-system", s.UnixRemote,
			"--unixctl=" + filepath.Join(dir, "ovs-vswitchd.ctl"),
			"--pidfile=" + filepath.Join(dir, "ovs-vswitchd.pid"),
			"--log-file=" + filepath.Join(dir, "ovs-vswitchd.log")}
		if opts.DummyPorts {
			args = append(args, "--enable-dummy")
		}
		if opts.UnnamedNamespace {
			s.start(t, "ovs-vswitchd", "unshare", append([]string{"--net"}, args...)...)
		} else {
			s.Namespace = s.prefix + "-sw"
			ip(t, "netns", "add", s.Namespace)
			t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", s.Namespace).Run() })
			s.start(t, "ovs-vswitchd", "ip", append([]string{"netns", "exec", s.Namespace}, args...)...)
		}
	}
	return s
}

// env points every OVS tool at this switch's directory instead of the machine's.
func (s *Switch) env() []string {
	return append(os.Environ(), "OVS_RUNDIR="+s.Dir, "OVS_LOGDIR="+s.Dir, "OVS_DBDIR="+s.Dir)
}

// start runs name with args (program itself, or a command that execs it: ip netns exec,
// unshare) until the test ends; program names its log file.
func (s *Switch) start(t testing.TB, program, name string, args ...string) {
	logName := program
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = s.env()
	// Killed with the test binary, also when it dies without running cleanups (a test timeout's
	// panic, an interrupt): no daemon outlives it. Pdeathsig follows the thread that started
	// the process, so that thread is held by the goroutine waiting for it, and by nothing else,
	// until the process ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		defer close(done)
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		t.Fatalf("start %s: %v", logName, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", logName, tail(out.String(), 3000))
			if log, err := os.ReadFile(filepath.Join(s.Dir, logName+".log")); err == nil {
				t.Logf("%s.log (tail):\n%s", logName, tail(string(log), 3000))
			}
		}
	})
}

// Vsctl runs ovs-vsctl against this switch's database and returns its output. It does not wait
// for ovs-vswitchd (--no-wait): callers that need forwarding retry (see Reaches).
func (s *Switch) Vsctl(t testing.TB, args ...string) string {
	t.Helper()
	return run(t, s.env(), "ovs-vsctl", append([]string{"--db=" + s.UnixRemote, "--timeout=20", "--no-wait"}, args...)...)
}

// MTURequest is the mtu_request of an interface as ovs-vsctl reads it (0: none).
func (s *Switch) MTURequest(t testing.TB, iface string) int {
	t.Helper()
	out := strings.TrimSpace(s.Vsctl(t, "get", "interface", iface, "mtu_request"))
	n, err := strconv.Atoi(out)
	if err != nil {
		return 0 // "[]": not set
	}
	return n
}

// Bridge returns the name AddBridge gives a bridge: unique on the machine, so messages and
// logs of tests running at once are not confused.
func (s *Switch) Bridge(name string) string { return s.prefix + name }

// AddBridge adds a user-space bridge (datapath_type=netdev) named s.Bridge(name) and returns
// that name.
func (s *Switch) AddBridge(t testing.TB, name string) string {
	t.Helper()
	br := s.Bridge(name)
	s.Vsctl(t, "add-br", br, "--", "set", "bridge", br, "datapath_type=netdev")
	return br
}

// AddPorts adds ports with no interface behind them (database only: enough for drivers and
// benchmarks), each with the given tag (0: none).
func (s *Switch) AddPorts(t testing.TB, bridge string, tag int, names ...string) {
	t.Helper()
	s.addPorts(t, bridge, tag, false, names)
}

// AddDummyPorts adds ports whose interface is of type dummy, each with the given tag (0: none):
// ovs-vswitchd started with Options.DummyPorts gives them an OpenFlow port number, so flows may
// match them (in_port) and port-mods shut them, with no kernel device behind them. Use
// WaitOFPorts before addressing them by OpenFlow.
func (s *Switch) AddDummyPorts(t testing.TB, bridge string, tag int, names ...string) {
	t.Helper()
	s.addPorts(t, bridge, tag, true, names)
}

// addPorts adds the ports in one ovs-vsctl call, dummy interfaces when asked.
func (s *Switch) addPorts(t testing.TB, bridge string, tag int, dummy bool, names []string) {
	t.Helper()
	args := []string{}
	for _, n := range names {
		if len(args) > 0 {
			args = append(args, "--")
		}
		args = append(args, "add-port", bridge, n)
		if tag > 0 {
			args = append(args, fmt.Sprintf("tag=%d", tag))
		}
		if dummy {
			args = append(args, "--", "set", "interface", n, "type=dummy")
		}
	}
	s.Vsctl(t, args...)
}

// WaitOFPorts waits until ovs-vswitchd has given every named interface an OpenFlow port number.
func (s *Switch) WaitOFPorts(t testing.TB, names ...string) {
	t.Helper()
	var missing []string
	ok := func() bool {
		out := s.Vsctl(t, "--format=json", "--columns=name,ofport", "list", "Interface")
		var table struct {
			Data [][]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(out), &table); err != nil {
			t.Fatalf("parse ovs-vsctl list Interface: %v\n%s", err, out)
		}
		ofport := map[string]int{}
		for _, d := range table.Data {
			var name string
			_ = json.Unmarshal(d[0], &name)
			ofport[name] = firstInt(d[1])
		}
		missing = missing[:0]
		for _, n := range names {
			if ofport[n] <= 0 {
				missing = append(missing, n)
			}
		}
		return len(missing) == 0
	}
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("ovs-vswitchd gave no OpenFlow port number within 60s to %d interfaces: %s", len(missing), quoteNames(missing))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// quoteNames lists the first few names.
func quoteNames(names []string) string {
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	return strings.Join(names, ", ")
}

// PortRow is a Port row as ovs-vsctl lists it: what a person checking the switch would see.
type PortRow struct {
	Name     string
	Tag      int
	Trunks   []int
	VLANMode string
}

// Ports lists every Port row, read with ovs-vsctl (independent of the drivers under test).
func (s *Switch) Ports(t testing.TB) map[string]PortRow {
	t.Helper()
	out := s.Vsctl(t, "--format=json", "--columns=name,tag,trunks,vlan_mode", "list", "Port")
	var table struct {
		Data [][]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &table); err != nil {
		t.Fatalf("parse ovs-vsctl list Port: %v\n%s", err, out)
	}
	rows := map[string]PortRow{}
	for _, d := range table.Data {
		var r PortRow
		_ = json.Unmarshal(d[0], &r.Name)
		r.Tag = firstInt(d[1])
		r.Trunks = ints(d[2])
		var mode string
		if json.Unmarshal(d[3], &mode) == nil {
			r.VLANMode = mode
		}
		rows[r.Name] = r
	}
	return rows
}

// PortVersions returns each Port row's _version: a row's version changes exactly when a
// transaction changes the row, so equal versions prove nothing was written to it.
func (s *Switch) PortVersions(t testing.TB) map[string]string {
	t.Helper()
	query := `["Open_vSwitch",{"op":"select","table":"Port","where":[],"columns":["name","_version"]}]`
	out := run(t, s.env(), "ovsdb-client", "transact", s.UnixRemote, query)
	var res []struct {
		Rows []struct {
			Name    string   `json:"name"`
			Version []string `json:"_version"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 1 {
		t.Fatalf("parse ovsdb-client transact: %v\n%s", err, out)
	}
	v := map[string]string{}
	for _, r := range res[0].Rows {
		v[r.Name] = strings.Join(r.Version, ":")
	}
	return v
}

// firstInt reads an OVSDB optional integer: 5, or ["set",[]] for none.
func firstInt(raw json.RawMessage) int {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	if v := ints(raw); len(v) > 0 {
		return v[0]
	}
	return 0
}

// ints reads an OVSDB integer set: 5, or ["set",[1,2]].
func ints(raw json.RawMessage) []int {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return []int{n}
	}
	var set []json.RawMessage
	if json.Unmarshal(raw, &set) != nil || len(set) != 2 {
		return nil
	}
	var vals []int
	_ = json.Unmarshal(set[1], &vals)
	return vals
}

// FreePort returns a loopback TCP port nobody listens on right now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

func run(t testing.TB, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
