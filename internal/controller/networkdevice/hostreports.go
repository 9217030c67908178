package networkdevice

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// DefaultHostReportInterval is how often the hosts behind configured ports are asked again while
// one has not reported its network configured.
const DefaultHostReportInterval = 15 * time.Second

// hostReports are, per switch, the ports whose host reported success: those are not asked
// again (the hosts are followed until they succeed). Failures are asked again, so a host
// fixed by hand and reporting success clears the condition.
type hostReports struct {
	mu sync.Mutex
	ok map[string]map[string]fabric.HostReport // switch key -> port -> report
}

// switchReports is what one pass learnt of the hosts behind a switch's ports; nil when the
// switch's driver hears nothing from hosts.
type switchReports struct {
	sw      string
	reports map[string]fabric.HostReport // port -> report; a port absent said nothing yet
	ports   []string
	err     error
}

// readHostReports asks a session that hears from hosts about the hosts behind the wanted ports
// that have not yet reported success.
func (r *Reconciler) readHostReports(ctx context.Context, key string, sess fabric.Session, want fabric.State) *switchReports {
	hr, ok := sess.(fabric.HostReporter)
	if !ok {
		return nil
	}
	out := &switchReports{reports: map[string]fabric.HostReport{}}
	for p := range want.Ports {
		out.ports = append(out.ports, p)
	}
	slices.Sort(out.ports)
	r.reports.mu.Lock()
	if r.reports.ok == nil {
		r.reports.ok = map[string]map[string]fabric.HostReport{}
	}
	done := r.reports.ok[key]
	var ask []string
	kept := map[string]fabric.HostReport{}
	for _, p := range out.ports {
		if rep, ok := done[p]; ok {
			out.reports[p], kept[p] = rep, rep
		} else {
			ask = append(ask, p)
		}
	}
	r.reports.ok[key] = kept // ports no longer wanted are forgotten
	r.reports.mu.Unlock()
	if len(ask) == 0 {
		return out
	}
	got, err := hr.HostReports(ctx, ask)
	if err != nil {
		out.err = err
		return out
	}
	r.reports.mu.Lock()
	for p, rep := range got {
		out.reports[p] = rep
		if rep.Final && !rep.Failed {
			r.reports.ok[key][p] = rep
		}
	}
	r.reports.mu.Unlock()
	return out
}

// setHostsCondition writes HostsNetworkConfigured from the switches that hear from hosts, and
// says when to look again (0: no need).
func (r *Reconciler) setHostsCondition(ctx context.Context, nd *netv1.NetworkDevice, all []*switchReports) time.Duration {
	var failed, waiting, configured, errs []string
	reporting := false
	for _, s := range all {
		if s == nil {
			continue
		}
		if s.err != nil {
			errs = append(errs, fmt.Sprintf("switch %s: %v", s.sw, s.err))
			continue
		}
		reporting = true
		seen := map[string]bool{}
		for _, p := range s.ports {
			rep, ok := s.reports[p]
			host := rep.Host
			if !ok {
				host = p
			}
			if seen[host] {
				continue
			}
			seen[host] = true
			switch {
			case !ok:
				waiting = append(waiting, fmt.Sprintf("host behind port %s (switch %s): no report yet", p, s.sw))
			case rep.Final && rep.Failed:
				failed = append(failed, fmt.Sprintf("host %s (switch %s): %s", host, s.sw, rep.Message))
			case rep.Final:
				configured = append(configured, fmt.Sprintf("host %s: %s", host, rep.Message))
			default:
				waiting = append(waiting, fmt.Sprintf("host %s (switch %s): %s", host, s.sw, rep.Message))
			}
		}
	}
	held := conditions.Get(nd, netv1.ConditionHostsNetworkConfigured) != nil
	if !reporting && (len(errs) == 0 || !held) {
		conditions.Delete(nd, netv1.ConditionHostsNetworkConfigured)
		return 0
	}
	interval := r.HostReportInterval
	if interval == 0 {
		interval = DefaultHostReportInterval
	}
	switch {
	case len(failed) > 0:
		msg := listed(failed) + "; the host's OS did not configure its VLANs: read /var/log/cloud-init-output.log on the host, fix the cause and run /var/lib/metalwire/network/configure.sh again (its success clears this)"
		if len(waiting) > 0 {
			msg += "; still waiting for: " + listed(waiting)
		}
		r.set(nd, netv1.ConditionHostsNetworkConfigured, metav1.ConditionFalse, netv1.ReasonHostsNetworkFailed, msg)
		return max(interval, r.RetryMax/5)
	case len(errs) > 0:
		// Reachable says why the API failed; this condition keeps what it knew.
		ctrl.LoggerFrom(ctx).Info("host reports not read", "errors", strings.Join(errs, "; "))
		return interval
	case len(waiting) > 0:
		r.set(nd, netv1.ConditionHostsNetworkConfigured, metav1.ConditionFalse, netv1.ReasonHostsNetworkConfiguring, "waiting for "+listed(waiting))
		return interval
	}
	r.set(nd, netv1.ConditionHostsNetworkConfigured, metav1.ConditionTrue, netv1.ReasonHostsNetworkConfigured,
		fmt.Sprintf("all %d host(s) reported their network configured: %s", len(configured), listed(configured)))
	return 0
}
