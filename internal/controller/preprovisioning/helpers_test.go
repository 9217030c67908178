package preprovisioning_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/ippool"
	"github.com/metalwire/metalwire/internal/controller/preprovisioning"
	"github.com/metalwire/metalwire/internal/manager"
	"github.com/metalwire/metalwire/internal/manager/managertest"
)

const (
	timeout = 20 * time.Second
	poll    = 50 * time.Millisecond
	prefix  = infrav1.PreprovisioningDataTemplateReferencePrefix
)

// newNamespace gives the test a namespace of its own.
func newNamespace(t *testing.T) string { return env.NewNamespace(t) }

// startManager runs the IPPool controller (our IPAM) and the pre-provisioning controllers on
// the given namespaces until the test ends, or until the returned stop is called.
func startManager(t *testing.T, namespaces ...string) (stop func()) {
	t.Helper()
	return startManagerWith(t, "", namespaces...)
}

// startManagerWith is startManager with --watch-filter=watchFilter. The manager is the image's
// (managertest), its cache limited to the namespaces (every namespace if none).
func startManagerWith(t *testing.T, watchFilter string, namespaces ...string) (stop func()) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	ns := ""
	if len(namespaces) > 0 {
		ns = namespaces[0]
	}
	mgr := managertest.New(t, env, ns, nil, func(o *manager.Options) {
		if len(namespaces) > 1 {
			o.MoreNamespaces = namespaces[1:]
		}
	})
	g.Expect((&ippool.Reconciler{StatusInterval: 100 * time.Millisecond, WatchFilter: watchFilter}).SetupWithManager(ctx, mgr, 2)).To(Succeed())
	g.Expect(preprovisioning.SetupWithManager(ctx, mgr, 2, watchFilter)).To(Succeed())
	return managertest.Run(t, mgr)
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		NewWithT(t).Expect(env.Client.Create(context.Background(), o)).To(Succeed(), "creating %s", o.GetName())
	}
}

func addr(s string) *ipamv1.IPAddressStr { return ptr.To(ipamv1.IPAddressStr(s)) }

// newPool is an IPPool of the addresses first..last of 192.168.<net>.0/24; cluster, when not
// empty, makes it a cluster's pool (the common-pool scenario).
func newPool(ns, name, cluster string, net, first, last int) *ipamv1.IPPool {
	p := &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: ipamv1.IPPoolSpec{
			NamePrefix: name,
			Prefix:     24,
			Gateway:    addr(fmt.Sprintf("192.168.%d.1", net)),
			DNSServers: []ipamv1.IPAddressStr{ipamv1.IPAddressStr(fmt.Sprintf("192.168.%d.2", net))},
			Pools:      []ipamv1.Pool{{Start: addr(fmt.Sprintf("192.168.%d.%d", net, first)), End: addr(fmt.Sprintf("192.168.%d.%d", net, last))}},
		},
	}
	if cluster != "" {
		p.Spec.ClusterName = ptr.To(cluster)
	}
	return p
}

// newTemplate is the seed's template: the boot NIC with an address, default route and DNS
// from pool.
func newTemplate(ns, name, pool string) *infrav1.Metal3PreprovisioningDataTemplate {
	return &infrav1.Metal3PreprovisioningDataTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: infrav1.Metal3PreprovisioningDataTemplateSpec{PreprovisioningNetworkData: &infrav1.NetworkData{
			Links: &infrav1.NetworkDataLinks{Ethernets: []infrav1.NetworkDataLinkEthernet{{
				Type: "phy", ID: "eth0", MACAddress: &infrav1.NetworkLinkEthernetMac{FromBootMAC: ptr.To(true)},
			}}},
			Networks: &infrav1.NetworkDataNetworks{IPv4: []infrav1.NetworkDataIPv4{{
				ID: "eth0", Link: "eth0", IPAddressFromIPPool: pool,
				Routes: []infrav1.NetworkDataRoutev4{{
					Network: "0.0.0.0", Gateway: infrav1.NetworkGatewayv4{FromIPPool: ptr.To(pool)},
				}},
			}}},
			Services: &infrav1.NetworkDataService{DNSFromIPPool: ptr.To(pool)},
		}},
	}
}

// newHost is a freshly registered host naming template; paused, when not empty, is the value of
// its paused annotation.
func newHost(ns, name, template, paused string, mac int) *bmov1.BareMetalHost {
	h := &bmov1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{}},
		Spec:       bmov1.BareMetalHostSpec{Online: true, BootMACAddress: fmt.Sprintf("52:54:00:00:00:%02x", mac)},
	}
	if template != "" {
		h.Annotations[bmov1.PreprovisioningNetworkDataReferenceAnnotation] = template
	}
	if paused != "" {
		h.Annotations[bmov1.PausedAnnotation] = paused
	}
	return h
}

