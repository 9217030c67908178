package metal3machine

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

func annotateHost(t *testing.T, ns, name string, set map[string]*string) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		host := &bmov1.BareMetalHost{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, host); err != nil {
			return err
		}
		orig := host.DeepCopy()
		if host.Annotations == nil {
			host.Annotations = map[string]string{}
		}
		for k, v := range set {
			if v == nil {
				delete(host.Annotations, k)
			} else {
				host.Annotations[k] = *v
			}
		}
		return env.Client.Patch(context.Background(), host, client.MergeFrom(orig))
	}, eventually, poll).Should(Succeed())
}

func hostOf(g Gomega, m3m *infrav1.Metal3Machine) string {
	return getM3M(g, m3m).Annotations[infrav1.HostAnnotation]
}

// Hosts marked unhealthy, with upstream's annotation or its older spelling, are passed over; the
// machine left without a host says that is why; clearing the mark lets it in.
func TestUnhealthyHostsArePassedOver(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{})
	pool := map[string]string{"pool": "p"}
	createHost(t, ns, "h1", pool, bmov1.StateAvailable)
	createHost(t, ns, "h2", pool, bmov1.StateAvailable)
	createHost(t, ns, "h3", pool, bmov1.StateAvailable)
	annotateHost(t, ns, "h1", map[string]*string{UnhealthyAnnotation: ptr.To("")})
	annotateHost(t, ns, "h2", map[string]*string{UnhealthyAnnotationDeprecated: ptr.To("remediation gave up")})

	sel := infrav1.HostSelector{MatchLabels: pool}
	first := createMachine(t, cluster, "m1", machineOpts{bootstrap: "b", selector: sel})
	g.Eventually(func(g Gomega) {
		g.Expect(hostOf(g, first)).To(Equal(ns + "/h3"))
	}, eventually, poll).Should(Succeed())

	second := createMachine(t, cluster, "m2", machineOpts{bootstrap: "b", selector: sel})
	g.Eventually(func(g Gomega) {
		m := getM3M(g, second)
		g.Expect(m.Annotations[infrav1.HostAnnotation]).To(BeEmpty())
		c := condition(m, infrav1.AssociateBareMetalHostCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Message).To(ContainSubstring("none of the 3 hosts matching hostSelector pool=p can be claimed: " +
			"2 are marked unhealthy (annotation capi.metal3.io/unhealthy, capm3.metal3.io/unhealthy: h1, h2; remove it once the host is repaired)"))
		g.Expect(c.Message).To(ContainSubstring("h3 is claimed by Metal3Machine m1"))
	}, eventually, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(getHost(g, ns, "h1").Spec.ConsumerRef).To(BeNil())
		g.Expect(getHost(g, ns, "h2").Spec.ConsumerRef).To(BeNil())
	}, "2s", poll).Should(Succeed())

	// The host is repaired: its mark removed, the waiting machine takes it.
	annotateHost(t, ns, "h1", map[string]*string{UnhealthyAnnotation: nil})
	g.Eventually(func(g Gomega) {
		g.Expect(hostOf(g, second)).To(Equal(ns + "/h1"))
	}, eventually, poll).Should(Succeed())
	g.Expect(getHost(g, ns, "h2").Spec.ConsumerRef).To(BeNil())
}

// createDeploymentMachine makes a Machine of MachineDeployment md and its Metal3Machine cloned
// from template, labelled as Cluster API's MachineSet controller labels them.
func createDeploymentMachine(t *testing.T, cluster *clusterv1.Cluster, name, md, template string, sel infrav1.HostSelector) *infrav1.Metal3Machine {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	lbls := map[string]string{clusterv1.ClusterNameLabel: cluster.Name, clusterv1.MachineDeploymentNameLabel: md}
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name, Labels: lbls},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster.Name,
			Bootstrap: clusterv1.Bootstrap{
				ConfigRef:      clusterv1.ContractVersionedObjectReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig", Name: name},
				DataSecretName: ptr.To(name + "-bootstrap"),
			},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: name},
		},
	}
	g.Expect(env.Client.Create(ctx, machine)).To(Succeed())
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cluster.Namespace, Name: name, Labels: lbls,
			Annotations: map[string]string{
				clusterv1.TemplateClonedFromNameAnnotation:      template,
				clusterv1.TemplateClonedFromGroupKindAnnotation: "Metal3MachineTemplate." + infrav1.GroupVersion.Group,
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: machine.UID}},
		},
		Spec: infrav1.Metal3MachineSpec{
			Image:        infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")},
			HostSelector: sel,
		},
	}
	g.Expect(env.Client.Create(ctx, m3m)).To(Succeed())
	return m3m
}

