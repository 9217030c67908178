package metal3machine

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// The switch-port side of a machine whose Metal3Cluster names a ClusterNetwork (see
// docs/fabric.md). Decisions are here, pure; fabricsync.go reads and writes the objects.

// SwitchPortsReadyCondition says whether the switch ports of the machine's host carry the
// cluster's networks. Only machines of a cluster with spec.clusterNetwork have it.
const SwitchPortsReadyCondition = "SwitchPortsReady"

// Reasons of SwitchPortsReadyCondition (and of AssociateBareMetalHost and
// BareMetalHostProvisioned, and so of Ready, while they apply).
const (
	// WaitingForSwitchPortsReason: the host is claimed and selected; its ports are being
	// configured. The host is not provisioned until they are ready.
	WaitingForSwitchPortsReason = "WaitingForSwitchPorts"
	// SwitchPortsReadyReason: every port of the host carries its network.
	SwitchPortsReadyReason = "SwitchPortsReady"
	// SwitchPortsErrorReason: the ports of a host could not be configured; the machine gave the
	// host back and picks another.
	SwitchPortsErrorReason = "SwitchPortsError"
	// ClusterNetworkNotFoundReason: the Metal3Cluster names a ClusterNetwork that does not exist.
	ClusterNetworkNotFoundReason = "ClusterNetworkNotFound"
	// NoNetworkHostReason: no host both matches the hostSelector and is available in the
	// ClusterNetwork.
	NoNetworkHostReason = "NoHostAvailableInClusterNetwork"
)

// RefusedHostsAnnotation on a Metal3Machine lists, comma-separated, the hosts whose switch ports
// failed for it; the machine does not pick them again. Remove a name to let it try that host
// again.
const RefusedHostsAnnotation = "network.metalwire.io/refused-hosts"

// refusedHosts reads RefusedHostsAnnotation.
func refusedHosts(annotations map[string]string) sets.Set[string] {
	out := sets.New[string]()
	for _, h := range strings.Split(annotations[RefusedHostsAnnotation], ",") {
		if h = strings.TrimSpace(h); h != "" {
			out.Insert(h)
		}
	}
	return out
}

// withRefused returns annotations with host added to RefusedHostsAnnotation, sorted.
func withRefused(annotations map[string]string, host string) map[string]string {
	if annotations == nil {
		annotations = map[string]string{}
	}
	refused := refusedHosts(annotations).Insert(host)
	annotations[RefusedHostsAnnotation] = strings.Join(sets.List(refused), ",")
	return annotations
}

// networkHosts are the hosts a machine may claim in cn: its available ones, less those refused.
func networkHosts(cn *netv1.ClusterNetwork, refused sets.Set[string]) sets.Set[string] {
	out := sets.New[string]()
	for h := range cn.Status.Available {
		if !refused.Has(h) {
			out.Insert(h)
		}
	}
	return out
}

// noNetworkHostMessage says why no host of cn could be claimed: why is the selector's own
// explanation over the hosts it was allowed.
func noNetworkHostMessage(cn *netv1.ClusterNetwork, refused sets.Set[string], why string) string {
	avail := sets.List(sets.KeySet(cn.Status.Available))
	msg := fmt.Sprintf("no host is both available in ClusterNetwork %s and claimable", cn.Name)
	if len(avail) == 0 {
		msg = fmt.Sprintf("ClusterNetwork %s has no available host (status.available is empty: every host with fitting cards is selected, or no NIC object fits its nicHints)", cn.Name)
	} else {
		msg += fmt.Sprintf(" (available: %s)", strings.Join(avail[:min(5, len(avail))], ", "))
	}
	if refused.Len() > 0 {
		msg += fmt.Sprintf("; refused after a switch-port error: %s (annotation %s)", strings.Join(sets.List(refused), ", "), RefusedHostsAnnotation)
	}
	if why != "" {
		msg += "; " + why
	}
	return msg + "; add NIC objects for more hosts or wait for one to be given back"
}

// portVerdict is what a machine does about its host's switch ports.
type portVerdict int

const (
	portsWait portVerdict = iota
	portsReady
	portsFailed
)

// portsState reads cn's state of host: ready, wait (with what is awaited) or failed (with why).
func portsState(cn *netv1.ClusterNetwork, host string) (portVerdict, string) {
	st, ok := cn.Status.States[host]
	switch {
	case !ok:
		return portsWait, fmt.Sprintf("waiting for ClusterNetwork %s to see host %s selected", cn.Name, host)
	case st.State == netv1.HostReady:
		return portsReady, ""
	case st.State == netv1.HostError:
		msg := fmt.Sprintf("the switch ports of host %s failed in ClusterNetwork %s", host, cn.Name)
		if st.Message != "" {
			msg += ": " + st.Message
		}
		return portsFailed, msg
	}
	msg := fmt.Sprintf("waiting for the switch ports of host %s in ClusterNetwork %s (state: %s)", host, cn.Name, st.State)
	if st.Message != "" {
		msg += ": " + st.Message
	}
	return portsWait, msg
}

// nicToLabel picks the NIC object of a host among those listed for it: one is expected; with
// several, the one already labelled, else the first by name, so every reconcile picks the same.
func nicToLabel(nics []netv1.NIC) *netv1.NIC {
	if len(nics) == 0 {
		return nil
	}
	slices.SortFunc(nics, func(a, b netv1.NIC) int { return strings.Compare(a.Name, b.Name) })
	for i := range nics {
		if nics[i].Labels[netv1.SelectedForLabel] != "" {
			return &nics[i]
		}
	}
	return &nics[0]
}
