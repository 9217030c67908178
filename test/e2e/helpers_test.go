package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/devenv"
	"github.com/metalwire/metalwire/internal/simulator"
	"github.com/metalwire/metalwire/test/e2e/framework"
)

// The names examples/ uses.
const (
	clusterName   = "demo"
	workers       = "demo-workers"
	dataTemplate  = "demo-nodes"
	controlPlane  = "demo-control-plane-0"
	sparePool     = "spare-provisioning"
	spareTemplate = "spare-hosts"
)

// clusterPools are the IPPools the cluster's Metal3DataTemplate takes addresses from.
var clusterPools = []string{"demo-baremetal-v4", "demo-storage-v6"}

const (
	wait = framework.Wait
	poll = framework.Poll
)

// waitUntilDone waits until every Machine has a provisioned host and every spare was inspected
// with its pre-provisioning data, as `make demo` does.
func waitUntilDone(t *testing.T) devenv.Progress {
	t.Helper()
	return framework.WaitUntilDone(t, env, ns)
}

// machineHosts maps each Metal3Machine of the cluster to its host.
func machineHosts(g Gomega) map[string]string {
	list := &infrav1.Metal3MachineList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	out := map[string]string{}
	for _, m := range list.Items {
		if _, host, set, err := infrav1.ParseHostAnnotation(m.Annotations[infrav1.HostAnnotation], m.Namespace); set && err == nil {
			out[m.Name] = host
		}
	}
	return out
}

func host(g Gomega, name string) *bmov1.BareMetalHost {
	return framework.Host(g, env, ns, name)
}

// metal3DataNames lists the Metal3Data of the cluster's template, sorted: their names carry the
// index each machine got.
func metal3DataNames(g Gomega) []string {
	list := &infrav1.Metal3DataList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	var names []string
	for _, d := range list.Items {
		names = append(names, d.Name)
	}
	slices.Sort(names)
	return names
}

// addressesIn lists the addresses handed out by the given pools.
func addressesIn(g Gomega, pools ...string) []string {
	list := &ipamv1.IPAddressList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, a := range list.Items {
		if slices.Contains(pools, a.Spec.Pool.Name) {
			out = append(out, string(a.Spec.Address))
		}
	}
	slices.Sort(out)
	return out
}

func workerMachines(g Gomega) []clusterv1.Machine {
	list := &clusterv1.MachineList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns),
		client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: workers})).To(Succeed())
	return list.Items
}

func scaleWorkers(t *testing.T, replicas int32) {
	t.Helper()
	framework.Scale(t, env, ns, workers, replicas)
}

// networkData reads a file the simulator wrote for a host (network_data.json or the
// pre-provisioning one) and returns its static addresses by network id.
func networkData(g Gomega, hostName, file string) map[string]string {
	doc := framework.BootNetwork(g, env, ns, hostName, file)
	out := doc.Addresses()
	for _, l := range doc.Links {
		out["link:"+string(l.ID)] = string(l.Type)
	}
	return out
}

func hostFile(hostName, file string) string {
	return filepath.Join(simulator.HostDir(env.Simulator.Dir, ns, hostName), file)
}
