package schematest

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalwire/metalwire/internal/testneeds"
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
// systemd-networkd configuration it stands for, parsed (NetplanFiles has every file as text). A
// document netplan refuses returns netplan's own message as the error. The test fails under CI,
// or is skipped, when netplan is not installed.
func NetplanGenerate(t testing.TB, doc []byte) (Networkd, error) {
	t.Helper()
	files, err := NetplanFiles(t, doc)
	if err != nil {
		return nil, err
	}
	out := Networkd{}
	for name, text := range files {
		switch filepath.Ext(name) {
		case ".network", ".netdev", ".link":
			out[name] = parseUnit([]byte(text))
		}
	}
	if len(out) == 0 {
		return nil, &NetplanError{Output: "netplan wrote no systemd-networkd files", Err: errors.New("no .network, .netdev or .link file")}
	}
	return out, nil
}

// NetplanFiles runs `netplan generate --root-dir DIR` on the document installed as
// DIR/etc/netplan/50-metalwire.yaml and returns every file it wrote under DIR/run
// (systemd-networkd units, Open vSwitch services), as text by file name.
func NetplanFiles(t testing.TB, doc []byte) (map[string]string, error) {
	t.Helper()
	bin, err := exec.LookPath("netplan")
	if err != nil {
		testneeds.Missing(t, "netplan is not installed (make test-deps installs the Debian package netplan.io)")
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
	files := map[string]string{}
	run := os.DirFS(filepath.Join(root, "run"))
	err = fs.WalkDir(run, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := fs.ReadFile(run, path)
		files[d.Name()] = string(b)
		return err
	})
	if err != nil {
		return nil, &NetplanError{Output: "reading what netplan wrote: " + err.Error(), Err: err}
	}
	return files, nil
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
