package metal3machine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/fabricindex"
	"github.com/metalwire/metalwire/internal/controller/mapping"
)

// clusterNetworkOf returns the ClusterNetwork the cluster's Metal3Cluster names in
// spec.clusterNetwork and that name; nil and "" when it names none, nil and the name when it
// names one that does not exist.
func (r *Reconciler) clusterNetworkOf(ctx context.Context, cluster *clusterv1.Cluster) (*netv1.ClusterNetwork, string, error) {
	ref := cluster.Spec.InfrastructureRef
	if ref.Kind != "Metal3Cluster" || ref.Name == "" {
		return nil, "", nil
	}
	m3c := &infrav1.Metal3Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: ref.Name}, m3c); err != nil {
		return nil, "", client.IgnoreNotFound(err)
	}
	name := m3c.Spec.ClusterNetwork
	if name == "" {
		return nil, "", nil
	}
	cn := &netv1.ClusterNetwork{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, cn); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, name, nil
		}
		return nil, name, err
	}
	return cn, name, nil
}

// setSelected labels the host's NIC object selected for the ClusterNetwork cn, or, with cn "",
// removes the label from every NIC object of the host. The host's consumerRef, claimed first
// with an optimistic lock, makes this machine the only writer of the label.
func (r *Reconciler) setSelected(ctx context.Context, host *bmov1.BareMetalHost, cn string) error {
	nics := &netv1.NICList{}
	if err := r.Client.List(ctx, nics, client.InNamespace(host.Namespace), client.MatchingFields{fabricindex.NICByNode: host.Name}); err != nil {
		return fmt.Errorf("listing the NIC objects of host %s: %w", host.Name, err)
	}
	targets := nics.Items
	if cn != "" {
		nic := nicToLabel(nics.Items)
		if nic == nil {
			return fmt.Errorf("host %s has no NIC object (spec.node: %s) in namespace %s, so its switch ports are unknown; create one", host.Name, host.Name, host.Namespace)
		}
		targets = []netv1.NIC{*nic}
	}
	for i := range targets {
		nic := &targets[i]
		if nic.Labels[netv1.SelectedForLabel] == cn {
			continue
		}
		orig := nic.DeepCopy()
		if cn == "" {
			delete(nic.Labels, netv1.SelectedForLabel)
		} else {
			if nic.Labels == nil {
				nic.Labels = map[string]string{}
			}
			nic.Labels[netv1.SelectedForLabel] = cn
		}
		if err := r.Client.Patch(ctx, nic, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("labelling NIC %s of host %s (%s=%q): %w", nic.Name, host.Name, netv1.SelectedForLabel, cn, err)
		}
	}
	return nil
}

// giveBack releases a host whose switch ports failed before it was provisioned: the NIC label
// first (the fabric controller resets the ports), then the claim, and the machine remembers
// not to pick it again.
func (r *Reconciler) giveBack(ctx context.Context, m3m *infrav1.Metal3Machine, host *bmov1.BareMetalHost) error {
	if err := r.setSelected(ctx, host, ""); err != nil {
		return err
	}
	released := host.DeepCopy()
	// Never provisioned: fast track has no ramdisk to keep running, so only disablePowerOff
	// keeps the host on.
	release(released, false)
	if err := r.Client.Patch(ctx, released, client.MergeFromWithOptions(host, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("giving back BareMetalHost %s: %w", host.Name, err)
	}
	m3m.Annotations = withRefused(m3m.Annotations, host.Name)
	delete(m3m.Annotations, infrav1.HostAnnotation)
	m3m.Spec.ProviderID = ""
	return nil
}

// clusterNetworkToMachines wakes the machines of a ClusterNetwork's namespace when its status
// changes (a host became available, a host's ports became ready or failed).
func (r *Reconciler) clusterNetworkToMachines(ctx context.Context, o client.Object) []reconcile.Request {
	return mapping.Listed(ctx, r.Client, &infrav1.Metal3MachineList{}, "the Metal3Machines of ClusterNetwork "+o.GetName()+"'s namespace", nil,
		client.InNamespace(o.GetNamespace()))
}

// reconcilePorts selects the claimed host in cn and reads how far its ports are. It returns
// what the machine waits for ("" when the ports are ready, or the host is past the point where
// waiting matters), or gaveBack when the ports failed before the host was provisioned and the
// host was given back.
func (r *Reconciler) reconcilePorts(ctx context.Context, m3m *infrav1.Metal3Machine, host *bmov1.BareMetalHost, cn *netv1.ClusterNetwork) (string, bool, error) {
	if err := r.setSelected(ctx, host, cn.Name); err != nil {
		setCondition(m3m, SwitchPortsReadyCondition, metav1.ConditionFalse, SwitchPortsErrorReason, err.Error())
		return "", false, err
	}
	verdict, msg := portsState(cn, host.Name)
	started := host.Spec.Image != nil || host.Spec.CustomDeploy != nil
	switch {
	case verdict == portsReady:
		setCondition(m3m, SwitchPortsReadyCondition, metav1.ConditionTrue, SwitchPortsReadyReason, "")
		return "", false, nil
	case verdict == portsFailed && !started:
		if err := r.giveBack(ctx, m3m, host); err != nil {
			return "", false, err
		}
		msg += "; gave the host back and picks another (annotation " + RefusedHostsAnnotation + " lists the hosts not tried again)"
		r.Recorder.Eventf(m3m, host, corev1.EventTypeWarning, SwitchPortsErrorReason, "SelectHost", "%s", msg)
		setCondition(m3m, SwitchPortsReadyCondition, metav1.ConditionFalse, SwitchPortsErrorReason, msg)
		setCondition(m3m, infrav1.AssociateBareMetalHostCondition, metav1.ConditionFalse, SwitchPortsErrorReason, msg)
		return "", true, nil
	case verdict == portsFailed:
		// The host already runs (or is writing) the machine's image: report, do not pull it.
		setCondition(m3m, SwitchPortsReadyCondition, metav1.ConditionFalse, SwitchPortsErrorReason, msg)
		return "", false, nil
	case started:
		setCondition(m3m, SwitchPortsReadyCondition, metav1.ConditionFalse, WaitingForSwitchPortsReason, msg)
		return "", false, nil
	}
	setCondition(m3m, SwitchPortsReadyCondition, metav1.ConditionFalse, WaitingForSwitchPortsReason, msg)
	return msg, false, nil
}