func getHost(g Gomega, ns, name string) *bmov1.BareMetalHost {
	h := &bmov1.BareMetalHost{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, h)).To(Succeed())
	return h
}

// waitRendered waits until the host names its Secret and is no longer held by our pause.
func waitRendered(t *testing.T, ns, name string) *bmov1.BareMetalHost {
	t.Helper()
	var h *bmov1.BareMetalHost
	NewWithT(t).Eventually(func(g Gomega) {
		h = getHost(g, ns, name)
		g.Expect(h.Spec.PreprovisioningNetworkDataName).To(Equal(name + "-preprov-networkdata"))
		g.Expect(h.Annotations).NotTo(HaveKeyWithValue(bmov1.PausedAnnotation, infrav1.PreprovisioningPausedAnnotationValue))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	return h
}

// setState writes the host's provisioning state, as BMO would.
func setState(t *testing.T, ns, name string, state bmov1.ProvisioningState) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		h := getHost(g, ns, name)
		before := h.DeepCopy()
		h.Status.Provisioning.State = state
		g.Expect(env.Client.Status().Patch(context.Background(), h, client.MergeFrom(before))).To(Succeed())
	}).WithTimeout(timeout).Should(Succeed())
}

// claimedAddress waits for the IPClaim to hold an address and returns it.
func claimedAddress(t *testing.T, ns, claim string) string {
	t.Helper()
	var got string
	NewWithT(t).Eventually(func(g Gomega) {
		c := &ipamv1.IPClaim{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: claim}, c)).To(Succeed())
		g.Expect(c.Status.Address).NotTo(BeNil())
		a := &ipamv1.IPAddress{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: c.Status.Address.Name}, a)).To(Succeed())
		got = string(a.Spec.Address)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	return got
}

// claimGone waits until the claim is deleted or being deleted (IPAM then releases its address).
func claimGone(t *testing.T, ns, claim string) {
	t.Helper()
	NewWithT(t).Eventually(func() bool {
		c := &ipamv1.IPClaim{}
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: claim}, c)
		return apierrors.IsNotFound(err) || (err == nil && !c.DeletionTimestamp.IsZero())
	}).WithTimeout(timeout).WithPolling(poll).Should(BeTrue(), "IPClaim %s should be released", claim)
}

// claims lists the names of the IPClaims in ns.
func claims(g Gomega, ns string) []string {
	list := &ipamv1.IPClaimList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	names := []string{}
	for _, c := range list.Items {
		names = append(names, c.Name)
	}
	return names
}

func getSecret(g Gomega, ns, name string) *corev1.Secret {
	s := &corev1.Secret{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
	return s
}

func getTemplate(g Gomega, ns, name string) *infrav1.Metal3PreprovisioningDataTemplate {
	tmpl := &infrav1.Metal3PreprovisioningDataTemplate{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, tmpl)).To(Succeed())
	return tmpl
}

// hostEvents waits for an event with the reason about the host and returns its note.
func hostEvent(t *testing.T, ns, host, reason string) string {
	t.Helper()
	var note string
	NewWithT(t).Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		for _, e := range list.Items {
			if e.Regarding.Name == host && e.Regarding.Kind == "BareMetalHost" && e.Reason == reason {
				note = e.Note
				return
			}
		}
		g.Expect(list.Items).To(ContainElement(HaveField("Reason", reason)), "no %s event for host %s", reason, host)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	return note
}

// templateError waits until the template lists the host among its errors with the reason, and
// returns the entry.
func templateError(t *testing.T, ns, template, host, reason string) infrav1.PreprovisioningHostError {
	t.Helper()
	var got infrav1.PreprovisioningHostError
	NewWithT(t).Eventually(func(g Gomega) {
		tmpl := getTemplate(g, ns, template)
		g.Expect(tmpl.Status.Errors).To(ContainElement(And(HaveField("Host", host), HaveField("Reason", reason))), "status: %+v", tmpl.Status)
		for _, e := range tmpl.Status.Errors {
			if e.Host == host {
				got = e
			}
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	return got
}

// networkData is the part of a rendered document the tests look at.
type networkData struct {
	Links []struct {
		ID  string `json:"id"`
		MAC string `json:"ethernet_mac_address"`
	} `json:"links"`
	Networks []struct {
		IPAddress string `json:"ip_address"`
		Routes    []struct {
			Gateway string `json:"gateway"`
		} `json:"routes"`
	} `json:"networks"`
	Services []struct {
		Address string `json:"address"`
	} `json:"services"`
}

func parseNetworkData(g Gomega, doc []byte) networkData {
	var nd networkData
	g.Expect(yaml.Unmarshal(doc, &nd)).To(Succeed())
	return nd
}
