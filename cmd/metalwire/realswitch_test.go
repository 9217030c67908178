package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/scheme"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
)

// `metalwire dev --apply docs/examples/real-switch` drives the real Open vSwitch the manifests
// name, through each driver users have (the ssh variant swaps in docs/examples/real-switch-ssh
// and a Secret made as docs/dev-mode.md makes it), as docs/dev-mode.md walks through: a host
// selected for the ClusterNetwork gets its port in the cluster's VLAN, and back in the idle VLAN
// when it leaves. Dev mode's own simulated switch still works beside it, and the output says which
// switch is which.
func TestDevDrivesARealOpenvSwitch(t *testing.T) {
	for _, driver := range []string{"ovsdb", "ssh"} {
		t.Run(driver, func(t *testing.T) {
			if driver == "ssh" {
				ovstest.Require(t, "ovs-vswitchd", "sshd")
			}
			ovstest.Require(t, "ovs-vswitchd")
			g := NewWithT(t)
			sw := ovstest.StartSwitch(t, ovstest.Options{VSwitchd: true})
			bridge := sw.AddBridge(t, "br-lab")
			sw.AddPorts(t, bridge, ovstest.IdleVLAN, "h1-sw", "h2-sw")
			_, ovsdbPort, _ := strings.Cut(sw.TCPAddr, ":")

			manifests := t.TempDir()
			examples := filepath.Join("..", "..", "docs", "examples")
			copyExample := func(from, to string, replace ...string) {
				t.Helper()
				b, err := os.ReadFile(filepath.Join(examples, from))
				g.Expect(err).NotTo(HaveOccurred())
				text := strings.NewReplacer(replace...).Replace(string(b))
				g.Expect(os.WriteFile(filepath.Join(manifests, to), []byte(text), 0o600)).To(Succeed())
			}
			copyExample("real-switch/02-nics.yaml", "02-nics.yaml")
			copyExample("real-switch/03-clusternetwork.yaml", "03-clusternetwork.yaml")
			switch driver {
			case "ovsdb":
				copyExample("real-switch/01-networkdevice.yaml", "01-networkdevice.yaml", "port: 6640", "port: "+ovsdbPort, "bridge: br-lab", "bridge: "+bridge)
			case "ssh":
				srv := ovstest.StartSSHD(t, map[string]string{"OVS_RUNDIR": sw.Dir})
				copyExample("real-switch-ssh/01-networkdevice.yaml", "01-networkdevice.yaml", "port: 22", fmt.Sprintf("port: %d", srv.Port),
					"bridge: br-lab", "bridge: "+bridge, "ssh-ed25519 PASTE-THE-SWITCH-HOST-KEY-HERE", srv.HostKey)
				// What `kubectl create secret generic lab-ssh --type=kubernetes.io/ssh-auth ...` makes.
				secret := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: lab-ssh\ntype: kubernetes.io/ssh-auth\nstringData:\n  username: %s\n  ssh-privatekey: |\n    %s\n",
					srv.User, strings.ReplaceAll(strings.TrimSpace(string(srv.ClientKey)), "\n", "\n    "))
				g.Expect(os.WriteFile(filepath.Join(manifests, "00-secret.yaml"), []byte(secret), 0o600)).To(Succeed())
			}

			dir := filepath.Join(t.TempDir(), "dev")
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			type result struct {
				out  string
				code int
			}
			done := make(chan result, 1)
			go func() {
				out, code := run(ctx, "dev", "--hosts", "1", "--dir", dir, "--no-build", "--apply", manifests,
					"--registering-delay=100ms", "--inspecting-delay=100ms")
				done <- result{out, code}
			}()
			var c client.Client
			g.Eventually(func(g Gomega) {
				cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
				g.Expect(err).NotTo(HaveOccurred())
				c, err = client.New(cfg, client.Options{Scheme: scheme.New()})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "lab"}, &netv1.ClusterNetwork{})).To(Succeed())
			}, 2*time.Minute, 250*time.Millisecond).Should(Succeed())

			label := func(value string) {
				nic := &netv1.NIC{}
				g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "h1"}, nic)).To(Succeed())
				base := nic.DeepCopy()
				if nic.Labels == nil {
					nic.Labels = map[string]string{}
				}
				if value == "" {
					delete(nic.Labels, netv1.SelectedForLabel)
				} else {
					nic.Labels[netv1.SelectedForLabel] = value
				}
				g.Expect(c.Patch(ctx, nic, client.MergeFrom(base))).To(Succeed())
			}
			g.Eventually(func(g Gomega) {
				cn := &netv1.ClusterNetwork{}
				g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "lab"}, cn)).To(Succeed())
				g.Expect(cn.Status.Available).To(HaveKey("h1"))
			}, time.Minute, 250*time.Millisecond).Should(Succeed())
			label("lab") // kubectl label nic h1 network.metalwire.io/selected-for=lab
			g.Eventually(func() int { return sw.Ports(t)["h1-sw"].Tag }, time.Minute, 250*time.Millisecond).Should(BeNumerically(">=", 100),
				"h1's port on the real switch is moved into the cluster's VLAN (100-199)")
			g.Expect(sw.Ports(t)["h2-sw"].Tag).To(Equal(ovstest.IdleVLAN), "h2 was not selected")
			label("") // kubectl label nic h1 network.metalwire.io/selected-for-
			g.Eventually(func() int { return sw.Ports(t)["h1-sw"].Tag }, time.Minute, 250*time.Millisecond).Should(Equal(ovstest.IdleVLAN))

			// The simulated switch dev mode made for its own host is still served by the stand-in.
			g.Eventually(func(g Gomega) {
				nd := &netv1.NetworkDevice{}
				g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "sim-fabric"}, nd)).To(Succeed())
				g.Expect(nd.Status.Conditions).To(ContainElement(And(HaveField("Type", netv1.ConditionReachable), HaveField("Status", metav1.ConditionTrue))))
			}, time.Minute, 250*time.Millisecond).Should(Succeed())

			cancel()
			var r result
			g.Eventually(done, time.Minute).Should(Receive(&r))
			g.Expect(r.code).To(Equal(0), r.out)
			g.Expect(r.out).To(ContainSubstring("switch lab-ovs of NetworkDevice default/lab: a REAL switch: the "))
			g.Expect(r.out).To(ContainSubstring("switch sim-tor of NetworkDevice default/sim-fabric: SIMULATED"))
		})
	}
}
