package metal3machine

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// A machine of a cluster with a ClusterNetwork claims a host the ClusterNetwork offers, selects
// it, writes no image until the host's switch ports are ready, and on delete gives the ports
// back once the host is deprovisioned.
func TestMachineWaitsForSwitchPortsAndGivesThemBack(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{})
	createFabric(t, ns, "c1", "switch1")
	open := switches.shut(t, ns+"-switch1")
	sw := switches.Switch(ns + "-switch1")
	createHost(t, ns, "h1", nil, bmov1.StateAvailable)
	createHost(t, ns, "h-no-nic", nil, bmov1.StateAvailable) // matches the selector, not in the ClusterNetwork
	createNIC(t, ns, "h1", "switch1")
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns).Status.Available).To(HaveKey("h1"))
	}, eventually, poll).Should(Succeed())

	m3m := createMachine(t, cluster, "m1", machineOpts{bootstrap: "m1-bootstrap"})

	// Claimed and selected, ports configuring (the switch does not answer yet): no image.
	g.Eventually(func(g Gomega) {
		host := getHost(g, ns, "h1")
		g.Expect(host.Spec.ConsumerRef).NotTo(BeNil())
		g.Expect(host.Spec.ConsumerRef.Name).To(Equal("m1"))
		g.Expect(nicLabel(g, ns, "h1")).To(Equal("cn1"))
		m := getM3M(g, m3m)
		c := condition(m, SwitchPortsReadyCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(WaitingForSwitchPortsReason))
		g.Expect(c.Message).To(ContainSubstring("switch ports of host h1 in ClusterNetwork cn1 (state: configuring)"))
		g.Expect(condition(m, infrav1.Metal3MachineReadyCondition).Reason).To(Equal(WaitingForSwitchPortsReason))
	}, eventually, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		host := getHost(g, ns, "h1")
		g.Expect(host.Spec.Image).To(BeNil(), "no image before the ports are ready")
		g.Expect(host.Spec.UserData).To(BeNil())
		g.Expect(getHost(g, ns, "h-no-nic").Spec.ConsumerRef).To(BeNil())
	}, 3*time.Second, poll).Should(Succeed())

	// The switch answers: the port carries the cluster's VLAN, then the host is provisioned.
	open()
	g.Eventually(func(g Gomega) {
		p, _ := sw.Port("p-h1")
		g.Expect(p).To(Equal(fabric.Port{Name: "p-h1", Mode: fabric.ModeAccess, VLAN: 1000}))
		host := getHost(g, ns, "h1")
		g.Expect(host.Spec.Image).NotTo(BeNil())
		g.Expect(host.Spec.Image.URL).To(Equal("http://images.example.com/ubuntu.qcow2"))
		c := condition(getM3M(g, m3m), SwitchPortsReadyCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(SwitchPortsReadyReason))
	}, eventually, poll).Should(Succeed())
	setHostState(t, ns, "h1", bmov1.StateProvisioned)

	// Delete: the ports stay while BMO deprovisions, and go back once it is done.
	g.Expect(env.Client.Delete(ctx, m3m)).To(Succeed())
	setHostState(t, ns, "h1", bmov1.StateDeprovisioning)
	g.Eventually(func(g Gomega) {
		g.Expect(getHost(g, ns, "h1").Spec.Image).To(BeNil())
	}, eventually, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(nicLabel(g, ns, "h1")).To(Equal("cn1"), "ports stay until the host is wiped")
	}, 2*time.Second, poll).Should(Succeed())
	setHostState(t, ns, "h1", bmov1.StateAvailable)
	g.Eventually(func(g Gomega) {
		g.Expect(nicLabel(g, ns, "h1")).To(BeEmpty())
		g.Expect(getHost(g, ns, "h1").Spec.ConsumerRef).To(BeNil())
		p, _ := sw.Port("p-h1")
		g.Expect(p).To(Equal(fabric.Port{Name: "p-h1", Mode: fabric.ModeAccess, VLAN: 1}), "back on the idle VLAN")
		cn := getCN(g, ns)
		g.Expect(cn.Status.Available).To(HaveKey("h1"))
		g.Expect(cn.Status.Selected).To(BeEmpty())
	}, eventually, poll).Should(Succeed())
}

