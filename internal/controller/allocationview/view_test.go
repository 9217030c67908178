package allocationview_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/controller/metal3machine"
	"github.com/metalwire/metalwire/internal/manager/managertest"
	"github.com/metalwire/metalwire/internal/testneeds"
	"github.com/metalwire/metalwire/pkg/ipam"
	"github.com/metalwire/metalwire/pkg/migrate"
	"github.com/metalwire/metalwire/pkg/render/l2userdata"
)

const bootstrapData = `#cloud-config
runcmd:
- kubeadm join --config /run/kubeadm/kubeadm.yaml
`

// The seed's PacketCluster and two PacketMachineTemplates go through migrate and are applied as
// migrate wrote them (with the one fix migrate asks of the user: the project's UUID); the
// image's manager (infrastructure and IPAM controllers) then serves 20 machines, ten on each
// template, on 20 hosts. Every machine gets an address of its template's range, unique, through
// the Metal3DataTemplate chain; its host boots with the bootstrap cloud-config merged with its
// VLAN sub-interface holding that address; the ConfigMap view equals the claims after the
// machines come, after ten go (their addresses released) and after four more come.
func TestSeedThroughMigrateAndControllersTwentyMachines(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	managertest.Start(t, env, ns, []controller.Group{controller.Infrastructure, controller.IPAM})

	ranges := map[string]netip.Prefix{} // template pool -> range
	for _, f := range []string{"004-01-packetcluster-fragment.yaml", "004-02-packetmachinetemplate-multi.yaml"} {
		in, err := os.ReadFile(filepath.Join("..", "..", "..", "test", "fixtures", "seeds", f))
		g.Expect(err).NotTo(HaveOccurred())
		in = []byte(strings.ReplaceAll(string(in), "project: your-packet-project-id", "project: 0c2a5f3e-4b6d-4e7f-8a9b-1c2d3e4f5a6b"))
		res, err := migrate.Migrate(in)
		g.Expect(err).NotTo(HaveOccurred())
		for _, doc := range res.Documents {
			u := &unstructured.Unstructured{}
			g.Expect(yaml.Unmarshal(doc.YAML, &u.Object)).To(Succeed())
			u.SetNamespace(ns)
			if doc.Kind == "ClusterNetwork" {
				// migrate's other must-change: the seed's cluster names no VXLAN; pin it.
				nets, _, _ := unstructured.NestedSlice(u.Object, "spec", "networks")
				nets[0].(map[string]any)["vlanID"] = int64(1000)
				g.Expect(unstructured.SetNestedSlice(u.Object, nets, "spec", "networks")).To(Succeed())
				g.Expect(unstructured.SetNestedField(u.Object, "1000-1001", "spec", "vlanRange")).To(Succeed())
			}
			g.Expect(env.Client.Create(ctx, u)).To(Succeed(), "%s", doc.YAML)
			if key := u.GetAnnotations()[ipam.AllocationViewKeyAnnotation]; doc.Kind == "IPPool" && key != "" {
				_, cidr, _ := strings.Cut(strings.SplitN(key, "-", 2)[1], "-")
				ranges[u.GetName()] = netip.MustParsePrefix(cidr)
			}
		}
	}
	templates := []string{"example-packet-machine-template", "example-packet-machine-template-1"}
	pools := []string{"example-packet-machine-template-1000", "example-packet-machine-template-1-1001"}
	g.Expect(ranges).To(HaveKey(pools[0]))
	g.Expect(ranges).To(HaveKey(pools[1]))

	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// What the machines and their data say, for the reader of a failure.
		m3ms := &infrav1.Metal3MachineList{}
		_ = env.Client.List(ctx, m3ms, client.InNamespace(ns))
		for _, m := range m3ms.Items[:1] {
			for _, c := range m.Status.Conditions {
				if c.Status != metav1.ConditionTrue {
					t.Logf("%s: %s %s %s: %s", m.Name, c.Type, c.Status, c.Reason, c.Message)
				}
			}
		}
		claims := &infrav1.Metal3DataClaimList{}
		t.Logf("claims: %v", env.Client.List(ctx, claims, client.InNamespace(ns)))
		for _, c := range claims.Items[:min(2, len(claims.Items))] {
			t.Logf("Metal3DataClaim %s: %+v", c.Name, c.Status)
		}
		tmpls := &infrav1.Metal3DataTemplateList{}
		t.Logf("templates: %v", env.Client.List(ctx, tmpls, client.InNamespace(ns)))
		for _, c := range tmpls.Items {
			t.Logf("Metal3DataTemplate %s: %+v", c.Name, c.Status)
		}
		data := &infrav1.Metal3DataList{}
		_ = env.Client.List(ctx, data, client.InNamespace(ns))
		for _, d := range data.Items {
			t.Logf("Metal3Data %s: %+v", d.Name, d.Status)
		}
	})
	cluster := newCluster(t, ns, "example-packet-cluster")
	machine := func(i int) string { return fmt.Sprintf("machine-%02d", i) }
	add := func(from, to int) {
		for i := from; i < to; i++ {
			newHost(t, ns, fmt.Sprintf("host-%02d", i))
			newMachine(t, cluster, machine(i), templates[i%2])
		}
	}
	add(0, 20)

	// expect checks the machines live: each has one address of its template's range, unique;
	// its host boots with the merged user-data holding that address; nobody else holds one;
	// the ConfigMap says exactly what the claims say.
	expect := func(live []int) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			addrs := &ipamv1.IPAddressList{}
			g.Expect(env.Client.List(ctx, addrs, client.InNamespace(ns))).To(Succeed())
			view := map[string]map[string]string{}
			for _, p := range pools {
				view[ipam.ConfigMapKey(viewKey(p, ranges[p]))] = map[string]string{}
			}
			// An address's claim is named <Metal3Data>-<pool>; the Metal3Data's claim is the machine's.
			data := &infrav1.Metal3DataList{}
			g.Expect(env.Client.List(ctx, data, client.InNamespace(ns))).To(Succeed())
			machineOf := map[string]string{}
			for _, d := range data.Items {
				for _, p := range pools {
					machineOf[d.Name+"-"+p] = d.Spec.Claim.Name
				}
			}
			seen := map[string]bool{}
			byMachine := map[string]string{}
			for _, a := range addrs.Items {
				r, ok := ranges[a.Spec.Pool.Name]
				if !ok {
					continue // the cluster network's pool: no machine claims from it here
				}
				addr := string(a.Spec.Address)
				ip := netip.MustParseAddr(addr)
				g.Expect(seen[addr]).To(BeFalse(), "address %s handed out twice", addr)
				seen[addr] = true
				g.Expect(r.Contains(ip) && ip != r.Addr() && ip != r.Addr().Next()).To(BeTrue(), "%s outside %s, or the network or gateway", ip, r)
				view[ipam.ConfigMapKey(viewKey(a.Spec.Pool.Name, r))][a.Spec.Claim.Name] = addr
				m, ok := machineOf[a.Spec.Claim.Name]
				g.Expect(ok).To(BeTrue(), "address %s is claimed by %s, of no Metal3Data", addr, a.Spec.Claim.Name)
				g.Expect(byMachine).NotTo(HaveKey(m), "%s holds two addresses", m)
				byMachine[m] = addr
			}
			g.Expect(byMachine).To(HaveLen(len(live)), "one address per live machine: %v", byMachine)
			for _, i := range live {
				addr, ok := byMachine[machine(i)]
				g.Expect(ok).To(BeTrue(), "%s has an address", machine(i))
				g.Expect(ranges[pools[i%2]].Contains(netip.MustParseAddr(addr))).To(BeTrue(), "%s: %s is in its template's range", machine(i), addr)
				expectUserData(g, ns, machine(i), pools[i%2], addr)
			}
			cm := &corev1.ConfigMap{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ipam.AllocationViewName}, cm)).To(Succeed())
			got := map[string]map[string]string{}
			for k, v := range cm.Data {
				m := map[string]string{}
				g.Expect(json.Unmarshal([]byte(v), &m)).To(Succeed())
				got[k] = m
			}
			g.Expect(got).To(Equal(view), "the ConfigMap view equals the claims")
		}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	}
	live := func(ids ...[2]int) []int {
		var out []int
		for _, r := range ids {
			for i := r[0]; i < r[1]; i++ {
				out = append(out, i)
			}
		}
		return out
	}
	expect(live([2]int{0, 20}))
	cloudInitSchema(t, ns, metal3machine.VLANUserDataSecretName(machine(0)))

	// Ten machines go, five of each template: their addresses are released.
	for i := range 10 {
		g.Expect(env.Client.Delete(ctx, &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: machine(i)}})).To(Succeed())
	}
	expect(live([2]int{10, 20}))

	// Four more come, on the hosts the others left: they get addresses again.
	for i := 20; i < 24; i++ {
		newMachine(t, cluster, machine(i), templates[i%2])
	}
	expect(live([2]int{10, 24}))

	// A bootstrap provider that writes a shell script, not a cloud-config: nothing to merge
	// into. The machine says so and its host is not provisioned with half its configuration.
	newMachineWith(t, cluster, "machine-sh", templates[0], "#!/bin/sh\nkubeadm join\n")
	g.Eventually(func(g Gomega) {
		m3m := &infrav1.Metal3Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "machine-sh"}, m3m)).To(Succeed())
		var c *metav1.Condition
		for i := range m3m.Status.Conditions {
			if m3m.Status.Conditions[i].Type == infrav1.Metal3MachineDataReadyCondition {
				c = &m3m.Status.Conditions[i]
			}
		}
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(metal3machine.VLANUserDataFailedReason))
		g.Expect(c.Message).To(ContainSubstring("Secret machine-sh-bootstrap: the bootstrap user-data is not a #cloud-config"))
		g.Expect(c.Message).To(ContainSubstring("the VLAN user-data is merged only into a cloud-config"))
		host := m3m.Annotations[infrav1.HostAnnotation]
		g.Expect(host).NotTo(BeEmpty())
		bmh := &bmov1.BareMetalHost{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: host[strings.Index(host, "/")+1:]}, bmh)).To(Succeed())
		g.Expect(bmh.Spec.UserData).To(BeNil(), "no user data until it can be merged")
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
}

