package fabric

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/networkdevice"
	"github.com/metalwire/metalwire/pkg/fabric"
	"github.com/metalwire/metalwire/test/scale/measure"
)

// TestNetworkDeviceStatusWriteCost is a probe, not a benchmark with a target: what one write of
// the NetworkDevice's status costs the API server (and etcd) when it records 1,000 bonds with a
// list each (the LAG+ACL run's record), and what a variant saves. It writes the status
// FABRIC_PROBE_WRITES times (default 20), each write changing one port as a pass that adds a
// host does, and prints the patch's bytes, the stored status's bytes and the server's CPU per
// write. FABRIC_PROBE_VARIANTS=1 adds three runs: the bonds without their lists, the lists
// recorded as managers before status.switches[].acls did (on their ports, ports[].acls), and the
// CRD with status.switches[].ports and drifted turned into atomic lists at run time (put back
// after).
// FABRIC_PROBE_APISERVER_PROFILE=file writes a CPU profile of the API server over the writes
// (5 s). Run it alone:
//
//	METALWIRE_SCALE=1 go test ./test/scale/fabric -run TestNetworkDeviceStatusWriteCost -v -count=1
func TestNetworkDeviceStatusWriteCost(t *testing.T) {
	writes := envInt(t, "FABRIC_PROBE_WRITES", 20)
	hosts := envInt(t, "FABRIC_BENCH_HOSTS", 1000)
	switches := envInt(t, "FABRIC_BENCH_SWITCHES", 20)
	g := NewWithT(t)
	ctx := context.Background()
	const probeNS = "probe-nd-status"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probeNS}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	run := func(label string, record func([]netv1.Switch, int) []netv1.SwitchStatus) {
		nd := &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: probeNS, GenerateName: "probe-"}}
		for s := 0; s < switches; s++ {
			nd.Spec.Switches = append(nd.Spec.Switches, netv1.Switch{Name: switchName(s), Address: fmt.Sprintf("tcp:127.0.0.1:%d", 6640+s), NetworkOS: netv1.NetworkOSOpenvSwitch, Bridge: "br0"})
		}
		g.Expect(env.Client.Create(ctx, nd)).To(Succeed())
		defer func() { _ = env.Client.Delete(ctx, nd) }()
		before := nd.DeepCopy()
		nd.Status.Switches = record(nd.Spec.Switches, hosts)
		g.Expect(env.Client.Status().Patch(ctx, nd, client.MergeFrom(before))).To(Succeed())

		var patchBytes, storedBytes int
		split := measure.CPUSplit(0)
		profiled := measure.ProfileAPIServer(ctx, t, env.Config, os.Getenv("FABRIC_PROBE_APISERVER_PROFILE"), 5)
		start := time.Now()
		for i := 0; i < writes; i++ {
			before := nd.DeepCopy()
			// A pass that configured one more host: one bond's VLAN moves (its whole record is
			// written, as a merge patch of status.switches writes every switch's).
			p := &nd.Status.Switches[i%switches].Ports[i%len(nd.Status.Switches[i%switches].Ports)]
			p.VLAN = 2001 - p.VLAN // 1000 <-> 1001
			patch := client.MergeFrom(before)
			data, err := patch.Data(nd)
			g.Expect(err).NotTo(HaveOccurred())
			patchBytes = len(data)
			g.Expect(env.Client.Status().Patch(ctx, nd, patch)).To(Succeed())
		}
		elapsed := time.Since(start)
		used := split()
		profiled()
		status, err := json.Marshal(nd.Status)
		g.Expect(err).NotTo(HaveOccurred())
		storedBytes = len(status)
		fmt.Printf("%-34s %d writes in %.2fs: patch %.1f KiB, status %.1f KiB; per write: kube-apiserver %.3fs, etcd %.3fs CPU (load average %s)\n",
			label, writes, elapsed.Seconds(), float64(patchBytes)/1024, float64(storedBytes)/1024,
			used["kube-apiserver"].Seconds()/float64(writes), used["etcd"].Seconds()/float64(writes), measure.LoadAverage())
	}

	run("bonds with lists", bondRecord)
	if os.Getenv("FABRIC_PROBE_VARIANTS") == "1" {
		run("bonds without lists", func(sws []netv1.Switch, hosts int) []netv1.SwitchStatus {
			out := bondRecord(sws, hosts)
			for i := range out {
				out[i].ACLs = nil
			}
			return out
		})
		run("lists on their ports (before)", func(sws []netv1.Switch, hosts int) []netv1.SwitchStatus {
			return bondRecordOf(sws, hosts, listsOnPorts)
		})
		restore := setStatusListsAtomic(ctx, t)
		defer restore()
		run("bonds with lists, lists atomic", bondRecord)
	}
}

