package networkdevice

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/metrics"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// driftedPorts is a switch's status.switches[].drifted after a read-back found drifted. A port
// drifted the same way as at the last pass keeps when it was first seen, and is neither counted
// nor announced again: the status, the metric and the events change only when the drift does.
func (r *Reconciler) driftedPorts(nd *netv1.NetworkDevice, sw string, prev []netv1.DriftedPort, drifted []fabric.DriftedPort, repaired bool) []netv1.DriftedPort {
	before := map[string]netv1.DriftedPort{}
	for _, d := range prev {
		before[d.Port] = d
	}
	out := make([]netv1.DriftedPort, 0, len(drifted))
	for _, d := range drifted {
		found := "not on the switch"
		if d.Found != nil {
			found = d.Found.Describe()
		}
		entry := netv1.DriftedPort{Port: d.Set.Name, Set: d.Set.Describe(), Found: found, SeenAt: metav1.Now(), Repaired: repaired}
		if was, ok := before[entry.Port]; ok && was.Set == entry.Set && was.Found == entry.Found && !was.Repaired {
			entry.SeenAt = was.SeenAt // the same drift, still there
		} else {
			metrics.FabricDrift.WithLabelValues(nd.Namespace, nd.Name, sw).Inc()
			if r.Recorder != nil {
				what := "put back as set"
				if !repaired {
					what = "left as found"
				}
				r.Recorder.Eventf(nd, nil, corev1.EventTypeWarning, netv1.ConditionDrifted, "ReadBack", "switch %s port %s: set %s, found %s; %s",
					sw, entry.Port, entry.Set, entry.Found, what)
			}
		}
		out = append(out, entry)
	}
	return out
}

// reportDrift sets the conditions Drifted and DryRun from the switches' statuses of this pass.
func (r *Reconciler) reportDrift(nd *netv1.NetworkDevice, dryRun bool) {
	var drifted []string
	repairedAll := true
	for _, st := range nd.Status.Switches {
		for _, d := range st.Drifted {
			line := fmt.Sprintf("switch %s port %s: set %s, found %s (seen %s)", st.Name, d.Port, d.Set, d.Found, d.SeenAt.UTC().Format("2006-01-02T15:04:05Z"))
			what := "put back as set"
			if !d.Repaired {
				repairedAll = false
				what = "left as found (driftPolicy report)"
				if dryRun {
					what = "left as found (dry run)"
				}
			}
			drifted = append(drifted, line+"; "+what)
		}
	}
	switch {
	case len(drifted) == 0:
		r.set(nd, netv1.ConditionDrifted, metav1.ConditionFalse, netv1.ReasonNoDrift, "every configured port read back as it was set")
	case repairedAll:
		r.set(nd, netv1.ConditionDrifted, metav1.ConditionTrue, netv1.ReasonDriftRepaired, listed(drifted))
	default:
		r.set(nd, netv1.ConditionDrifted, metav1.ConditionTrue, netv1.ReasonDriftReported, listed(drifted))
	}

	if !dryRun {
		if conditions.Get(nd, netv1.ConditionDryRun) != nil { // only a device that was in dry run says it is no more
			r.set(nd, netv1.ConditionDryRun, metav1.ConditionFalse, netv1.ReasonChangesSent, "dry run ended: changes are sent to the switches")
		}
		return
	}
	planned, switches := 0, 0
	for _, st := range nd.Status.Switches {
		if len(st.PlannedChanges) > 0 {
			planned += len(st.PlannedChanges)
			switches++
		}
	}
	r.set(nd, netv1.ConditionDryRun, metav1.ConditionTrue, netv1.ReasonChangesPlanned,
		fmt.Sprintf("%d change(s) planned on %d switch(es), nothing sent (status.switches[].plannedChanges); remove the annotation %s to send them", planned, switches, netv1.DryRunAnnotation))
}
