package l2userdata_test

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/schematest"
	"github.com/metalwire/metalwire/internal/testneeds"
	"github.com/metalwire/metalwire/pkg/render/l2userdata"
)

// The seed's first template: VXLAN 1000 on bond0, an address of 10.60.10.0/24, the route to
// 10.60.0.0/16; plus a hybrid port's VLAN 1001 on eth1.
func seedConfig() l2userdata.Config {
	return l2userdata.Config{
		Interfaces: []l2userdata.Interface{
			{Port: "bond0", VLAN: 1000, Address: netip.MustParsePrefix("10.60.10.2/24")},
			{Port: "eth1", VLAN: 1001, Address: netip.MustParsePrefix("10.60.20.7/24")},
		},
		Routes: []l2userdata.Route{{Destination: netip.MustParsePrefix("10.60.0.0/16"), Gateway: "10.60.10.1"}},
	}
}

const bootstrap = `#cloud-config
write_files:
- path: /run/kubeadm/kubeadm.yaml
  content: |
    kind: JoinConfiguration
runcmd:
- kubeadm join --config /run/kubeadm/kubeadm.yaml
users:
- name: capi
  sudo: ALL=(ALL) NOPASSWD:ALL
`

func TestUserDataKeepsTheBootstrapAndPassesCloudInitSchema(t *testing.T) {
	g := NewWithT(t)
	out, err := l2userdata.UserData([]byte(bootstrap), seedConfig())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).To(HavePrefix("#cloud-config\n"))
	var cfg struct {
		WriteFiles []struct{ Path, Content string } `json:"write_files"`
		Runcmd     []any                            `json:"runcmd"`
		Users      []map[string]any                 `json:"users"`
	}
	g.Expect(yaml.Unmarshal(out, &cfg)).To(Succeed())
	var paths []string
	files := map[string]string{}
	for _, f := range cfg.WriteFiles {
		paths = append(paths, f.Path)
		files[f.Path] = f.Content
	}
	g.Expect(paths).To(Equal([]string{"/run/kubeadm/kubeadm.yaml", l2userdata.ModulesFile, l2userdata.InterfacesFile, l2userdata.NetplanFile, l2userdata.ScriptFile}))
	g.Expect(cfg.Runcmd).To(Equal([]any{[]any{l2userdata.ScriptFile}, "kubeadm join --config /run/kubeadm/kubeadm.yaml"}), "our script first, the bootstrap's commands kept")
	g.Expect(cfg.Users).To(HaveLen(1))
	g.Expect(files[l2userdata.ModulesFile]).To(Equal("8021q\n"))
	g.Expect(files[l2userdata.InterfacesFile]).To(ContainSubstring(
		"auto bond0.1000\niface bond0.1000 inet static\n    pre-up sleep 5\n    address 10.60.10.2\n    netmask 255.255.255.0\n    vlan-raw-device bond0\n    up ip route add 10.60.0.0/16 via 10.60.10.1 dev bond0.1000\n"))
	g.Expect(files[l2userdata.ScriptFile]).To(And(ContainSubstring("state running 1000"), ContainSubstring("state succeeded 1001"),
		ContainSubstring("state failed 1002"), ContainSubstring("user_state_url"), ContainSubstring("checks='bond0.1000 10.60.10.2\neth1.1001 10.60.20.7'")))

	if _, err := exec.LookPath("cloud-init"); err != nil {
		testneeds.Missing(t, "cloud-init is not installed (make test installs the Debian package cloud-init)")
	}
	path := filepath.Join(t.TempDir(), "user-data")
	g.Expect(os.WriteFile(path, out, 0o600)).To(Succeed())
	res, err := exec.Command("cloud-init", "schema", "--config-file", path).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "cloud-init schema:\n%s\n--- user-data\n%s", res, out)
	g.Expect(string(res)).To(ContainSubstring("Valid cloud-config"))

	// The script is valid sh.
	script := filepath.Join(t.TempDir(), "configure.sh")
	g.Expect(os.WriteFile(script, []byte(files[l2userdata.ScriptFile]), 0o600)).To(Succeed())
	res, err = exec.Command("sh", "-n", script).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "sh -n: %s", res)
}