// viewKey is the allocation view key migrate gives a template's pool: <metro>-<vxlan>-<range>.
func viewKey(pool string, r netip.Prefix) string {
	vlan := pool[strings.LastIndex(pool, "-")+1:]
	return "ny-" + vlan + "-" + r.String()
}

// expectUserData checks the host of machine m boots with the merged cloud-config: the
// bootstrap's runcmd kept, our script first, and the VLAN sub-interface of the machine's pool
// holding addr.
func expectUserData(g Gomega, ns, m, pool, addr string) {
	ctx := context.Background()
	m3m := &infrav1.Metal3Machine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: m}, m3m)).To(Succeed())
	hostName := m3m.Annotations[infrav1.HostAnnotation]
	g.Expect(hostName).NotTo(BeEmpty(), "%s has a host", m)
	host := &bmov1.BareMetalHost{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: hostName[strings.Index(hostName, "/")+1:]}, host)).To(Succeed())
	g.Expect(host.Spec.UserData).NotTo(BeNil(), "host %s has user data", host.Name)
	g.Expect(host.Spec.UserData.Name).To(Equal(metal3machine.VLANUserDataSecretName(m)))
	s := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: host.Spec.UserData.Name}, s)).To(Succeed())
	var cfg struct {
		WriteFiles []struct{ Path, Content string } `json:"write_files"`
		Runcmd     []any                            `json:"runcmd"`
	}
	g.Expect(string(s.Data["value"])).To(HavePrefix("#cloud-config\n"))
	g.Expect(yaml.Unmarshal(s.Data["value"], &cfg)).To(Succeed())
	g.Expect(cfg.Runcmd).To(Equal([]any{[]any{l2userdata.ScriptFile}, "kubeadm join --config /run/kubeadm/kubeadm.yaml"}))
	vlan := pool[strings.LastIndex(pool, "-")+1:]
	var stanzas string
	for _, f := range cfg.WriteFiles {
		if f.Path == l2userdata.InterfacesFile {
			stanzas = f.Content
		}
	}
	g.Expect(stanzas).To(ContainSubstring(fmt.Sprintf("iface bond0.%s inet static\n    pre-up sleep 5\n    address %s\n    netmask 255.255.255.0\n", vlan, addr)))
}

