package metal3machine

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// metal3MachineKind is the kind written to a host's consumerRef.
const metal3MachineKind = "Metal3Machine"

// FailureDomainLabel on a BareMetalHost names the failure domain (rack, row, site) it is in, as
// upstream Metal3 spells it. Machines placed in a failure domain prefer hosts labelled with it.
const FailureDomainLabel = "infrastructure.cluster.x-k8s.io/failure-domain"

// consumedBy says whether the host's consumerRef names the machine.
func consumedBy(host *bmov1.BareMetalHost, m3m *infrav1.Metal3Machine) bool {
	ref := host.Spec.ConsumerRef
	return ref != nil && ref.Kind == metal3MachineKind && ref.Name == m3m.Name &&
		(ref.Namespace == "" || ref.Namespace == m3m.Namespace)
}

// hostError returns the host's error as BMO reports it, or "" when it is healthy.
func hostError(host *bmov1.BareMetalHost) string {
	if host.Status.ErrorMessage != "" {
		return host.Status.ErrorMessage
	}
	if host.Status.OperationalStatus == bmov1.OperationalStatusError {
		return "operationalStatus is error (" + host.Status.ErrorType + ")"
	}
	return ""
}

// Annotations that mark a host unhealthy, as upstream CAPM3 spells them: set by a person, or by
// remediation when its retries ran out. No machine is given such a host until it is removed.
const (
	UnhealthyAnnotation = "capm3.metal3.io/unhealthy"
	// UnhealthyAnnotationDeprecated is upstream's older spelling, still honoured.
	UnhealthyAnnotationDeprecated = "capi.metal3.io/unhealthy"
)

// unhealthyAnnotationOn returns the unhealthy annotation the host carries, or "".
func unhealthyAnnotationOn(host *bmov1.BareMetalHost) string {
	for _, a := range []string{UnhealthyAnnotation, UnhealthyAnnotationDeprecated} {
		if hasAnnotation(host, a) {
			return a
		}
	}
	return ""
}

// unclaimableBecause says why a free-looking host cannot be claimed now, or "" if it can.
func unclaimableBecause(host *bmov1.BareMetalHost) string {
	switch {
	case host.Spec.ConsumerRef != nil:
		return fmt.Sprintf("is claimed by %s %s", host.Spec.ConsumerRef.Kind, host.Spec.ConsumerRef.Name)
	case !host.DeletionTimestamp.IsZero():
		return "is being deleted"
	case unhealthyAnnotationOn(host) != "":
		return "is marked unhealthy (annotation " + unhealthyAnnotationOn(host) + ")"
	case hasAnnotation(host, bmov1.PausedAnnotation):
		return "is paused (annotation " + bmov1.PausedAnnotation + ")"
	case hasAnnotation(host, bmov1.DetachedAnnotation) || host.Status.OperationalStatus == bmov1.OperationalStatusDetached:
		return "is detached"
	case hostError(host) != "":
		return "is in error: " + hostError(host)
	case host.Status.Provisioning.State != bmov1.StateAvailable && host.Status.Provisioning.State != bmov1.StateReady:
		return fmt.Sprintf("is in state %q, not available", host.Status.Provisioning.State)
	}
	return ""
}

func hasAnnotation(host *bmov1.BareMetalHost, key string) bool {
	_, ok := host.Annotations[key]
	return ok
}

// chooseHost picks the host a machine should claim.
//
// A host whose consumerRef already names the machine wins: the machine claimed it before a crash
// or before its own annotation reached the cache. Otherwise the claimable hosts matching the
// selector are ordered by a hash of machine and host name, not by name alone: the order is
// deterministic for each machine, yet machines created together start at different hosts and
// rarely collide on the same claim. Hosts in the machine's failure domain (FailureDomainLabel)
// come first; with none of them free, any matching host will do, as upstream. skip holds hosts
// this reconcile already lost a race for.
//
// When no host fits, the message says why, naming the selector and the first hosts that match it
// but cannot be claimed, so the user knows whether to add hosts, relabel them, or fix the selector.
func chooseHost(m3m *infrav1.Metal3Machine, failureDomain string, hosts []bmov1.BareMetalHost, sel labels.Selector, skip sets.Set[string]) (*bmov1.BareMetalHost, string) {
	for i := range hosts {
		if consumedBy(&hosts[i], m3m) {
			return &hosts[i], ""
		}
	}
	if order := preferred(m3m, failureDomain, hosts, sel, skip); len(order) > 0 {
		return order[0], ""
	}
	matching := make([]*bmov1.BareMetalHost, 0, len(hosts))
	for i := range hosts {
		if sel.Matches(labels.Set(hosts[i].Labels)) {
			matching = append(matching, &hosts[i])
		}
	}
	return nil, noHostMessage(m3m.Namespace, sel, matching, skip)
}