// A host whose switch ports fail is given back before it is provisioned, and the machine takes
// another host, never the refused one again.
func TestMachineMovesOnFromASwitchPortError(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{})
	createFabric(t, ns, "c1", "switch1", "broken")
	switches.Switch(ns + "-broken").SetDown(true)
	createHost(t, ns, "h1", nil, bmov1.StateAvailable)
	createHost(t, ns, "h2", nil, bmov1.StateAvailable)
	createNIC(t, ns, "h1", "broken")
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns).Status.Available).To(HaveKey("h1"))
	}, eventually, poll).Should(Succeed())

	m3m := createMachine(t, cluster, "m1", machineOpts{bootstrap: "m1-bootstrap"})

	// h1's switch is down: the machine gives h1 back and, h2 not being in the ClusterNetwork
	// yet, says why it has no host.
	g.Eventually(func(g Gomega) {
		m := getM3M(g, m3m)
		g.Expect(m.Annotations).To(HaveKeyWithValue(RefusedHostsAnnotation, "h1"))
		g.Expect(m.Annotations).NotTo(HaveKey(infrav1.HostAnnotation))
		g.Expect(getHost(g, ns, "h1").Spec.ConsumerRef).To(BeNil())
		g.Expect(nicLabel(g, ns, "h1")).To(BeEmpty())
		c := condition(m, infrav1.AssociateBareMetalHostCondition)
		g.Expect(c.Reason).To(Equal(NoNetworkHostReason))
		g.Expect(c.Message).To(ContainSubstring("refused after a switch-port error: h1"))
		g.Expect(getHost(g, ns, "h2").Spec.ConsumerRef).To(BeNil(), "h2 has no NIC object, so it is not in the ClusterNetwork")
	}, eventually, poll).Should(Succeed())
	g.Expect(getHost(g, ns, "h1").Spec.Image).To(BeNil(), "a host whose ports failed is never provisioned")

	createNIC(t, ns, "h2", "switch1")
	g.Eventually(func(g Gomega) {
		m := getM3M(g, m3m)
		g.Expect(m.Annotations).To(HaveKeyWithValue(infrav1.HostAnnotation, ns+"/h2"))
		g.Expect(condition(m, SwitchPortsReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(getHost(g, ns, "h2").Spec.Image).NotTo(BeNil())
		g.Expect(nicLabel(g, ns, "h2")).To(Equal("cn1"))
	}, eventually, poll).Should(Succeed())
	g.Expect(getHost(g, ns, "h1").Spec.ConsumerRef).To(BeNil())
	g.Expect(nicLabel(g, ns, "h1")).To(BeEmpty())
}

// Machines created together each select a host of their own: no host is selected twice and no
// selection is lost.
func TestMachinesSelectHostsAtOnce(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	cluster := createCluster(t, ns, "c1", clusterOpts{})
	createFabric(t, ns, "c1", "switch1")
	const n = 6
	for i := range n {
		host := fmt.Sprintf("h%d", i)
		createHost(t, ns, host, nil, bmov1.StateAvailable)
		createNIC(t, ns, host, "switch1")
	}
	g.Eventually(func(g Gomega) {
		g.Expect(getCN(g, ns).Status.Available).To(HaveLen(n))
	}, eventually, poll).Should(Succeed())

	machines := make([]*infrav1.Metal3Machine, 0, n)
	for i := range n {
		machines = append(machines, createMachine(t, cluster, fmt.Sprintf("m%d", i), machineOpts{bootstrap: "bootstrap"}))
	}
	g.Eventually(func(g Gomega) {
		owners := map[string]string{}
		for _, m := range machines {
			m := getM3M(g, m)
			ann := m.Annotations[infrav1.HostAnnotation]
			g.Expect(ann).NotTo(BeEmpty(), "%s has no host", m.Name)
			g.Expect(owners).NotTo(HaveKey(ann), "host %s taken twice", ann)
			owners[ann] = m.Name
			g.Expect(condition(m, SwitchPortsReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		}
		cn := getCN(g, ns)
		g.Expect(cn.Status.Selected).To(HaveLen(n))
		g.Expect(cn.Status.Available).To(BeEmpty())
		for i := range n {
			host := fmt.Sprintf("h%d", i)
			g.Expect(nicLabel(g, ns, host)).To(Equal("cn1"))
			g.Expect(cn.Status.States[host].State).To(Equal(netv1.HostReady))
			h := getHost(g, ns, host)
			g.Expect(h.Spec.ConsumerRef).NotTo(BeNil())
			g.Expect(owners[ns+"/"+host]).To(Equal(h.Spec.ConsumerRef.Name))
		}
	}, 2*eventually, poll).Should(Succeed())
}
