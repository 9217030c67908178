package metal3dataclaim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/dataindex"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
)

// Rendered is what the data-templating chain produced for one Metal3Machine.
type Rendered struct {
	// Metal3Data names the Metal3Data, for the machine's status.renderedData.
	Metal3Data *corev1.ObjectReference
	// MetaData and NetworkData name the Secrets; nil when the template has no such part.
	MetaData    *corev1.SecretReference
	NetworkData *corev1.SecretReference
	// HostSwitch is the Metal3Data's HostSwitchMismatch condition, nil when it has none.
	HostSwitch *metav1.Condition
}

// Claimer is the machine controller's side of the chain: it makes a Metal3Machine's claim and
// reads the rendered Secrets from the claim's Metal3Data. It reads through Client (the manager's
// cache, with dataindex's indexes).
type Claimer struct {
	Client client.Client
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3dataclaims,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datas,verbs=get;list;watch

// Claim makes sure the Metal3Machine's Metal3DataClaim exists — named after the machine, owned
// by it, for spec.dataTemplate — and returns the rendered data once the claim's Metal3Data is
// ready, nil while it is not.
func (c *Claimer) Claim(ctx context.Context, m3m *infrav1.Metal3Machine) (*Rendered, error) {
	if m3m.Spec.DataTemplate == nil || m3m.Spec.DataTemplate.Name == "" {
		return nil, fmt.Errorf("Metal3Machine %s has no spec.dataTemplate to claim from", m3m.Name)
	}
	claim := &infrav1.Metal3DataClaim{}
	err := c.Client.Get(ctx, client.ObjectKey{Namespace: m3m.Namespace, Name: m3m.Name}, claim)
	if apierrors.IsNotFound(err) {
		if err := c.Client.Create(ctx, newClaim(m3m)); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating Metal3DataClaim %s: %w", m3m.Name, err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if owner := metav1.GetControllerOf(claim); owner != nil && owner.UID != m3m.UID {
		// The claim of an earlier machine of the same name, on its way out: wait for it.
		return nil, nil
	}
	// The Metal3Data itself says when it is rendered: the claim's status, which repeats it for
	// people and CAPM3's tools, is not waited for.
	list := &infrav1.Metal3DataList{}
	if err := c.Client.List(ctx, list, client.InNamespace(claim.Namespace), client.MatchingFields{dataindex.DataByClaim: claim.Name}); err != nil {
		return nil, fmt.Errorf("listing the Metal3Data of Metal3DataClaim %s: %w", claim.Name, err)
	}
	var data *infrav1.Metal3Data
	for i := range list.Items {
		if d := &list.Items[i]; Ours(claim, d) && d.Status.Ready && d.DeletionTimestamp.IsZero() {
			data = d
		}
	}
	if data == nil {
		return nil, nil
	}
	return &Rendered{
		Metal3Data: &corev1.ObjectReference{
			APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Data", Name: data.Name, Namespace: data.Namespace, UID: data.UID,
		},
		MetaData:    data.Spec.MetaData,
		NetworkData: data.Spec.NetworkData,
		HostSwitch:  meta.FindStatusCondition(data.Status.Conditions, infrav1.DataHostSwitchMismatchCondition),
	}, nil
}

// Release deletes the Metal3Machine's claim and reports whether it is gone (its Metal3Data,
// address claims and Secrets with it).
func (c *Claimer) Release(ctx context.Context, m3m *infrav1.Metal3Machine) (bool, error) {
	claim := &infrav1.Metal3DataClaim{}
	err := c.Client.Get(ctx, client.ObjectKey{Namespace: m3m.Namespace, Name: m3m.Name}, claim)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if claim.DeletionTimestamp.IsZero() {
		if err := c.Client.Delete(ctx, claim); err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("deleting Metal3DataClaim %s: %w", claim.Name, err)
		}
	}
	return false, nil
}

// newClaim is the claim of a Metal3Machine, as CAPM3 makes it.
func newClaim(m3m *infrav1.Metal3Machine) *infrav1.Metal3DataClaim {
	yes := true
	c := &infrav1.Metal3DataClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: m3m.Namespace, Name: m3m.Name,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Machine", Name: m3m.Name, UID: m3m.UID,
				Controller: &yes, BlockOwnerDeletion: &yes,
			}},
		},
		Spec: infrav1.Metal3DataClaimSpec{Template: corev1.ObjectReference{Name: m3m.Spec.DataTemplate.Name, Namespace: m3m.Namespace}},
	}
	if cluster := m3m.Labels[clusterv1.ClusterNameLabel]; cluster != "" {
		c.Labels = map[string]string{clusterv1.ClusterNameLabel: cluster}
	}
	// The machine's manager (--watch-filter) serves the claim and what it leads to.
	c.Labels = watchfilter.Carry(c.Labels, m3m)
	return c
}
