package allocationview_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/manager/managertest"
	"github.com/metalwire/metalwire/pkg/ipam"
	"github.com/metalwire/metalwire/pkg/migrate"
)

// The seed's two PacketMachineTemplates go through migrate; their IPPools are applied and the
// image's manager (IPAM controllers) serves 20 machines' Cluster API IPAddressClaims, ten on each
// template's VLAN. Every address is unique and inside its template's range, the ConfigMap view
// equals the claims after the machines come and after half of them go, and the addresses of the
// machines that went are released.
func TestTwentyMachinesOnTheSeedsPoolsAndTheirConfigMapView(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	managertest.Start(t, env, ns, []controller.Group{controller.IPAM})

	in, err := os.ReadFile(filepath.Join("..", "..", "..", "test", "fixtures", "seeds", "004-02-packetmachinetemplate-multi.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	res, err := migrate.Migrate(in)
	g.Expect(err).NotTo(HaveOccurred())
	ranges := map[string]netip.Prefix{}
	for _, doc := range res.Documents {
		if doc.Kind != "IPPool" {
			continue
		}
		u := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal(doc.YAML, &u.Object)).To(Succeed())
		u.SetNamespace(ns)
		g.Expect(env.Client.Create(ctx, u)).To(Succeed())
		key := u.GetAnnotations()[ipam.AllocationViewKeyAnnotation]
		g.Expect(key).NotTo(BeEmpty(), "migrate gives each template pool its view key")
		ranges[u.GetName()] = netip.MustParsePrefix(key[len("ny-1000-"):])
	}
	pools := []string{"example-packet-machine-template-1000", "example-packet-machine-template-1-1001"}
	g.Expect(ranges).To(HaveLen(2))

	machine := func(i int) string { return fmt.Sprintf("machine-%02d", i) }
	for i := range 20 {
		create(t, &capiipamv1.IPAddressClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: machine(i)},
			Spec:       capiipamv1.IPAddressClaimSpec{PoolRef: capiipamv1.IPPoolReference{APIGroup: "ipam.metal3.io", Kind: "IPPool", Name: pools[i/10]}},
		})
	}

	// expect checks the claims of machines live: each has its address, unique, in its pool's
	// range; nobody else holds one; the ConfigMap says exactly that.
	expect := func(live []int) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			addrs := &capiipamv1.IPAddressList{}
			g.Expect(env.Client.List(ctx, addrs, client.InNamespace(ns))).To(Succeed())
			held := map[string]string{}
			view := map[string]map[string]string{}
			for _, p := range pools {
				view[keyOf(p, ranges[p])] = map[string]string{}
			}
			seen := map[string]bool{}
			for _, a := range addrs.Items {
				ip := netip.MustParseAddr(a.Spec.Address)
				g.Expect(seen[a.Spec.Address]).To(BeFalse(), "address %s handed out twice", a.Spec.Address)
				seen[a.Spec.Address] = true
				r := ranges[a.Spec.PoolRef.Name]
				g.Expect(r.Contains(ip) && ip != r.Addr() && ip.String() != gatewayOf(r)).To(BeTrue(), "%s outside %s or the gateway", ip, r)
				held[a.Spec.ClaimRef.Name] = a.Spec.Address
				view[keyOf(a.Spec.PoolRef.Name, r)][a.Spec.ClaimRef.Name] = a.Spec.Address
			}
			want := map[string]bool{}
			for _, i := range live {
				want[machine(i)] = true
			}
			g.Expect(held).To(HaveLen(len(live)))
			for m := range held {
				g.Expect(want).To(HaveKey(m))
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
		}, 60*time.Second).Should(Succeed())
	}
	all := make([]int, 20)
	for i := range all {
		all[i] = i
	}
	expect(all)

	// Half the machines go, five of each template.
	var live []int
	for i := range 20 {
		if i%10 < 5 {
			claim := &capiipamv1.IPAddressClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: machine(i)}}
			g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
		} else {
			live = append(live, i)
		}
	}
	expect(live)
	for i := range 20 {
		if i%10 < 5 {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: machine(i)}, &capiipamv1.IPAddress{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the address of %s is released", machine(i))
		}
	}
}

func keyOf(pool string, r netip.Prefix) string {
	vlan := "1000"
	if pool == "example-packet-machine-template-1-1001" {
		vlan = "1001"
	}
	return ipam.ConfigMapKey("ny-" + vlan + "-" + r.String())
}

// gatewayOf is the seed's gateway of a range: its first address.
func gatewayOf(r netip.Prefix) string { return r.Addr().Next().String() }

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}
