package schematest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Networkd is what `netplan generate` wrote for systemd-networkd, by file name
// (10-netplan-bond0.netdev, 10-netplan-bond0.network, 10-netplan-enp1s0.link, ...).
type Networkd map[string]Unit

// Unit is one systemd unit file: section, then key, then every value the key was given
// (Address= and DNS= repeat).
type Unit map[string]map[string][]string

// Get is the first value of a key in a section, "" when absent.
func (u Unit) Get(section, key string) string {
	if v := u[section][key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// NetDev is the .netdev file of a virtual device (bond, VLAN, bridge) netplan names name.
func (n Networkd) NetDev(name string) (Unit, bool) {
	u, ok := n["10-netplan-"+name+".netdev"]
	return u, ok
}

// Network is the .network file netplan writes for the device it names name.
func (n Networkd) Network(name string) (Unit, bool) {
	u, ok := n["10-netplan-"+name+".network"]
	return u, ok
}

// NetplanGenerate has netplan itself (Debian's netplan.io) read a netplan document and write the
// systemd-networkd configuration it stands for: `netplan generate --root-dir DIR` on the
// document installed as DIR/etc/netplan/50-metalwire.yaml. A document netplan refuses returns
// netplan's own message as the error. The test fails under CI, or is skipped, when netplan is
// not installed (Require).
func NetplanGenerate(t testing.TB, doc []byte) (Networkd, error) {
	t.Helper()
	bin, err := exec.LookPath("netplan")
	if err != nil {
		Require(t, "netplan is not installed (make test-deps installs the Debian package netplan.io)")
	}
	root := t.TempDir()
	etc := filepath.Join(root, "etc", "netplan")
	if err := os.MkdirAll(etc, 0o750); err != nil {
		t.Fatal(err)
	}
	// netplan warns about (and later versions refuse) a config others can read.
	if err := os.WriteFile(filepath.Join(etc, "50-metalwire.yaml"), doc, 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "generate", "--root-dir", root)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, &NetplanError{Output: strings.TrimSpace(stderr.String()), Err: err}
	}
	dir := filepath.Join(root, "run", "systemd", "network")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &NetplanError{Output: "netplan wrote no systemd-networkd files: " + err.Error(), Err: err}
	}
	out := Networkd{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = parseUnit(data)
	}
	return out, nil
}

// NetplanError is netplan refusing a document.
type NetplanError struct {
	Output string
	Err    error
}

func (e *NetplanError) Error() string {
	return "netplan generate: " + e.Output + " (" + e.Err.Error() + ")"
}

func parseUnit(data []byte) Unit {
	u := Unit{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			if u[section] == nil {
				u[section] = map[string][]string{}
			}
		default:
			k, v, _ := strings.Cut(line, "=")
			if u[section] == nil {
				u[section] = map[string][]string{}
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}
