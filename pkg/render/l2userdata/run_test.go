package l2userdata_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/testneeds"
	"github.com/metalwire/metalwire/pkg/render/l2userdata"
)

// The host's NICs in the namespace: the metadata's eth0 and eth1 are named otherwise here, so
// the script must map them by MAC.
const (
	macEth0 = "0c:c4:7a:00:00:10"
	macEth1 = "0c:c4:7a:00:00:11"
)

// standInIfup stands in for ifupdown's ifup, and only because this machine's kernel has no
// 802.1Q (no `type vlan` links, no 8021q module): it reads the stanza the script wrote for the
// interface, refuses when the stanza's vlan-raw-device is not a link of the host, and makes the
// interface a veth (the nearest link this kernel has) with the stanza's address and routes.
// STANDIN_DOWN names interfaces that do not come up, as a VLAN the switch does not carry.
const standInIfup = `#!/bin/sh
set -eu
dev="$1"
case " ${STANDIN_DOWN:-} " in *" $dev "*) echo "ifup stand-in: $dev does not come up" >&2; exit 1;; esac
eval "$(awk -v d="$dev" '$1=="iface"{on=($2==d)} on&&$1=="address"{print "addr="$2} on&&$1=="netmask"{print "mask="$2} on&&$1=="vlan-raw-device"{print "raw="$2}' "$METALWIRE_ROOT/etc/network/interfaces")"
ip link show "$raw" >/dev/null
ip link add "$dev" type veth peer name "p${dev##*.}"
ip link set "p${dev##*.}" up
ip addr add "$addr/$mask" dev "$dev"
ip link set "$dev" up
awk -v d="$dev" '$1=="iface"{on=($2==d)} on&&$1=="up"{$1=""; print}' "$METALWIRE_ROOT/etc/network/interfaces" | while read -r cmd; do sh -c "$cmd"; done
echo "$dev on $raw" >>"$STANDIN_LOG"
`

