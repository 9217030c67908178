package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// oneWorker is a cluster of one worker whose network data is a Secret of its own (no
// Metal3DataTemplate), so the demo's contract is tested on its own.
const oneWorker = `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: tiny}
spec:
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3Cluster, name: tiny}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Cluster
metadata: {name: tiny}
spec:
  controlPlaneEndpoint: {host: 192.168.111.249, port: 6443}
  clusterNetwork: tiny
---
apiVersion: v1
kind: Secret
metadata: {name: tiny-bootstrap}
stringData: {value: "#cloud-config\n"}
---
apiVersion: v1
kind: Secret
metadata: {name: tiny-network}
stringData:
  networkData: |
    links: [{id: eno1, type: phy, ethernet_mac_address: "3c:fd:fe:00:00:01", mtu: 1500}]
    networks: [{id: n, network_id: n, type: ipv4, link: eno1, ip_address: 192.0.2.7, netmask: 255.255.255.0, routes: []}]
    services: []
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3MachineTemplate
metadata: {name: tiny}
spec:
  template:
    spec:
      image: {url: "http://images.example.com/os.qcow2", checksum: "http://images.example.com/os.qcow2.sha256sum", checksumType: sha256}
      networkData: {name: tiny-network}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: tiny}
spec:
  clusterName: tiny
  replicas: 1
  template:
    spec:
      clusterName: tiny
      version: v1.34.0
      bootstrap: {dataSecretName: tiny-bootstrap}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: tiny}
---
apiVersion: network.metalwire.io/v1alpha1
kind: ClusterNetwork
metadata: {name: tiny, namespace: default}
spec:
  networkDeviceRef: sim-fabric
  vlanRange: 2000-2009
  networks: [{name: control, vlanID: 2003}]
`

func writeManifest(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.yaml")
	NewWithT(t).Expect(os.WriteFile(path, []byte(oneWorker), 0o600)).To(Succeed())
	return path
}

var fastDelays = []string{"--registering-delay=100ms", "--inspecting-delay=100ms", "--provisioning-delay=100ms", "--deprovisioning-delay=100ms"}

func TestDemoSucceedsWhenEveryHostIsProvisioned(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "dev")
	args := append([]string{"demo", "--hosts", "1", "--apply", writeManifest(t), "--dir", dir, "--no-build", "--timeout", "2m"}, fastDelays...)
	out, code := run(ctx, args...)
	g.Expect(code).To(Equal(0), out)
	g.Expect(out).To(ContainSubstring("progress: 0/1 hosts provisioned"))
	g.Expect(out).To(ContainSubstring("progress: 1/1 hosts provisioned"))
	g.Expect(out).To(MatchRegexp(`(?m)^HOST\s+STATE\s+MACHINE\s+IPS\s+FILES$`))
	g.Expect(out).To(MatchRegexp(`(?m)^host-0\s+provisioned\s+tiny-\S+\s+192\.0\.2\.7\s+\S+/hosts/host-0/\{meta_data\.json,network_data\.json,user_data\}$`))
	// The simulated switch: one network on one card of the selected host; the other card idle.
	g.Expect(out).To(ContainSubstring("switch sim-tor is a STAND-IN"))
	g.Expect(out).To(ContainSubstring("ClusterNetwork tiny on NetworkDevice sim-fabric: control=vlan 2003"))
	g.Expect(out).To(MatchRegexp(`(?m)^host-0\s+192\.0\.2\.7\s+selected by tiny\s+eno1=sim-tor/host-0-eno1 vlan 2003; eno2=sim-tor/host-0-eno2 idle$`))
	// The host's network_data.json follows its path, as JSON.
	g.Expect(out).To(ContainSubstring("== " + filepath.Join(dir, "hosts", "host-0", "network_data.json")))
	g.Expect(out).To(ContainSubstring(`"ip_address": "192.0.2.7"`))
	g.Expect(out).To(ContainSubstring("demo complete: every host reached its state"))
}

func TestDemoFailsSayingWhatDidNotHappen(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "dev")
	// No hosts at all: the worker can never be provisioned.
	args := append([]string{"demo", "--hosts", "0", "--apply", writeManifest(t), "--dir", dir, "--no-build", "--timeout", "8s"}, fastDelays...)
	out, code := run(ctx, args...)
	g.Expect(code).To(Equal(1), out)
	g.Expect(out).To(ContainSubstring("metalwire: demo failed: timed out after 8s with 0/1 hosts provisioned"))
	g.Expect(out).To(MatchRegexp(`\n  Machine tiny-\S+: no host yet: AssociateBareMetalHost`))
	g.Expect(out).To(ContainSubstring("controllers' logs: " + filepath.Join(dir, "manager.log")))
	g.Expect(out).NotTo(ContainSubstring("demo complete"))
	expectClusterAPIStopped(g, out)
}

func TestDemoRefusesANonPositiveTimeout(t *testing.T) {
	g := NewWithT(t)
	out, code := run(context.Background(), "demo", "--timeout", "0s")
	g.Expect(code).To(Equal(2), out)
	g.Expect(out).To(ContainSubstring("--timeout must be more than 0, such as 5m"))
}
