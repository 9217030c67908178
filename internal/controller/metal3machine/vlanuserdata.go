package metal3machine

import (
	"bytes"
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/render/l2userdata"
)

// VLANUserDataFailedReason: the machine's Metal3DataTemplate asks for the VLAN user-data
// (l2userdata.TemplateAnnotation) and it cannot be made; the message says why and what to do.
const VLANUserDataFailedReason = "VLANUserDataFailed"

// VLANUserDataSecretName is the Secret of a machine's merged user-data: the bootstrap
// provider's cloud-config with the machine's VLAN sub-interfaces added.
func VLANUserDataSecretName(m3m string) string { return m3m + "-vlan-userdata" }

// vlanUserData returns the user data the host boots with. For a machine whose template asks
// for the VLAN user-data it is a Secret of the machine's own, the bootstrap cloud-config merged
// (pkg/render/l2userdata) with the VLAN sub-interfaces of the rendered network data; for every
// other machine it is the bootstrap data as given. waitingFor says what is missing, or is "".
func (r *Reconciler) vlanUserData(ctx context.Context, m3m *infrav1.Metal3Machine, bootstrap, network *corev1.SecretReference) (_ *corev1.SecretReference, waitingFor string, _ error) {
	if m3m.Spec.DataTemplate == nil {
		return bootstrap, "", nil
	}
	tmpl := &infrav1.Metal3DataTemplate{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: m3m.Namespace, Name: m3m.Spec.DataTemplate.Name}, tmpl)
	if apierrors.IsNotFound(err) || err == nil && tmpl.Annotations[l2userdata.TemplateAnnotation] != "true" {
		return bootstrap, "", nil
	} else if err != nil {
		return nil, "", err
	}
	ref := &corev1.SecretReference{Namespace: m3m.Namespace, Name: VLANUserDataSecretName(m3m.Name)}
	if u := m3m.Status.UserData; u != nil && u.Name == ref.Name {
		// Written and handed to the host already: what it merges (the bootstrap data, the
		// rendered network data) does not change for a machine, so it is not read again.
		return ref, "", nil
	}
	fail := func(format string, args ...any) (*corev1.SecretReference, string, error) {
		msg := fmt.Sprintf("VLAN user-data (Metal3DataTemplate %s has %s): ", tmpl.Name, l2userdata.TemplateAnnotation) + fmt.Sprintf(format, args...)
		setCondition(m3m, infrav1.Metal3MachineDataReadyCondition, metav1.ConditionFalse, VLANUserDataFailedReason, msg)
		return nil, msg, nil
	}
	if network == nil {
		return fail("the template renders no networkData, so there are no VLANs to configure; give it networkData with VLAN links, or remove the annotation")
	}
	boot, err := r.secretValue(ctx, bootstrap, "value", "userData")
	if err != nil {
		return fail("the bootstrap data: %v", err)
	}
	nd, err := r.secretValue(ctx, network, "networkData")
	if err != nil {
		return fail("the rendered network data: %v", err)
	}
	cfg, err := l2userdata.FromNetworkData(nd)
	if err != nil {
		return fail("Secret %s: %v", network.Name, err)
	}
	merged, err := l2userdata.UserData(boot, cfg)
	if err != nil {
		return fail("Secret %s: %v; the VLAN user-data is merged only into a cloud-config", bootstrap.Name, err)
	}
	return ref, "", r.writeUserData(ctx, m3m, ref, merged)
}

// secretValue is the first of keys present in the Secret ref names.
func (r *Reconciler) secretValue(ctx context.Context, ref *corev1.SecretReference, keys ...string) ([]byte, error) {
	s := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
		return nil, fmt.Errorf("reading Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	for _, k := range keys {
		if v, ok := s.Data[k]; ok {
			return v, nil
		}
	}
	return nil, fmt.Errorf("the Secret %s/%s has none of the keys %v", ref.Namespace, ref.Name, keys)
}

// writeUserData creates or updates the machine's user-data Secret; it is owned by the machine,
// so it goes with it. Unchanged content is not written again.
func (r *Reconciler) writeUserData(ctx context.Context, m3m *infrav1.Metal3Machine, ref *corev1.SecretReference, value []byte) error {
	want := map[string][]byte{"value": value, "format": []byte("cloud-config")}
	s := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s)
	switch {
	case apierrors.IsNotFound(err):
		s = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Machine", Name: m3m.Name, UID: m3m.UID, Controller: ptr.To(true),
			}}},
			Type: "cluster.x-k8s.io/secret",
			Data: want,
		}
		return r.Client.Create(ctx, s)
	case err != nil:
		return err
	case bytes.Equal(s.Data["value"], value):
		return nil
	}
	s.Data = want
	return r.Client.Update(ctx, s)
}
