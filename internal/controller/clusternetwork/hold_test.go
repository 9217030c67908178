package clusternetwork

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// Within a quiet period after a write, hosts' progress waits, but the write that turns Ready
// True (the burst's last host configured) goes out at once: a user waiting on the condition
// sees it as soon as every switch port is set, not up to a quiet period later.
func TestReadyTurningTrueIsNotHeld(t *testing.T) {
	r := &Reconciler{ProgressQuiet: time.Second}
	state := func(ready metav1.ConditionStatus, reason string, states map[string]netv1.HostState) *netv1.ClusterNetwork {
		cn := &netv1.ClusterNetwork{}
		cn.Status.States = map[string]netv1.HostNetworkState{}
		for h, st := range states {
			cn.Status.States[h] = netv1.HostNetworkState{NIC: h, State: st}
		}
		conditions.Set(cn, metav1.Condition{Type: netv1.ConditionReady, Status: ready, Reason: reason, Message: "m"})
		return cn
	}
	configuring := state(metav1.ConditionFalse, netv1.ReasonHostsConfiguring, map[string]netv1.HostState{"a": netv1.HostConfiguring, "b": netv1.HostConfiguring})
	oneReady := state(metav1.ConditionFalse, netv1.ReasonHostsConfiguring, map[string]netv1.HostState{"a": netv1.HostReady, "b": netv1.HostConfiguring})
	allReady := state(metav1.ConditionTrue, netv1.ReasonAllReady, map[string]netv1.HostState{"a": netv1.HostReady, "b": netv1.HostReady})

	if hold := r.holdProgress("ns/cn", configuring, oneReady); hold != 0 {
		t.Fatalf("the first change after a quiet spell was held %s", hold)
	}
	if hold := r.holdProgress("ns/cn", oneReady, configuring); hold <= 0 {
		t.Errorf("a host's progress right after a write was written at once; want it held")
	}
	if hold := r.holdProgress("ns/cn", oneReady, allReady); hold != 0 {
		t.Errorf("Ready turning True right after a write was held %s; want it written at once", hold)
	}
	// Ready going back to False (a new host selected) is progress again, and waits.
	if hold := r.holdProgress("ns/cn", allReady, oneReady); hold <= 0 {
		t.Errorf("Ready turning False right after a write was written at once; want it held")
	}
}
