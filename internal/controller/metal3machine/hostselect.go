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

// unclaimableBecause says why a free-looking host cannot be claimed now, or "" if it can.
func unclaimableBecause(host *bmov1.BareMetalHost) string {
	switch {
	case host.Spec.ConsumerRef != nil:
		return fmt.Sprintf("is claimed by %s %s", host.Spec.ConsumerRef.Kind, host.Spec.ConsumerRef.Name)
	case !host.DeletionTimestamp.IsZero():
		return "is being deleted"
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

	var matching, claimable []*bmov1.BareMetalHost
	for i := range hosts {
		h := &hosts[i]
		if !sel.Matches(labels.Set(h.Labels)) {
			continue
		}
		matching = append(matching, h)
		if unclaimableBecause(h) == "" && !skip.Has(h.Name) {
			claimable = append(claimable, h)
		}
	}
	if len(claimable) > 0 {
		key := m3m.Namespace + "/" + m3m.Name
		inDomain := func(h *bmov1.BareMetalHost) bool {
			return failureDomain != "" && h.Labels[FailureDomainLabel] == failureDomain
		}
		slices.SortFunc(claimable, func(a, b *bmov1.BareMetalHost) int {
			if da, db := inDomain(a), inDomain(b); da != db {
				if da {
					return -1
				}
				return 1
			}
			if c := compareUint(rank(key, a.Name), rank(key, b.Name)); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
		return claimable[0], ""
	}
	return nil, noHostMessage(m3m.Namespace, sel, matching, skip)
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
	const shown = 3
	reasons := make([]string, 0, shown)
	for _, h := range matching[:min(shown, len(matching))] {
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
	if len(matching) > shown {
		more = fmt.Sprintf(", and %d more", len(matching)-shown)
	}
	return fmt.Sprintf("none of the %d hosts matching %s can be claimed: %s%s; wait for a host to become available or add hosts",
		len(matching), what, strings.Join(reasons, "; "), more)
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