// bondRecord is the record the controller writes (networkdevice.ConfiguredPorts and
// ConfiguredACLs) for hosts bonds spread over switches as the LAG+ACL benchmark makes them: each
// host's two cards on one switch, one LACP bond in access VLAN 1000 with a list of benchACL's
// rules.
func bondRecord(sws []netv1.Switch, hosts int) []netv1.SwitchStatus {
	return bondRecordOf(sws, hosts, func(want fabric.State, st *netv1.SwitchStatus) { st.ACLs = networkdevice.ConfiguredACLs(want) })
}

// listsOnPorts records a switch's lists as managers before status.switches[].acls did: each on
// its port, with its VLAN, rule count and default.
func listsOnPorts(want fabric.State, st *netv1.SwitchStatus) {
	for _, name := range slices.Sorted(maps.Keys(want.ACLs)) {
		acl := want.ACLs[name]
		i := slices.IndexFunc(st.Ports, func(p netv1.ConfiguredPort) bool { return p.Name == acl.Port })
		ca := netv1.ConfiguredACL{Name: name, VLAN: int32(acl.VLAN), Rules: int32(len(acl.Rules))}
		if acl.DefaultDeny {
			ca.Default = netv1.ACLDeny
		}
		st.Ports[i].ACLs = append(st.Ports[i].ACLs, ca)
	}
}

// bondRecordOf is bondRecord with its lists recorded by lists.
func bondRecordOf(sws []netv1.Switch, hosts int, lists func(fabric.State, *netv1.SwitchStatus)) []netv1.SwitchStatus {
	nd := &netv1.NetworkDevice{Spec: netv1.NetworkDeviceSpec{Switches: sws}}
	nics := make([]netv1.NIC, hosts)
	next := make([]int, len(sws))
	for h := range nics {
		s := h % len(sws)
		lag := &netv1.CardLAG{Name: fabric.LAGName(hostName(h), "control"), Mode: netv1.LAGLACP, LACPRate: netv1.LACPSlow}
		acls := cardACLs("control")
		acls[0].Name = fabric.ACLName(hostName(h), "control")
		nics[h].Status.ClusterNetwork = "bench"
		for c := 0; c < 2; c++ {
			nics[h].Spec.NICs = append(nics[h].Spec.NICs, netv1.HostNIC{NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: sws[s].Name, Port: intstr.FromString(fmt.Sprintf("p%04d", next[s]))}}})
			next[s]++
			nics[h].Status.NICs = append(nics[h].Status.NICs, &netv1.NICAssignment{Network: "control", VLANID: 1000, PortMode: netv1.PortModeAccess, LAG: lag, ACLs: acls})
		}
	}
	desired := fabric.Desired(networkdevice.PortWants(nd, nics))
	out := make([]netv1.SwitchStatus, len(sws))
	for i := range sws {
		want := desired[sws[i].Name]
		out[i] = netv1.SwitchStatus{Name: sws[i].Name, Reachable: true, Version: "3.1.0", Ports: networkdevice.ConfiguredPorts(want), ConfiguredWith: sws[i].DeepCopy()}
		lists(want, &out[i])
		for _, v := range want.VLANs {
			out[i].VLANs = append(out[i].VLANs, int32(v.ID))
		}
	}
	return out
}

// setStatusListsAtomic turns the NetworkDevice CRD's status.switches[].ports and drifted into
// atomic lists on the running API server and returns what puts the CRD back.
func setStatusListsAtomic(ctx context.Context, t *testing.T) func() {
	t.Helper()
	g := NewWithT(t)
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	key := client.ObjectKey{Name: "networkdevices.network.metalwire.io"}
	g.Expect(env.Client.Get(ctx, key, crd)).To(Succeed())
	original := crd.DeepCopy()
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		items := []string{"schema", "openAPIV3Schema", "properties", "status", "properties", "switches", "items", "properties"}
		vm := v.(map[string]any)
		for _, list := range []string{"ports", "drifted"} {
			path := append(slices.Clone(items), list)
			l, ok, _ := unstructured.NestedMap(vm, path...)
			g.Expect(ok).To(BeTrue(), "the CRD has status.switches[].%s", list)
			l["x-kubernetes-list-type"] = "atomic"
			delete(l, "x-kubernetes-list-map-keys")
			g.Expect(unstructured.SetNestedMap(vm, l, path...)).To(Succeed())
		}
	}
	g.Expect(unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions")).To(Succeed())
	g.Expect(env.Client.Update(ctx, crd)).To(Succeed())
	time.Sleep(3 * time.Second) // the API server serves the new schema once its CRD handler has it
	return func() {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(crd.GroupVersionKind())
		g.Expect(env.Client.Get(ctx, key, cur)).To(Succeed())
		spec, _, _ := unstructured.NestedMap(original.Object, "spec")
		g.Expect(unstructured.SetNestedMap(cur.Object, spec, "spec")).To(Succeed())
		g.Expect(env.Client.Update(ctx, cur)).To(Succeed())
	}
}
