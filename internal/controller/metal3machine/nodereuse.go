package metal3machine

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// Node reuse (Metal3MachineTemplate spec.nodeReuse), as upstream CAPM3 does it: a machine of a
// KubeadmControlPlane or MachineDeployment whose template asks for reuse does not set its host
// free when it goes. The host, once deprovisioned, stays reserved for the cluster (consumerRef
// the Cluster) and is labelled NodeReuseLabel=<owner>; the next machine of the same owner takes
// it before any other host, and the claim removes the label. See docs/node-reuse.md.

// NodeReuseLabel on a BareMetalHost names the owner a released host is kept for:
// "cp-<control plane name>" or "md-<MachineDeployment name>", upstream's values.
const NodeReuseLabel = "infrastructure.cluster.x-k8s.io/node-reuse"

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machinetemplates,verbs=get;list;watch

// reuseOwner is the NodeReuseLabel value for a machine's hosts: its control plane's or its
// MachineDeployment's name, with upstream's prefix; "" for a machine of neither.
func reuseOwner(machineLabels map[string]string) string {
	if _, cp := machineLabels[clusterv1.MachineControlPlaneLabel]; cp {
		if name := machineLabels[clusterv1.MachineControlPlaneNameLabel]; name != "" {
			return "cp-" + name
		}
		return ""
	}
	if name := machineLabels[clusterv1.MachineDeploymentNameLabel]; name != "" {
		return "md-" + name
	}
	return ""
}

// machineReuseOwner reads reuseOwner from the Machine's labels, or the Metal3Machine's (Cluster
// API copies them) when the Machine is gone.
func machineReuseOwner(m3m *infrav1.Metal3Machine, machine *clusterv1.Machine) string {
	if machine != nil {
		if owner := reuseOwner(machine.Labels); owner != "" {
			return owner
		}
	}
	return reuseOwner(m3m.Labels)
}

// keepForReuse turns the release of host into a reservation when the machine's template asks
// for node reuse: the host keeps a consumerRef (the Cluster) and gets NodeReuseLabel. Nothing is
// kept while the Cluster is being deleted, or when the template is gone or the machine belongs
// to neither a control plane nor a MachineDeployment. host has been released in memory already.
func (r *Reconciler) keepForReuse(ctx context.Context, m3m *infrav1.Metal3Machine, host *bmov1.BareMetalHost) error {
	clusterName := m3m.Labels[clusterv1.ClusterNameLabel]
	template := m3m.Annotations[clusterv1.TemplateClonedFromNameAnnotation]
	if clusterName == "" || template == "" {
		return nil
	}
	tmpl := &infrav1.Metal3MachineTemplate{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: m3m.Namespace, Name: template}, tmpl); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !ptr.Deref(tmpl.Spec.NodeReuse, false) {
		return nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: m3m.Namespace, Name: clusterName}, cluster); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return nil
	}
	machine, err := util.GetOwnerMachine(ctx, r.Client, m3m.ObjectMeta)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading the Machine of Metal3Machine %s for node reuse: %w", m3m.Name, err)
	}
	owner := machineReuseOwner(m3m, machine)
	if owner == "" {
		return nil
	}
	if host.Labels == nil {
		host.Labels = map[string]string{}
	}
	host.Labels[NodeReuseLabel] = owner
	host.Spec.ConsumerRef = &corev1.ObjectReference{
		APIVersion: clusterv1.GroupVersion.String(),
		Kind:       "Cluster",
		Namespace:  cluster.Namespace,
		Name:       cluster.Name,
	}
	return nil
}

// reservedFor says whether host is kept for owner's machines of cluster: labelled for owner,
// and either free or reserved for the cluster.
func reservedFor(host *bmov1.BareMetalHost, owner, cluster string) bool {
	if owner == "" || host.Labels[NodeReuseLabel] != owner {
		return false
	}
	ref := host.Spec.ConsumerRef
	return ref == nil || ref.Kind == "Cluster" && ref.Name == cluster
}

// reuseBlockedBecause says why a host kept for reuse cannot be claimed yet, or "".
func reuseBlockedBecause(host *bmov1.BareMetalHost) string {
	free := *host
	free.Spec.ConsumerRef = nil
	return unclaimableBecause(&free)
}

// reuseHosts lists the hosts matching sel that are kept for the machine's owner. With some of
// them claimable it returns those, most preferred first; with none claimable yet it returns why
// the machine waits for them (upstream does not fall back to other hosts then); with none kept at
// all it returns neither.
func (r *Reconciler) reuseHosts(ctx context.Context, m3m *infrav1.Metal3Machine, machine *clusterv1.Machine, sel labels.Selector, skip sets.Set[string]) ([]*bmov1.BareMetalHost, string, error) {
	owner := machineReuseOwner(m3m, machine)
	if owner == "" {
		return nil, "", nil
	}
	req, err := labels.NewRequirement(NodeReuseLabel, selection.Equals, []string{owner})
	if err != nil {
		return nil, "", nil //nolint:nilerr // an owner name that is no label value cannot have been written
	}
	list := &bmov1.BareMetalHostList{}
	if err := r.Client.List(ctx, list, client.InNamespace(m3m.Namespace), client.MatchingLabelsSelector{Selector: sel.Add(*req)}); err != nil {
		return nil, "", fmt.Errorf("listing the BareMetalHosts kept for node reuse of Metal3Machine %s: %w", m3m.Name, err)
	}
	cluster := m3m.Labels[clusterv1.ClusterNameLabel]
	if machine != nil {
		cluster = machine.Spec.ClusterName
	}
	var ready []*bmov1.BareMetalHost
	var waits []string
	for i := range list.Items {
		h := &list.Items[i]
		if !reservedFor(h, owner, cluster) {
			continue
		}
		if skip.Has(h.Name) {
			continue
		}
		if why := reuseBlockedBecause(h); why != "" {
			waits = append(waits, h.Name+" "+why)
			continue
		}
		ready = append(ready, h)
	}
	if len(ready) > 0 {
		free := make([]bmov1.BareMetalHost, len(ready))
		for i, h := range ready {
			free[i] = *h
			free[i].Spec.ConsumerRef = nil
		}
		order := preferred(m3m, "", free, labels.Everything(), nil)
		out := make([]*bmov1.BareMetalHost, len(order))
		for i, h := range order {
			for _, orig := range ready {
				if orig.Name == h.Name {
					out[i] = orig
				}
			}
		}
		return out, "", nil
	}
	if len(waits) > 0 {
		return nil, fmt.Sprintf("waiting for the host(s) kept for reuse by %s (label %s=%s): %s; a machine of a template with spec.nodeReuse takes its predecessor's host, not another",
			owner, NodeReuseLabel, owner, strings.Join(waits, "; ")), nil
	}
	return nil, "", nil
}