type userState struct {
	State   string `json:"state"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// host is a network namespace with the machine's NICs and a metadata service on its loopback.
type host struct {
	ns     string
	url    string // the metadata
	mu     sync.Mutex
	states []userState
}

func (h *host) posted() []userState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]userState(nil), h.states...)
}

func run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func newHost(t *testing.T) *host {
	t.Helper()
	if os.Geteuid() != 0 {
		testneeds.Missing(t, "running the VLAN user-data script needs root (network namespaces)")
	}
	for _, tool := range []string{"ip", "curl", "python3", "awk", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			testneeds.Missing(t, "%s is not installed; the script needs it", tool)
		}
	}
	h := &host{ns: fmt.Sprintf("mw28-%d-%d", os.Getpid(), len(t.Name())%100+int(nextHost()))}
	run(t, "ip", "netns", "add", h.ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", h.ns).Run() })
	in := func(args ...string) { run(t, append([]string{"ip", "-n", h.ns}, args...)...) }
	in("link", "set", "lo", "up")
	// eth0 and eth1 of the metadata are enp1s0f0 and enp1s0f1 here; bond0 is a veth too (this
	// kernel has no bonding), which is all the script needs of it: a link named bond0.
	in("link", "add", "enp1s0f0", "address", macEth0, "type", "veth", "peer", "name", "enp1s0f1", "address", macEth1)
	in("link", "add", "bond0", "type", "veth", "peer", "name", "bond0p")
	for _, l := range []string{"enp1s0f0", "enp1s0f1", "bond0", "bond0p"} {
		in("link", "set", l, "up")
	}

	ln := listenIn(t, h.ns)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metadata", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id":             "5f3c9a2e-1b7d-4c1e-9a55-0e7a4b1c2d3e",
			"user_state_url": h.url[:strings.LastIndex(h.url, "/")] + "/events",
			"network": map[string]any{"interfaces": []any{
				map[string]any{"name": "eth0", "mac": macEth0, "bond": "bond0"},
				map[string]any{"name": "eth1", "mac": macEth1, "bond": "bond0"},
			}},
		})
	})
	mux.HandleFunc("POST /events", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var s userState
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil || s.State == "" {
			t.Errorf("the script posted a user state that is not {state, code, message}: %q (%v)", body, err)
			http.Error(w, "bad state", http.StatusUnprocessableEntity)
			return
		}
		h.mu.Lock()
		h.states = append(h.states, s)
		h.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	h.url = "http://" + ln.Addr().String() + "/metadata"
	return h
}

var hosts struct {
	sync.Mutex
	n int32
}

func nextHost() int32 {
	hosts.Lock()
	defer hosts.Unlock()
	hosts.n++
	return hosts.n
}

// listenIn opens a TCP listener on the loopback of network namespace ns: the socket is made
// with this thread switched into the namespace, and stays there once the thread is back.
func listenIn(t *testing.T, ns string) net.Listener {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	target, err := os.Open("/run/netns/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		t.Fatalf("entering namespace %s: %v", ns, err)
	}
	ln, lerr := net.Listen("tcp", "127.0.0.1:0")
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		panic(fmt.Sprintf("cannot return to the test's network namespace: %v", err)) // the thread is unusable
	}
	if lerr != nil {
		t.Fatal(lerr)
	}
	return ln
}

// boot does what cloud-init does with the merged user-data on the host, under root: writes
// write_files and runs runcmd's first command, our script. It returns the script's exit code
// and output.
func (h *host) boot(t *testing.T, userData []byte, root string, env ...string) (int, string) {
	t.Helper()
	var cfg struct {
		WriteFiles []struct{ Path, Content, Permissions string } `json:"write_files"`
		Runcmd     []any                                         `json:"runcmd"`
	}
	if err := yaml.Unmarshal(userData, &cfg); err != nil {
		t.Fatal(err)
	}
	for _, f := range cfg.WriteFiles {
		p := filepath.Join(root, f.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.Content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The host's own ifupdown file, and its /sys (the namespace's, once inside it).
	if err := os.MkdirAll(filepath.Join(root, "etc", "network"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "network", "interfaces"), []byte("auto lo\niface lo inet loopback\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/sys", filepath.Join(root, "sys")); err != nil {
		t.Fatal(err)
	}
	first, ok := cfg.Runcmd[0].([]any)
	if !ok || len(first) != 1 {
		t.Fatalf("runcmd starts with %v, not our script", cfg.Runcmd[0])
	}
	return h.runScript(t, root, filepath.Join(root, first[0].(string)), env...)
}

// runScript runs the script as runcmd does, as root inside the namespace.
func (h *host) runScript(t *testing.T, root, script string, env ...string) (int, string) {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "ifup"), []byte(standInIfup), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", h.ns, "sh", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "METALWIRE_ROOT="+root,
		"STANDIN_LOG="+filepath.Join(root, "standin.log"))
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out)
}

// The merged user-data's script runs as root in a namespace with the seed's ports: it maps eth1
// to this host's enp1s0f1 by MAC, brings up bond0.1000 and enp1s0f1.1001 with their addresses
// and the seed's route, and posts running (1000) then succeeded (1001) to the user_state_url.
func TestScriptConfiguresTheVLANsAndPostsSucceeded(t *testing.T) {
	g := NewWithT(t)
	h := newHost(t)
	c := seedConfig()
	c.MetadataURL = h.url
	ud, err := l2userdata.UserData([]byte(bootstrap), c)
	g.Expect(err).NotTo(HaveOccurred())
	root := t.TempDir()
	code, out := h.boot(t, ud, root)
	g.Expect(code).To(Equal(0), out)
	g.Expect(h.posted()).To(Equal([]userState{
		{State: "running", Code: 1000, Message: "Configuring Network"},
		{State: "succeeded", Code: 1001, Message: "Network configuration successful"},
	}), out)

	addr := run(t, "ip", "-n", h.ns, "-o", "-4", "addr", "show")
	g.Expect(addr).To(MatchRegexp(`bond0\.1000\s+inet 10\.60\.10\.2/24`))
	g.Expect(addr).To(MatchRegexp(`enp1s0f1\.1001\s+inet 10\.60\.20\.7/24`), "eth1 of the metadata is enp1s0f1 here")
	g.Expect(run(t, "ip", "-n", h.ns, "route", "show", "10.60.0.0/16")).To(ContainSubstring("via 10.60.10.1 dev bond0.1000"))
	stanzas, err := os.ReadFile(filepath.Join(root, "etc", "network", "interfaces"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(stanzas)).To(And(HavePrefix("auto lo\n"), ContainSubstring("iface enp1s0f1.1001 inet static"),
		ContainSubstring("vlan-raw-device enp1s0f1\n"), Not(ContainSubstring("eth1"))))

	// Run again (cloud-init runs runcmd once per instance, but a person may rerun it): no second
	// copy of the stanzas, and the interfaces already up count as configured.
	code, out = h.runScript(t, root, filepath.Join(root, l2userdata.ScriptFile))
	g.Expect(code).To(Equal(0), out)
	stanzas, err = os.ReadFile(filepath.Join(root, "etc", "network", "interfaces"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Count(string(stanzas), "iface bond0.1000")).To(Equal(1), string(stanzas))
	g.Expect(h.posted()).To(HaveLen(4))
	g.Expect(h.posted()[3]).To(Equal(userState{State: "succeeded", Code: 1001, Message: "Network configuration successful"}))
}

// A VLAN that does not come up: running, then failed (1002) naming the interface, exit 1.
func TestScriptPostsFailedWhenAVLANDoesNotComeUp(t *testing.T) {
	g := NewWithT(t)
	h := newHost(t)
	c := seedConfig()
	c.MetadataURL = h.url
	ud, err := l2userdata.UserData([]byte(bootstrap), c)
	g.Expect(err).NotTo(HaveOccurred())
	code, out := h.boot(t, ud, t.TempDir(), "STANDIN_DOWN=enp1s0f1.1001")
	g.Expect(code).To(Equal(1), out)
	g.Expect(h.posted()).To(Equal([]userState{
		{State: "running", Code: 1000, Message: "Configuring Network"},
		{State: "failed", Code: 1002, Message: "Network configuration failed: enp1s0f1.1001"},
	}), out)
	g.Expect(run(t, "ip", "-n", h.ns, "-o", "-4", "addr", "show")).To(MatchRegexp(`bond0\.1000\s+inet 10\.60\.10\.2/24`), "the other VLAN is configured")
}
