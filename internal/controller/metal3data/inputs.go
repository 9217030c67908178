package metal3data

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/cacheread"
	"github.com/metalwire/metalwire/pkg/render"
)

// inputs are the objects a Metal3Data is rendered from.
type inputs struct {
	template *infrav1.Metal3DataTemplate
	claim    *infrav1.Metal3DataClaim
	m3m      *infrav1.Metal3Machine
	machine  *clusterv1.Machine // nil while the Metal3Machine has no Machine owner
	host     *bmov1.BareMetalHost
	vlans    map[render.VLANRef]int32             // the VLAN ids of the ClusterNetwork networks vlanIDFrom names
	bonds    map[render.VLANRef]render.FabricBond // the host's fabric bonds bondFrom names
}

// blocker says why a Metal3Data cannot be rendered yet: a condition reason, a message a person
// can act on, and whether it is an error (shown in status.errorMessage) rather than a wait.
type blocker struct {
	reason  string
	message string
	isError bool
}

func (b *blocker) Error() string { return b.message }

func waitFor(reason, format string, args ...any) *blocker {
	return &blocker{reason: reason, message: fmt.Sprintf(format, args...)}
}

func failWith(reason, format string, args ...any) *blocker {
	return &blocker{reason: reason, message: fmt.Sprintf(format, args...), isError: true}
}

// gather reads the template, the claim, its Metal3Machine, the Machine and the host, from the
// cache. A missing object is a blocker, not an error: a watch brings the Metal3Data back when
// it appears.
func (r *Reconciler) gather(ctx context.Context, data *infrav1.Metal3Data) (*inputs, *blocker, error) {
	ns := data.Namespace
	in := &inputs{template: &infrav1.Metal3DataTemplate{}, claim: &infrav1.Metal3DataClaim{}, m3m: &infrav1.Metal3Machine{}}

	// The template's metadata and spec, copied from the cache's own object: its status (an
	// index per claim it served) is what makes a copy of the whole costly, and is not read here.
	found, err := cacheread.Shared(ctx, r.Client, &infrav1.Metal3DataTemplateList{}, client.ObjectKey{Namespace: ns, Name: data.Spec.Template.Name},
		func(o client.Object) {
			t := o.(*infrav1.Metal3DataTemplate)
			in.template.TypeMeta, in.template.ObjectMeta, in.template.Spec = t.TypeMeta, *t.ObjectMeta.DeepCopy(), *t.Spec.DeepCopy()
		})
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("reading Metal3DataTemplate %s: %w", data.Spec.Template.Name, err)
	case !found:
		return nil, failWith(infrav1.DataTemplateNotFoundReason,
			"spec.template: Metal3DataTemplate %s not found in namespace %s; create it, or delete the Metal3DataClaim %s", data.Spec.Template.Name, ns, data.Spec.Claim.Name), nil
	}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: data.Spec.Claim.Name}, in.claim); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, waitFor(infrav1.DataWaitingForHostReason, "Metal3DataClaim %s not found; this Metal3Data is deleted with it", data.Spec.Claim.Name), nil
		}
		return nil, nil, fmt.Errorf("reading Metal3DataClaim %s: %w", data.Spec.Claim.Name, err)
	}
	m3mName := ownerName(in.claim, infrav1.GroupVersion.Group, metal3MachineKind)
	if m3mName == "" {
		return nil, waitFor(infrav1.DataWaitingForHostReason,
			"Metal3DataClaim %s has no Metal3Machine owner reference yet; the machine controller sets it when it creates the claim", in.claim.Name), nil
	}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: m3mName}, in.m3m); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, waitFor(infrav1.DataWaitingForHostReason, "Metal3Machine %s, owner of Metal3DataClaim %s, not found", m3mName, in.claim.Name), nil
		}
		return nil, nil, fmt.Errorf("reading Metal3Machine %s: %w", m3mName, err)
	}
	if name := ownerName(in.m3m, clusterv1.GroupVersion.Group, machineKind); name != "" {
		in.machine = &clusterv1.Machine{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, in.machine); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, waitFor(infrav1.DataWaitingForHostReason, "Machine %s, owner of Metal3Machine %s, not found", name, m3mName), nil
			}
			return nil, nil, fmt.Errorf("reading Machine %s: %w", name, err)
		}
	}
	hostNS, hostName, ok := hostKey(in.m3m.Annotations[infrav1.HostAnnotation], ns)
	if !ok {
		return nil, waitFor(infrav1.DataWaitingForHostReason,
			"Metal3Machine %s has no BareMetalHost yet (annotation %s); the data is rendered once the machine controller associates one", m3mName, infrav1.HostAnnotation), nil
	}
	in.host = &bmov1.BareMetalHost{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: hostNS, Name: hostName}, in.host); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, failWith(infrav1.DataWaitingForHostReason,
				"BareMetalHost %s/%s, named by Metal3Machine %s (annotation %s), not found; the data is rendered once it exists", hostNS, hostName, m3mName, infrav1.HostAnnotation), nil
		}
		return nil, nil, fmt.Errorf("reading BareMetalHost %s/%s: %w", hostNS, hostName, err)
	}
	vlans, block, err := r.resolveVLANs(ctx, in.template)
	if err != nil || block != nil {
		return nil, block, err
	}
	in.vlans = vlans
	bonds, block, err := r.resolveBonds(ctx, in.template, in.host)
	if err != nil || block != nil {
		return nil, block, err
	}
	in.bonds = bonds
	return in, nil, nil
}

// ownerName is the name of the object's owner of the given group and kind, or "".
func ownerName(o client.Object, group, kind string) string {
	for _, ref := range o.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err == nil && gv.Group == group && ref.Kind == kind {
			return ref.Name
		}
	}
	return ""
}

// facts turns the inputs into what pkg/render reads. Pools are filled in by the caller.
func (in *inputs) facts(data *infrav1.Metal3Data) *render.Facts {
	f := &render.Facts{
		Index:         int(ptr.Deref(data.Spec.Index, 0)),
		Namespace:     data.Namespace,
		Metal3Machine: objectFacts(in.m3m),
	}
	if in.machine != nil {
		f.Machine = objectFacts(in.machine)
	}
	f.HostFacts(in.host)
	f.VLANs = in.vlans
	f.Bonds = in.bonds
	return f
}

func objectFacts(o client.Object) *render.Object {
	return &render.Object{Name: o.GetName(), Namespace: o.GetNamespace(), Labels: o.GetLabels(), Annotations: o.GetAnnotations()}
}

// clusterName is the Cluster the rendered objects belong to, for the cluster-name label: the
// Machine's, else the Metal3Machine's label, else the template's.
func (in *inputs) clusterName() string {
	if in.machine != nil && in.machine.Spec.ClusterName != "" {
		return in.machine.Spec.ClusterName
	}
	if name := in.m3m.Labels[clusterv1.ClusterNameLabel]; name != "" {
		return name
	}
	if name := in.template.Labels[clusterv1.ClusterNameLabel]; name != "" {
		return name
	}
	return in.template.Spec.ClusterName
}
