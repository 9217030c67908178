package networkdevice

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// reportDrift sets the conditions Drifted and DryRun from the switches' statuses of this pass,
// and records an event for each drifted port.
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
			if r.Recorder != nil {
				r.Recorder.Eventf(nd, nil, corev1.EventTypeWarning, netv1.ConditionDrifted, "ReadBack", "%s; %s", line, what)
			}
		}
	}
	switch {
	case len(drifted) == 0:
		r.set(nd, netv1.ConditionDrifted, metav1.ConditionFalse, netv1.ReasonNoDrift, "every configured port read back as it was set")
	case repairedAll:
		r.set(nd, netv1.ConditionDrifted, metav1.ConditionTrue, netv1.ReasonDriftRepaired, strings.Join(drifted, "; "))
	default:
		r.set(nd, netv1.ConditionDrifted, metav1.ConditionTrue, netv1.ReasonDriftReported, strings.Join(drifted, "; "))
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
