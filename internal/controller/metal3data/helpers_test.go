package metal3data_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/ippool"
	"github.com/metalwire/metalwire/internal/controller/metal3data"
	"github.com/metalwire/metalwire/internal/controller/metal3dataclaim"
	"github.com/metalwire/metalwire/internal/controller/metal3datatemplate"
	"github.com/metalwire/metalwire/internal/controller/waits"
	"github.com/metalwire/metalwire/internal/manager/managertest"
)

const (
	timeout = 60 * time.Second
	poll    = 100 * time.Millisecond
)

// newNamespace gives the test a namespace of its own.
func newNamespace(t *testing.T) string { return env.NewNamespace(t) }

func createNamespace(t *testing.T, name string) {
	t.Helper()
	NewWithT(t).Expect(env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
}

// manager runs the three data-templating controllers and the IPAM controller.
type manager struct {
	// client reads through the manager's cache, with its indexes, as the controllers do.
	client client.Client
	// stop stops the manager and waits for it; calling it again does nothing.
	stop func()
	// cache is the manager's cache, which holds whole (transformed) objects; rendered holds the
	// metadata of the Secrets a Metal3Data renders.
	cache, rendered cache.Cache
}

type managerOptions struct {
	ipReuse bool
	// quietWaits is the claim and data controllers' QuietWaits; zero: their default.
	quietWaits time.Duration
	// dataClient, when set, wraps the client the Metal3Data controller reads and writes with.
	dataClient func(client.Client) client.Client
}

// startManager starts the image's manager (managertest) reconciling namespace ns with the three
// data-templating controllers and the IPAM controller, set up as opts says; it stops when the
// test ends (or earlier, with stop).
func startManager(t *testing.T, ns string, opts managerOptions) *manager {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	mgr := managertest.New(t, env, ns, nil)
	g.Expect((&ippool.Reconciler{StatusInterval: 100 * time.Millisecond}).SetupWithManager(ctx, mgr, 4)).To(Succeed())
	g.Expect((&metal3datatemplate.Reconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, 4)).To(Succeed())
	progress := &waits.Progress{} // shared, as the manager's controller setup shares it
	g.Expect((&metal3dataclaim.Reconciler{Client: mgr.GetClient(), QuietWaits: opts.quietWaits, Progress: progress}).SetupWithManager(ctx, mgr, 4)).To(Succeed())
	dataClient := mgr.GetClient()
	if opts.dataClient != nil {
		dataClient = opts.dataClient(dataClient)
	}
	g.Expect((&metal3data.Reconciler{
		Client: dataClient, APIReader: mgr.GetAPIReader(), IPReuse: opts.ipReuse, Recorder: mgr.GetEventRecorder("metal3data"),
		QuietWaits: opts.quietWaits, Progress: progress, RenderedSecrets: mgr.RenderedSecrets,
	}).SetupWithManager(ctx, mgr, 4)).To(Succeed())
	return &manager{client: mgr.GetClient(), cache: mgr.GetCache(), rendered: mgr.RenderedSecrets, stop: managertest.Run(t, mgr)}
}

// pool creates an IPPool handing out start..end.
func pool(t *testing.T, ns, name, start, end string, prefix int, gateway string, dns ...string) *ipamv1.IPPool {
	t.Helper()
	p := &ipamv1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: ipamv1.IPPoolSpec{
			NamePrefix: name,
			Pools:      []ipamv1.Pool{{Start: addr(start), End: addr(end)}},
			Prefix:     prefix,
		},
	}
	if gateway != "" {
		p.Spec.Gateway = addr(gateway)
	}
	for _, d := range dns {
		p.Spec.DNSServers = append(p.Spec.DNSServers, ipamv1.IPAddressStr(d))
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), p)).To(Succeed())
	return p
}

func addr(s string) *ipamv1.IPAddressStr {
	a := ipamv1.IPAddressStr(s)
	return &a
}

// host creates a BareMetalHost with the given NICs (name=mac pairs) as inspected.
func host(t *testing.T, ns, name string, labels, annotations map[string]string, bootMAC string, nics ...string) *bmov1.BareMetalHost {
	t.Helper()
	g := NewWithT(t)
	h := &bmov1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: annotations},
		Spec:       bmov1.BareMetalHostSpec{Online: true, BootMACAddress: bootMAC},
	}
	g.Expect(env.Client.Create(context.Background(), h)).To(Succeed())
	if len(nics) > 0 {
		h.Status.HardwareDetails = &bmov1.HardwareDetails{}
		for _, n := range nics {
			name, mac, _ := strings.Cut(n, "=")
			h.Status.HardwareDetails.NIC = append(h.Status.HardwareDetails.NIC, bmov1.NIC{Name: name, MAC: mac})
		}
		g.Expect(env.Client.Status().Update(context.Background(), h)).To(Succeed())
	}
	return h
}