// preferred returns the hosts the machine may claim, most preferred first: those matching the
// selector that are claimable and not in skip, the machine's failure domain first, then by the
// machine's own hash order.
func preferred(m3m *infrav1.Metal3Machine, failureDomain string, hosts []bmov1.BareMetalHost, sel labels.Selector, skip sets.Set[string]) []*bmov1.BareMetalHost {
	var claimable []*bmov1.BareMetalHost
	for i := range hosts {
		h := &hosts[i]
		if sel.Matches(labels.Set(h.Labels)) && unclaimableBecause(h) == "" && !skip.Has(h.Name) {
			claimable = append(claimable, h)
		}
	}
	key := m3m.Namespace + "/" + m3m.Name
	type ranked struct {
		host     *bmov1.BareMetalHost
		inDomain bool
		rank     uint64
	}
	rs := make([]ranked, len(claimable))
	for i, h := range claimable {
		rs[i] = ranked{host: h, inDomain: failureDomain != "" && h.Labels[FailureDomainLabel] == failureDomain, rank: rank(key, h.Name)}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if a.inDomain != b.inDomain {
			if a.inDomain {
				return -1
			}
			return 1
		}
		if c := compareUint(a.rank, b.rank); c != 0 {
			return c
		}
		return strings.Compare(a.host.Name, b.host.Name)
	})
	for i := range rs {
		claimable[i] = rs[i].host
	}
	return claimable
}

func noHostMessage(namespace string, sel labels.Selector, matching []*bmov1.BareMetalHost, skip sets.Set[string]) string {
	what := "hostSelector " + sel.String()
	if sel.Empty() {
		what = "an empty hostSelector"
	}
	if len(matching) == 0 {
		if sel.Empty() {
			return fmt.Sprintf("no BareMetalHost in namespace %s; create one, or wait for it to be registered", namespace)
		}
		return fmt.Sprintf("no host matches selector %s in namespace %s; label hosts to match or change spec.hostSelector", sel.String(), namespace)
	}
	slices.SortFunc(matching, func(a, b *bmov1.BareMetalHost) int { return strings.Compare(a.Name, b.Name) })
	// Unhealthy hosts are named together: a person marked them, and a person must clear them.
	var unhealthy []string
	marks := sets.New[string]()
	others := make([]*bmov1.BareMetalHost, 0, len(matching))
	for _, h := range matching {
		if a := unhealthyAnnotationOn(h); a != "" && h.Spec.ConsumerRef == nil && h.DeletionTimestamp.IsZero() {
			unhealthy = append(unhealthy, h.Name)
			marks.Insert(a)
			continue
		}
		others = append(others, h)
	}
	const shown = 3
	reasons := make([]string, 0, shown+1)
	if len(unhealthy) > 0 {
		verb := "are"
		if len(unhealthy) == 1 {
			verb = "is"
		}
		reasons = append(reasons, fmt.Sprintf("%d %s marked unhealthy (annotation %s: %s; remove it once the host is repaired)",
			len(unhealthy), verb, strings.Join(sets.List(marks), ", "), strings.Join(unhealthy[:min(5, len(unhealthy))], ", ")+moreOf(len(unhealthy), 5)))
	}
	for _, h := range others[:min(shown, len(others))] {
		why := unclaimableBecause(h)
		switch {
		case why == "" && skip.Has(h.Name):
			why = "was claimed by another machine at the same time"
		case why == "":
			why = "became free just now"
		}
		reasons = append(reasons, h.Name+" "+why)
	}
	more := ""
	if len(others) > shown {
		more = fmt.Sprintf(", and %d more", len(others)-shown)
	}
	return fmt.Sprintf("none of the %d hosts matching %s can be claimed: %s%s; wait for a host to become available or add hosts",
		len(matching), what, strings.Join(reasons, "; "), more)
}

// moreOf says how many of n were left out of a list cut at shown.
func moreOf(n, shown int) string {
	if n <= shown {
		return ""
	}
	return fmt.Sprintf(" and %d more", n-shown)
}

func rank(machine, host string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(machine))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(host))
	return h.Sum64()
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
