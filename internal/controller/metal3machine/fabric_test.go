package metal3machine

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

func TestPortsState(t *testing.T) {
	cn := &netv1.ClusterNetwork{ObjectMeta: metav1.ObjectMeta{Name: "cn1"}, Status: netv1.ClusterNetworkStatus{States: map[string]netv1.HostNetworkState{
		"ready":       {NIC: "nic-ready", State: netv1.HostReady},
		"configuring": {NIC: "nic-c", State: netv1.HostConfiguring, Message: "switch1 port p1 not yet recorded"},
		"error":       {NIC: "nic-e", State: netv1.HostError, Message: "switch switch1: connection refused"},
	}}}
	for _, c := range []struct {
		host    string
		verdict portVerdict
		msg     string
	}{
		{"ready", portsReady, ""},
		{"configuring", portsWait, "waiting for the switch ports of host configuring in ClusterNetwork cn1 (state: configuring): switch1 port p1 not yet recorded"},
		{"error", portsFailed, "the switch ports of host error failed in ClusterNetwork cn1: switch switch1: connection refused"},
		{"unseen", portsWait, "waiting for ClusterNetwork cn1 to see host unseen selected"},
	} {
		t.Run(c.host, func(t *testing.T) {
			g := NewWithT(t)
			v, msg := portsState(cn, c.host)
			g.Expect(v).To(Equal(c.verdict))
			g.Expect(msg).To(Equal(c.msg))
		})
	}
}

func TestRefusedHosts(t *testing.T) {
	g := NewWithT(t)
	g.Expect(refusedHosts(nil).Len()).To(Equal(0))
	a := withRefused(nil, "h2")
	a = withRefused(a, "h1")
	a = withRefused(a, "h2")
	g.Expect(a[RefusedHostsAnnotation]).To(Equal("h1,h2"))
	g.Expect(sets.List(refusedHosts(map[string]string{RefusedHostsAnnotation: " h3, ,h1"}))).To(Equal([]string{"h1", "h3"}))
}

func TestNetworkHosts(t *testing.T) {
	g := NewWithT(t)
	cn := &netv1.ClusterNetwork{ObjectMeta: metav1.ObjectMeta{Name: "cn1"},
		Status: netv1.ClusterNetworkStatus{Available: map[string]string{"h1": "nic-h1", "h2": "nic-h2", "h3": "nic-h3"}}}
	g.Expect(sets.List(networkHosts(cn, sets.New("h2")))).To(Equal([]string{"h1", "h3"}))
	g.Expect(networkHosts(&netv1.ClusterNetwork{}, nil).Len()).To(Equal(0))

	msg := noNetworkHostMessage(cn, sets.New("h2"), "none of the 1 hosts matching an empty hostSelector can be claimed")
	g.Expect(msg).To(Equal("no host is both available in ClusterNetwork cn1 and claimable (available: h1, h2, h3); " +
		"refused after a switch-port error: h2 (annotation network.metalwire.io/refused-hosts); " +
		"none of the 1 hosts matching an empty hostSelector can be claimed; add NIC objects for more hosts or wait for one to be given back"))
	g.Expect(noNetworkHostMessage(&netv1.ClusterNetwork{ObjectMeta: metav1.ObjectMeta{Name: "cn1"}}, nil, "")).
		To(HavePrefix("ClusterNetwork cn1 has no available host"))
}

func TestNICToLabel(t *testing.T) {
	g := NewWithT(t)
	g.Expect(nicToLabel(nil)).To(BeNil())
	nic := func(name, label string) netv1.NIC {
		n := netv1.NIC{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if label != "" {
			n.Labels = map[string]string{netv1.SelectedForLabel: label}
		}
		return n
	}
	g.Expect(nicToLabel([]netv1.NIC{nic("b", ""), nic("a", "")}).Name).To(Equal("a"))
	g.Expect(nicToLabel([]netv1.NIC{nic("a", ""), nic("b", "cn1")}).Name).To(Equal("b"), "the labelled one stays the one")
}