// addNIC gives the host another NIC, as a re-inspection that finds it would.
func addNIC(t *testing.T, h *bmov1.BareMetalHost, name, mac string) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(h), h)).To(Succeed())
	h.Status.HardwareDetails.NIC = append(h.Status.HardwareDetails.NIC, bmov1.NIC{Name: name, MAC: mac})
	g.Expect(env.Client.Status().Update(context.Background(), h)).To(Succeed())
}

// machineOpts shape the Machine -> Metal3Machine -> Metal3DataClaim chain.
type machineOpts struct {
	machine            string // CAPI Machine name; default: the Metal3Machine's
	host               string // BareMetalHost annotation; empty: no host yet
	machineAnnotations map[string]string
	cluster            string
}

// machine creates a CAPI Machine, its Metal3Machine (holding host, if given) and the
// Metal3DataClaim the machine controller would make, named after the Metal3Machine.
func machine(t *testing.T, ns, m3mName, template string, o machineOpts) *infrav1.Metal3DataClaim {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	if o.machine == "" {
		o.machine = m3mName
	}
	if o.cluster == "" {
		o.cluster = "cluster-a"
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: o.machine, Annotations: o.machineAnnotations,
			Labels: map[string]string{clusterv1.ClusterNameLabel: o.cluster}},
		Spec: clusterv1.MachineSpec{
			ClusterName: o.cluster,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig", Name: o.machine,
			}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: m3mName},
		},
	}
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: m3mName,
			Labels: map[string]string{clusterv1.ClusterNameLabel: o.cluster},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID,
			}},
		},
		Spec: infrav1.Metal3MachineSpec{
			Image:        infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")},
			DataTemplate: &corev1.ObjectReference{Name: template},
		},
	}
	if o.host != "" {
		m3m.Annotations = map[string]string{infrav1.HostAnnotation: ns + "/" + o.host}
	}
	g.Expect(env.Client.Create(ctx, m3m)).To(Succeed())
	return claim(t, ns, m3m, template)
}

// claim creates the Metal3DataClaim of a Metal3Machine.
func claim(t *testing.T, ns string, m3m *infrav1.Metal3Machine, template string) *infrav1.Metal3DataClaim {
	t.Helper()
	c := &infrav1.Metal3DataClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: m3m.Name,
			Labels: map[string]string{clusterv1.ClusterNameLabel: m3m.Labels[clusterv1.ClusterNameLabel]},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Machine", Name: m3m.Name, UID: m3m.UID,
			}},
		},
		Spec: infrav1.Metal3DataClaimSpec{Template: corev1.ObjectReference{Name: template}},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), c)).To(Succeed())
	return c
}

// associate sets the host annotation on a Metal3Machine, as the machine controller does.
func associate(t *testing.T, ns, m3mName, hostName string) {
	t.Helper()
	g := NewWithT(t)
	m3m := &infrav1.Metal3Machine{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: m3mName}, m3m)).To(Succeed())
	before := m3m.DeepCopy()
	if m3m.Annotations == nil {
		m3m.Annotations = map[string]string{}
	}
	m3m.Annotations[infrav1.HostAnnotation] = ns + "/" + hostName
	g.Expect(env.Client.Patch(context.Background(), m3m, client.MergeFrom(before))).To(Succeed())
}

func getData(g Gomega, ns, name string) *infrav1.Metal3Data {
	d := &infrav1.Metal3Data{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
	return d
}

func getClaim(g Gomega, ns, name string) *infrav1.Metal3DataClaim {
	c := &infrav1.Metal3DataClaim{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
	return c
}

func getSecret(g Gomega, ns, name string) *corev1.Secret {
	s := &corev1.Secret{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
	return s
}

// renderedData waits for the claim to be served by a ready Metal3Data and returns it.
func renderedData(t *testing.T, ns, claimName string) *infrav1.Metal3Data {
	t.Helper()
	var data *infrav1.Metal3Data
	NewWithT(t).Eventually(func(g Gomega) {
		c := getClaim(g, ns, claimName)
		g.Expect(c.Status.RenderedData).NotTo(BeNil(), "claim status: %+v", c.Status)
		data = getData(g, ns, c.Status.RenderedData.Name)
		g.Expect(data.Status.Ready).To(BeTrue(), "Metal3Data status: %+v", data.Status)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	return data
}

// readyCondition returns a condition of a list, or a zero one.
func condition(conds []metav1.Condition, typ string) metav1.Condition {
	for _, c := range conds {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

// template creates a Metal3DataTemplate.
func template(t *testing.T, ns, name string, spec infrav1.Metal3DataTemplateSpec) *infrav1.Metal3DataTemplate {
	t.Helper()
	tmpl := &infrav1.Metal3DataTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
	NewWithT(t).Expect(env.Client.Create(context.Background(), tmpl)).To(Succeed())
	return tmpl
}