func createTemplate(t *testing.T, ns, name string, nodeReuse bool) {
	t.Helper()
	tmpl := &infrav1.Metal3MachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: infrav1.Metal3MachineTemplateSpec{
			NodeReuse: ptr.To(nodeReuse),
			Template: infrav1.Metal3MachineTemplateResource{Spec: infrav1.Metal3MachineSpec{
				Image: infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")},
			}},
		},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), tmpl)).To(Succeed())
}

// deleteAndDeprovision deletes a provisioned machine and plays BMO until its host is let go.
func deleteAndDeprovision(t *testing.T, m3m *infrav1.Metal3Machine, host string) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(env.Client.Delete(context.Background(), m3m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getHost(g, m3m.Namespace, host).Spec.Image).To(BeNil())
	}, eventually, poll).Should(Succeed())
	setHostState(t, m3m.Namespace, host, bmov1.StateDeprovisioning)
	setHostState(t, m3m.Namespace, host, bmov1.StateAvailable)
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(m3m), &infrav1.Metal3Machine{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		g.Expect(err).To(HaveOccurred(), "the Metal3Machine is still there")
	}, eventually, poll).Should(Succeed())
}

// successorName picks a machine name whose own first choice among hosts is not avoid: without
// node reuse that machine lands elsewhere, so landing on avoid proves reuse did it.
func successorName(t *testing.T, ns string, hosts []string, avoid string) string {
	t.Helper()
	list := make([]bmov1.BareMetalHost, len(hosts))
	for i, h := range hosts {
		list[i] = testHost(h, nil)
	}
	for i := range 50 {
		name := fmt.Sprintf("next-%d", i)
		m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if order := preferred(m, "", list, labels.Everything(), sets.New[string]()); order[0].Name != avoid {
			return name
		}
	}
	t.Fatalf("no machine name prefers a host other than %s", avoid)
	return ""
}

// A rolling upgrade of a MachineDeployment whose template has nodeReuse: the machine that
// replaces a deleted one takes the host it released, although other free hosts match and the
// new machine would prefer one of them. Without nodeReuse the same machine goes to its own
// choice, and the released host is free for anyone.
func TestNodeReuse(t *testing.T) {
	for _, reuse := range []bool{true, false} {
		t.Run(fmt.Sprintf("nodeReuse=%v", reuse), func(t *testing.T) {
			g := NewWithT(t)
			ns := newNamespace(t)
			cluster := createCluster(t, ns, "c1", clusterOpts{})
			hosts := []string{"h-a", "h-b", "h-c"}
			for _, h := range hosts {
				createHost(t, ns, h, map[string]string{"pool": "workers"}, bmov1.StateAvailable)
			}
			createTemplate(t, ns, "workers-v1", reuse)
			createTemplate(t, ns, "workers-v2", reuse)
			sel := infrav1.HostSelector{MatchLabels: map[string]string{"pool": "workers"}}

			old := createDeploymentMachine(t, cluster, "old", "workers", "workers-v1", sel)
			var released string
			g.Eventually(func(g Gomega) {
				ann := hostOf(g, old)
				g.Expect(ann).NotTo(BeEmpty())
				released = ann[len(ns)+1:]
			}, eventually, poll).Should(Succeed())
			setHostState(t, ns, released, bmov1.StateProvisioned)

			deleteAndDeprovision(t, old, released)
			h := getHost(g, ns, released)
			if reuse {
				g.Expect(h.Labels).To(HaveKeyWithValue(NodeReuseLabel, "md-workers"))
				g.Expect(h.Spec.ConsumerRef).NotTo(BeNil())
				g.Expect(h.Spec.ConsumerRef.Kind).To(Equal("Cluster"), "the host stays reserved for the cluster")
				g.Expect(h.Spec.ConsumerRef.Name).To(Equal("c1"))
			} else {
				g.Expect(h.Labels).NotTo(HaveKey(NodeReuseLabel))
				g.Expect(h.Spec.ConsumerRef).To(BeNil())
			}

			// The successor, from the upgraded template of the same MachineDeployment.
			name := successorName(t, ns, hosts, released)
			next := createDeploymentMachine(t, cluster, name, "workers", "workers-v2", sel)
			g.Eventually(func(g Gomega) {
				g.Expect(hostOf(g, next)).NotTo(BeEmpty())
			}, eventually, poll).Should(Succeed())
			got := hostOf(g, next)
			if !reuse {
				g.Expect(got).NotTo(Equal(ns+"/"+released), "without nodeReuse the new machine takes its own choice")
				return
			}
			g.Expect(got).To(Equal(ns + "/" + released))
			h = getHost(g, ns, released)
			g.Expect(h.Spec.ConsumerRef.Kind).To(Equal(metal3MachineKind))
			g.Expect(h.Spec.ConsumerRef.Name).To(Equal(name))
			g.Expect(h.Labels).NotTo(HaveKey(NodeReuseLabel), "the claim ends the reservation")
			// The claim is written first; the condition comes with the machine's status, once the
			// host is shaped (the same reconcile or the next).
			g.Eventually(func(g Gomega) {
				g.Expect(condition(getM3M(g, next), infrav1.AssociateBareMetalHostCondition).Status).To(Equal(metav1.ConditionTrue))
			}, eventually, poll).Should(Succeed())
		})
	}
}

