package commonpool

import (
	"context"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/simulator"
	"github.com/metalwire/metalwire/test/e2e/framework"
)

const (
	pool    = "demo-baremetal-v4"
	workers = "demo-workers"
)

// Every host of the cluster is inspected with an address of the cluster's pool and provisioned
// with the same one; a host given back by scale-down keeps it, and is provisioned with it again
// when the cluster grows. No host ever holds two addresses of the pool.
func TestHostsKeepTheirAddressFromInspectionToReprovisioning(t *testing.T) {
	g := NewWithT(t)
	framework.WaitUntilDone(t, env, ns)
	inspected := map[string]string{} // host -> address its inspection ramdisk booted with
	for i := range hosts {
		h := simulator.HostName(i)
		addr := bootAddress(g, h, simulator.PreprovNetworkFile, "provisioning")
		g.Expect(netip.MustParsePrefix("192.168.111.0/24").Contains(netip.MustParseAddr(addr))).To(BeTrue(), "host %s inspected with %s", h, addr)
		inspected[h] = addr
	}
	provisionedAsInspected(t, inspected, hosts)

	// Scale-down gives a host back: deprovisioned, it still holds its address.
	framework.Scale(t, env, ns, workers, 2)
	var released string
	g.Eventually(func(g Gomega) {
		list := &bmov1.BareMetalHostList{}
		g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		released = ""
		for _, h := range list.Items {
			if h.Spec.ConsumerRef == nil && h.Status.Provisioning.State == bmov1.StateAvailable {
				released = h.Name
			}
		}
		g.Expect(released).NotTo(BeEmpty(), "a host given back by scale-down")
	}, framework.Wait, framework.Poll).Should(Succeed())
	framework.WaitUntilDone(t, env, ns)
	provisionedAsInspected(t, inspected, hosts-1)
	g.Expect(addressesOfPool(g)).To(HaveKeyWithValue(released, inspected[released]), "the released host keeps its address")

	// Growing again provisions the released host, with the same address.
	framework.Scale(t, env, ns, workers, 3)
	g.Eventually(func(g Gomega) {
		g.Expect(framework.Host(g, env, ns, released).Status.Provisioning.State).To(Equal(bmov1.StateProvisioned))
	}, framework.Wait, framework.Poll).Should(Succeed())
	// Its files were written anew (deprovisioning left the old ones, with this marker).
	g.Expect(filepath.Join(simulator.HostDir(env.Simulator.Dir, ns, released), simulator.DeprovisionedMarker)).NotTo(BeAnExistingFile())
	framework.WaitUntilDone(t, env, ns)
	provisionedAsInspected(t, inspected, hosts)
}

// provisionedAsInspected checks that n hosts are provisioned, each with the address it was
// inspected with, and that the pool hands out exactly one address per host.
func provisionedAsInspected(t *testing.T, inspected map[string]string, n int) {
	t.Helper()
	g := NewWithT(t)
	provisioned := 0
	for h, addr := range inspected {
		if framework.Host(g, env, ns, h).Status.Provisioning.State != bmov1.StateProvisioned {
			continue
		}
		provisioned++
		g.Expect(bootAddress(g, h, simulator.NetworkDataFile, "baremetal")).To(Equal(addr), "host %s provisioned with another address than it was inspected with", h)
	}
	g.Expect(provisioned).To(Equal(n))
	g.Expect(addressesOfPool(g)).To(Equal(inspected), "one address of %s per host, the one it was inspected with", pool)
}

// bootAddress is the static address of network id in a file the host booted with.
func bootAddress(g Gomega, hostName, file, id string) string {
	addr, ok := framework.BootNetwork(g, env, ns, hostName, file).Addresses()[id]
	g.Expect(ok).To(BeTrue(), "host %s: no address for network %s in %s", hostName, id, file)
	return addr
}

// addressesOfPool maps each host to the address of the pool its claim holds. Claims are named
// <host>-<pool>, by pre-provisioning and by the data controller with IP reuse alike.
func addressesOfPool(g Gomega) map[string]string {
	list := &ipamv1.IPAddressList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	out := map[string]string{}
	for _, a := range list.Items {
		if a.Spec.Pool.Name != pool {
			continue
		}
		h, ok := strings.CutSuffix(a.Spec.Claim.Name, "-"+pool)
		g.Expect(ok).To(BeTrue(), "IPAddress %s is held by claim %s, not named after a host", a.Name, a.Spec.Claim.Name)
		g.Expect(out).NotTo(HaveKey(h), "host %s holds two addresses of %s", h, pool)
		out[h] = string(a.Spec.Address)
	}
	return out
}