func newCluster(t *testing.T, ns, name string) *clusterv1.Cluster {
	t.Helper()
	ctx := context.Background()
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: name},
		},
	}
	create(t, cluster)
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	if err := env.Client.Status().Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	create(t, &infrav1.Metal3Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: name}},
		Spec:       infrav1.Metal3ClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "10.60.10.250", Port: 6443}},
	})
	return cluster
}

// newMachine is a Machine with its bootstrap data written, and the Metal3Machine it owns on a
// migrated template, as Cluster API's Machine controller and a bootstrap provider leave them.
func newMachine(t *testing.T, cluster *clusterv1.Cluster, name, template string) {
	t.Helper()
	newMachineWith(t, cluster, name, template, bootstrapData)
}

func newMachineWith(t *testing.T, cluster *clusterv1.Cluster, name, template, bootstrap string) {
	t.Helper()
	ns := cluster.Namespace
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-bootstrap"}, Type: "cluster.x-k8s.io/secret",
		StringData: map[string]string{"value": bootstrap}})
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name}},
		Spec: clusterv1.MachineSpec{
			ClusterName:       cluster.Name,
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: name},
		},
	}
	create(t, m)
	create(t, &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}}},
		Spec: infrav1.Metal3MachineSpec{
			Image:        infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")},
			DataTemplate: &corev1.ObjectReference{Name: template},
		},
	})
}