// Two machines wait while their Cluster's infrastructure is not ready: "wide" accepts h1 and h2
// and prefers h1; "narrow" accepts h1 only. Each taking its own first choice, wide would take h1
// and narrow wait for ever. Sharing one matching, both get a host.
func TestOverlappingSelectorsServeEveryMachine(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{unprovisioned: true})
	createHost(t, ns, "h1", map[string]string{"rack": "r1"}, bmov1.StateAvailable)
	createHost(t, ns, "h2", map[string]string{"rack": "r2"}, bmov1.StateAvailable)

	// A name whose own first choice of the two is h1.
	wideName := ""
	for i := range 50 {
		name := fmt.Sprintf("wide-%d", i)
		m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		list := []bmov1.BareMetalHost{testHost("h1", nil), testHost("h2", nil)}
		if preferred(m, "", list, labels.Everything(), sets.New[string]())[0].Name == "h1" {
			wideName = name
			break
		}
	}
	g.Expect(wideName).NotTo(BeEmpty())
	wide := createMachine(t, cluster, wideName, machineOpts{bootstrap: "b", selector: expr("rack", "in", "r1", "r2")})
	narrow := createMachine(t, cluster, "narrow", machineOpts{bootstrap: "b", selector: expr("rack", "in", "r1")})
	g.Eventually(func(g Gomega) {
		for _, m := range []*infrav1.Metal3Machine{wide, narrow} {
			g.Expect(condition(getM3M(g, m), infrav1.AssociateBareMetalHostCondition).Reason).To(Equal(infrav1.WaitingForClusterInfrastructureReadyReason))
		}
	}, eventually, poll).Should(Succeed())

	c := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), c)).To(Succeed())
	c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	g.Expect(env.Client.Status().Update(ctx, c)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(hostOf(g, narrow)).To(Equal(ns + "/h1"))
		g.Expect(hostOf(g, wide)).To(Equal(ns + "/h2"))
	}, eventually, poll).Should(Succeed())
}

// A machine that cannot claim yet (no bootstrap data) takes no place in the shared matching: a
// machine that can claim gets the host both accept.
func TestMachineNotReadyHoldsNoHost(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{})
	createHost(t, ns, "h1", map[string]string{"rack": "r1"}, bmov1.StateAvailable)
	sel := expr("rack", "in", "r1")
	early := createMachine(t, cluster, "a-early", machineOpts{selector: sel})
	g.Eventually(func(g Gomega) {
		g.Expect(condition(getM3M(g, early), infrav1.AssociateBareMetalHostCondition).Reason).To(Equal(infrav1.WaitingForBootstrapDataReason))
	}, eventually, poll).Should(Succeed())
	ready := createMachine(t, cluster, "b-ready", machineOpts{bootstrap: "b", selector: sel})
	g.Eventually(func(g Gomega) {
		g.Expect(hostOf(g, ready)).To(Equal(ns + "/h1"))
	}, eventually, poll).Should(Succeed())
}
