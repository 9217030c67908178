package devenv

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// Progress is how far the applied clusters and pre-provisioned hosts of one namespace are from
// what their manifests ask for. Done is true only when every Machine there should be has its own
// provisioned host and every host asking for pre-provisioning data was inspected with it.
type Progress struct {
	// Machines is how many Machines the manifests ask for: every MachineDeployment's replicas
	// plus every Machine no MachineSet owns (a plain control plane Machine, say).
	Machines int
	// Provisioned counts Machines whose host BMO reports provisioned.
	Provisioned int
	// Preprovisioning counts hosts annotated for pre-provisioning network data.
	Preprovisioning int
	// Preprovisioned counts those past inspection with their Secret in place.
	Preprovisioned int
	// Waiting says, one line per object, what has not happened yet.
	Waiting []string
}

// Done says whether everything asked for has happened.
func (p Progress) Done() bool {
	return p.Machines > 0 && p.Provisioned == p.Machines && p.Preprovisioned == p.Preprovisioning && len(p.Waiting) == 0
}

// Summary is the one-line counter shown while waiting.
func (p Progress) Summary() string {
	s := fmt.Sprintf("%d/%d hosts provisioned", p.Provisioned, p.Machines)
	if p.Preprovisioning > 0 {
		s += fmt.Sprintf(", %d/%d pre-provisioned hosts inspected with their network data", p.Preprovisioned, p.Preprovisioning)
	}
	return s
}

// Observe reads, from the API server, how far namespace ns has come.
func Observe(ctx context.Context, c client.Client, ns string) (Progress, error) {
	var p Progress
	if err := observeMachines(ctx, c, ns, &p); err != nil {
		return p, err
	}
	if err := observePreprovisioning(ctx, c, ns, &p); err != nil {
		return p, err
	}
	return p, nil
}

func observeMachines(ctx context.Context, c client.Client, ns string, p *Progress) error {
	deployments := &clusterv1.MachineDeploymentList{}
	if err := c.List(ctx, deployments, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing MachineDeployments: %w", err)
	}
	machines := &clusterv1.MachineList{}
	if err := c.List(ctx, machines, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing Machines: %w", err)
	}
	existing := map[string]int{} // MachineDeployment name -> its live Machines
	for i := range machines.Items {
		m := &machines.Items[i]
		if !m.DeletionTimestamp.IsZero() {
			p.Waiting = append(p.Waiting, fmt.Sprintf("Machine %s: being deleted", m.Name))
			continue
		}
		if md := m.Labels[clusterv1.MachineDeploymentNameLabel]; md != "" {
			existing[md]++
		} else if !ownedByMachineSet(m) {
			p.Machines++
		}
		reason, err := machineWaitsFor(ctx, c, m)
		if err != nil {
			return err
		}
		if reason == "" {
			p.Provisioned++
		} else {
			p.Waiting = append(p.Waiting, fmt.Sprintf("Machine %s: %s", m.Name, reason))
		}
	}
	for _, md := range deployments.Items {
		want := 1
		if md.Spec.Replicas != nil {
			want = int(*md.Spec.Replicas)
		}
		p.Machines += want
		if have := existing[md.Name]; have != want {
			p.Waiting = append(p.Waiting, fmt.Sprintf("MachineDeployment %s: %d of %d Machines exist", md.Name, have, want))
		}
	}
	return nil
}

func ownedByMachineSet(m *clusterv1.Machine) bool {
	return slices.ContainsFunc(m.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "MachineSet" })
}

// machineWaitsFor says what a Machine's host is still waiting for, or "" when it is provisioned.
func machineWaitsFor(ctx context.Context, c client.Client, m *clusterv1.Machine) (string, error) {
	ref := m.Spec.InfrastructureRef
	if ref.Kind != "Metal3Machine" {
		return fmt.Sprintf("infrastructure is a %s, not a Metal3Machine", ref.Kind), nil
	}
	m3m := &infrav1.Metal3Machine{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}, m3m); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("Metal3Machine %s does not exist yet", ref.Name), nil
		}
		return "", err
	}
	hostKey, ok := hostOf(m3m)
	if !ok {
		return "no host yet: " + firstFalseCondition(m3m.Status.Conditions), nil
	}
	host := &bmov1.BareMetalHost{}
	if err := c.Get(ctx, hostKey, host); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("host %s is gone", hostKey), nil
		}
		return "", err
	}
	if state := host.Status.Provisioning.State; state != bmov1.StateProvisioned {
		return fmt.Sprintf("host %s is %s: %s", host.Name, orNone(string(state)), firstFalseCondition(m3m.Status.Conditions)), nil
	}
	return "", nil
}

// hostOf reads the metal3.io/BareMetalHost annotation ("namespace/name").
func hostOf(m3m *infrav1.Metal3Machine) (client.ObjectKey, bool) {
	ns, name, set, err := infrav1.ParseHostAnnotation(m3m.Annotations[infrav1.HostAnnotation], m3m.Namespace)
	return client.ObjectKey{Namespace: ns, Name: name}, set && err == nil
}

// firstFalseCondition is the message of the first condition that is not True, other than the
// Ready summary, which only repeats it.
func firstFalseCondition(conds []metav1.Condition) string {
	var ready string
	for _, c := range conds {
		if c.Status == metav1.ConditionTrue {
			continue
		}
		msg := c.Type + " " + c.Reason
		if c.Message != "" {
			msg += ": " + c.Message
		}
		if c.Type == "Ready" {
			ready = msg
			continue
		}
		return msg
	}
	if ready != "" {
		return ready
	}
	return "no condition says why yet"
}

func observePreprovisioning(ctx context.Context, c client.Client, ns string, p *Progress) error {
	hosts := &bmov1.BareMetalHostList{}
	if err := c.List(ctx, hosts, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing BareMetalHosts: %w", err)
	}
	for i := range hosts.Items {
		h := &hosts.Items[i]
		if _, ok := h.Annotations[bmov1.PreprovisioningNetworkDataReferenceAnnotation]; !ok {
			continue
		}
		p.Preprovisioning++
		reason, err := preprovisioningWaitsFor(ctx, c, h)
		if err != nil {
			return err
		}
		if reason == "" {
			p.Preprovisioned++
		} else {
			p.Waiting = append(p.Waiting, fmt.Sprintf("host %s: %s", h.Name, reason))
		}
	}
	return nil
}

// preprovisioningWaitsFor says what an annotated host still waits for, or "" when it has its
// Secret and was inspected with it.
func preprovisioningWaitsFor(ctx context.Context, c client.Client, h *bmov1.BareMetalHost) (string, error) {
	name := h.Spec.PreprovisioningNetworkDataName
	if name == "" {
		return "spec.preprovisioningNetworkDataName is not set yet (see the Metal3PreprovisioningDataTemplate's status.errors)", nil
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: h.Namespace, Name: name}, &corev1.Secret{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("Secret %s does not exist", name), nil
		}
		return "", err
	}
	switch h.Status.Provisioning.State {
	case bmov1.StateNone, bmov1.StateRegistering, bmov1.StateInspecting:
		return fmt.Sprintf("has Secret %s, still %s", name, orNone(string(h.Status.Provisioning.State))), nil
	}
	return "", nil
}
