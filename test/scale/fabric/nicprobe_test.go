package fabric

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/pkg/fabric"
	"github.com/metalwire/metalwire/test/scale/measure"
)

// TestNICStatusWriteCost is a probe beside TestNetworkDeviceStatusWriteCost: what the API server
// spends on the NIC statuses of FABRIC_BENCH_HOSTS (default 1,000) bonded hosts, written by the
// benchmark's writers as the clusternetwork controller writes them (a merge patch each), and what
// the bond's access list costs in them: on both member cards (as written), on one, on none. It
// prints each variant's status bytes per host and the server's CPU per write. Run it alone:
//
//	METALWIRE_SCALE=1 go test ./test/scale/fabric -run TestNICStatusWriteCost -v -count=1
func TestNICStatusWriteCost(t *testing.T) {
	hosts := envInt(t, "FABRIC_BENCH_HOSTS", 1000)
	g := NewWithT(t)
	ctx := context.Background()
	const probeNS = "probe-nic-status"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probeNS}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	measure.Parallel(t, writers, hosts, func(h int) error {
		nic := &netv1.NIC{ObjectMeta: metav1.ObjectMeta{Namespace: probeNS, Name: hostName(h)}, Spec: netv1.NICSpec{Node: hostName(h), NetworkDeviceRef: "fabric"}}
		for c := 0; c < 2; c++ {
			nic.Spec.NICs = append(nic.Spec.NICs, netv1.HostNIC{
				NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: switchName(h % 20), Port: intstr.FromString(fmt.Sprintf("p%04d", 2*(h/20)+c))}},
				Capability:    netv1.NICCapability{Speed: 10000},
			})
		}
		err := env.Client.Create(ctx, nic)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	status := func(h, listsOn int) netv1.NICStatus {
		lag := &netv1.CardLAG{Name: fabric.LAGName(hostName(h), "control"), Mode: netv1.LAGLACP, LACPRate: netv1.LACPSlow}
		st := netv1.NICStatus{ClusterNetwork: "bench"}
		for c := 0; c < 2; c++ {
			a := &netv1.NICAssignment{Network: "control", VLANID: 1000, PortMode: netv1.PortModeAccess, LAG: lag}
			if c < listsOn {
				a.ACLs = cardACLs("control")
				a.ACLs[0].Name = fabric.ACLName(hostName(h), "control")
			}
			st.NICs = append(st.NICs, a)
		}
		return st
	}
	set := func(h int, from, to netv1.NICStatus) error {
		nic := &netv1.NIC{ObjectMeta: metav1.ObjectMeta{Namespace: probeNS, Name: hostName(h)}, Status: from}
		base := nic.DeepCopy()
		nic.Status = to
		return env.Client.Status().Patch(ctx, nic, client.MergeFrom(base))
	}
	for _, round := range []int{1, 2} {
		for _, listsOn := range []int{2, 1, 0} {
			b, err := json.Marshal(status(0, listsOn))
			g.Expect(err).NotTo(HaveOccurred())
			split := measure.CPUSplit(0)
			start := time.Now()
			measure.Parallel(t, writers, hosts, func(h int) error { return set(h, netv1.NICStatus{}, status(h, listsOn)) })
			elapsed := time.Since(start)
			used := split()
			fmt.Printf("round %d, the bond's list on %d of its 2 cards: %d writes in %.2fs, status %d bytes; per write: kube-apiserver %.2fms, etcd %.2fms CPU (load average %s)\n",
				round, listsOn, hosts, elapsed.Seconds(), len(b), 1000*used["kube-apiserver"].Seconds()/float64(hosts), 1000*used["etcd"].Seconds()/float64(hosts), measure.LoadAverage())
			measure.Parallel(t, writers, hosts, func(h int) error { return set(h, status(h, listsOn), netv1.NICStatus{}) })
		}
	}
}