func TestNetplanVariantPassesNetplanGenerate(t *testing.T) {
	g := NewWithT(t)
	plan, err := l2userdata.Netplan(seedConfig())
	g.Expect(err).NotTo(HaveOccurred())
	nd, err := schematest.NetplanGenerate(t, plan)
	g.Expect(err).NotTo(HaveOccurred(), "netplan generate refused:\n%s", plan)
	dev, ok := nd.NetDev("bond0.1000")
	g.Expect(ok).To(BeTrue(), "netplan made the VLAN device bond0.1000:\n%s", plan)
	g.Expect(dev.Get("VLAN", "Id")).To(Equal("1000"))
	net, ok := nd.Network("bond0.1000")
	g.Expect(ok).To(BeTrue())
	g.Expect(net.Get("Network", "Address")).To(Equal("10.60.10.2/24"))
	g.Expect(net.Get("Route", "Destination")).To(Equal("10.60.0.0/16"))
	g.Expect(net.Get("Route", "Gateway")).To(Equal("10.60.10.1"))
	dev, ok = nd.NetDev("eth1.1001")
	g.Expect(ok).To(BeTrue())
	g.Expect(dev.Get("VLAN", "Id")).To(Equal("1001"))
}

func TestUserDataRefusals(t *testing.T) {
	g := NewWithT(t)
	_, err := l2userdata.UserData([]byte("#!/bin/sh\necho hi\n"), seedConfig())
	g.Expect(err).To(MatchError(ContainSubstring("not a #cloud-config")))
	bad := seedConfig()
	bad.Interfaces[0].VLAN = 5000
	_, err = l2userdata.UserData([]byte(bootstrap), bad)
	g.Expect(err).To(MatchError(ContainSubstring("port bond0: VLAN 5000 is outside 1-4094")))
	g.Expect(strings.Contains(l2userdata.Interfaces(seedConfig()), "gateway")).To(BeFalse(), "no default gateway unless given")
}

// cloud-init's own renderers read the netplan variant (cloud-init's "yaml" network config) and
// write it for ifupdown and for systemd-networkd: the VLAN interfaces, their ids, parents,
// addresses and the seed's route come out as the user-data configures them.
func TestCloudInitRenderersReadTheNetplanVariant(t *testing.T) {
	g := NewWithT(t)
	if _, err := exec.LookPath("cloud-init"); err != nil {
		testneeds.Missing(t, "cloud-init is not installed (make test installs the Debian package cloud-init)")
	}
	plan, err := l2userdata.Netplan(seedConfig())
	g.Expect(err).NotTo(HaveOccurred())
	in := filepath.Join(t.TempDir(), "netplan.yaml")
	g.Expect(os.WriteFile(in, plan, 0o600)).To(Succeed())
	convert := func(kind string) string {
		out := t.TempDir()
		res, err := exec.Command("cloud-init", "devel", "net-convert", "-p", in, "-k", "yaml", "-D", "debian", "-O", kind, "-d", out).CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), "cloud-init devel net-convert -O %s: %s", kind, res)
		var all strings.Builder
		g.Expect(filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, rerr := os.ReadFile(p)
				fmt.Fprintf(&all, "== %s\n%s", strings.TrimPrefix(p, out), b)
				return rerr
			}
			return err
		})).To(Succeed())
		return all.String()
	}
	eni := convert("eni")
	g.Expect(eni).To(ContainSubstring("auto bond0.1000\niface bond0.1000 inet static\n    address 10.60.10.2/24\n    vlan-raw-device bond0\n    vlan_id 1000\n    post-up route add -net 10.60.0.0/16 gw 10.60.10.1"), eni)
	g.Expect(eni).To(ContainSubstring("auto eth1.1001\niface eth1.1001 inet static\n    address 10.60.20.7/24\n    vlan-raw-device eth1\n    vlan_id 1001\n"), eni)
	networkd := convert("networkd")
	g.Expect(networkd).To(MatchRegexp(`== /etc/systemd/network/10-cloud-init-bond0\.1000\.network\n\[Address\]\nAddress=10\.60\.10\.2/24\n`), networkd)
	g.Expect(networkd).To(MatchRegexp(`Name=bond0\.1000\n(.*\n)*?\[Route\]\nDestination=10\.60\.0\.0/16\n\s*Gateway=10\.60\.10\.1`), networkd)
	g.Expect(networkd).To(MatchRegexp(`== /etc/systemd/network/10-cloud-init-eth1\.1001\.network\n\[Address\]\nAddress=10\.60\.20\.7/24\n`), networkd)
}
