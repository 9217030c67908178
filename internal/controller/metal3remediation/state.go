package metal3remediation

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// state is what one reconcile knows: the remediation, its Machine and Cluster, and the host the
// Machine's Metal3Machine runs on (nil with hostProblem saying why).
type state struct {
	rem         *infrav1.Metal3Remediation
	machine     *clusterv1.Machine
	cluster     *clusterv1.Cluster
	host        *bmov1.BareMetalHost
	hostProblem string
}

// gather reads the Metal3Machine and its host. A missing one is not an error: the remediation
// says so and waits (a host being re-registered, a Metal3Machine restored by clusterctl move).
func (r *Reconciler) gather(ctx context.Context, rem *infrav1.Metal3Remediation, machine *clusterv1.Machine, cluster *clusterv1.Cluster) (*state, error) {
	s := &state{rem: rem, machine: machine, cluster: cluster}
	ref := machine.Spec.InfrastructureRef
	if ref.Kind != "Metal3Machine" || ref.Name == "" {
		s.hostProblem = fmt.Sprintf("Machine %s has no Metal3Machine (spec.infrastructureRef is %s %q); only Metal3Machines can be remediated by rebooting their host", machine.Name, ref.Kind, ref.Name)
		return s, nil
	}
	m3m := &infrav1.Metal3Machine{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: machine.Namespace, Name: ref.Name}, m3m); err != nil {
		if apierrors.IsNotFound(err) {
			s.hostProblem = fmt.Sprintf("Metal3Machine %s of Machine %s does not exist", ref.Name, machine.Name)
			return s, nil
		}
		return nil, err
	}
	ns, name, set, err := infrav1.ParseHostAnnotation(m3m.Annotations[infrav1.HostAnnotation], m3m.Namespace)
	switch {
	case err != nil:
		s.hostProblem = fmt.Sprintf("Metal3Machine %s: %v", m3m.Name, err)
		return s, nil
	case !set:
		s.hostProblem = fmt.Sprintf("Metal3Machine %s has no host yet (annotation %s)", m3m.Name, infrav1.HostAnnotation)
		return s, nil
	}
	host := &bmov1.BareMetalHost{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, host); err != nil {
		if apierrors.IsNotFound(err) {
			s.hostProblem = fmt.Sprintf("BareMetalHost %s/%s of Metal3Machine %s does not exist", ns, name, m3m.Name)
			return s, nil
		}
		return nil, err
	}
	s.host = host
	return s, nil
}