// newHost is an Equinix Metal server as BMO would have it after inspection: eth0 and eth1.
func newHost(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	n := len(name)
	mac := func(i int) string { return fmt.Sprintf("0c:c4:7a:%02x:%s:%02x", i, name[n-2:], 0x10) }
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": bmov1.GroupVersion.String(), "kind": "BareMetalHost",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{"online": false, "bootMACAddress": mac(0),
			"bmc": map[string]any{"address": "redfish://10.0.0.1/redfish/v1/Systems/" + name, "credentialsName": name + "-bmc"}},
	}}
	if err := env.Client.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	u.Object["status"] = map[string]any{
		"operationalStatus": "OK", "errorMessage": "", "poweredOn": false,
		"provisioning": map[string]any{"state": string(bmov1.StateAvailable), "bootMode": "UEFI"},
		"hardware": map[string]any{"hostname": name, "nics": []any{
			map[string]any{"name": "eth0", "mac": mac(0), "pxe": true},
			map[string]any{"name": "eth1", "mac": mac(1)},
		}},
	}
	if err := env.Client.Status().Update(ctx, u); err != nil {
		t.Fatal(err)
	}
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// cloudInitSchema has cloud-init check the user-data a host boots with.
func cloudInitSchema(t *testing.T, ns, secret string) {
	t.Helper()
	if _, err := exec.LookPath("cloud-init"); err != nil {
		testneeds.Missing(t, "cloud-init is not installed (make test installs the Debian package cloud-init)")
	}
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: secret}, s); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "user-data")
	if err := os.WriteFile(path, s.Data["value"], 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("cloud-init", "schema", "--config-file", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Valid cloud-config") {
		t.Fatalf("cloud-init schema refused Secret %s: %v\n%s\n--- user-data\n%s", secret, err, out, s.Data["value"])
	}
}
