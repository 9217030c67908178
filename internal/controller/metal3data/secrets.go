package metal3data

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/cachepolicy"
	"github.com/metalwire/metalwire/pkg/render"
)

// RenderedHashAnnotation on each rendered Secret holds a digest of what both Secrets were first
// written with. A deleted Secret is re-created only when rendering again gives the same digest as
// the surviving Secret records, so a host never silently gets a configuration different from the
// one it was provisioned with. Metal3Data rendered by earlier versions carry it themselves, and
// it is honoured there too. It lives on the Secrets so that rendering writes the Metal3Data once
// (its status).
const RenderedHashAnnotation = "metal3data.metalwire.io/rendered-sha256"

// output is what a Metal3Data's Secrets hold; a nil field means the template has no such part
// and no Secret is written for it, as CAPM3 does.
type output struct {
	metaData    []byte
	networkData []byte
	// osNetConfig holds the os-net-config keys written beside networkData: the config and
	// mapping files, or the reason the network cannot be written for os-net-config. Derived
	// from networkData alone, the rendered hash does not cover them; rendered from the
	// template's own osNetConfig (osNetConfigTemplated), it does.
	osNetConfig          map[string][]byte
	osNetConfigTemplated bool
}

// renderOutput renders the template's metaData and networkData for one host. With an
// os-net-config template, its files also go into the metaData (render.HostMetaData), where the
// host's bootstrap data reads them; a metaData Secret is then written even when the template
// has no metaData of its own.
func renderOutput(tmpl *infrav1.Metal3DataTemplate, hostFacts *render.Facts) (output, error) {
	var out output
	// With an os-net-config template, its interface aliases name the host's NICs in
	// metaData and networkData too.
	facts, err := render.WithOSNetConfigAliases(tmpl.Spec.OSNetConfig, hostFacts)
	if err != nil {
		return output{}, err
	}
	var onc *render.OSNetConfig
	if t := tmpl.Spec.OSNetConfig; t != nil {
		// The unit's own os-net-config template, as `metalwire generate` renders it: an error
		// in it stops the rendering, since the user asked for exactly this configuration, and
		// the host is not provisioned with bootstrap data that would run a broken one.
		if onc, err = render.OSNetConfigFromTemplate(t, hostFacts); err != nil {
			return output{}, err
		}
	}
	if md := tmpl.Spec.MetaData; md != nil || onc != nil {
		m, err := render.HostMetaData(md, tmpl.Spec.OSNetConfig, onc, facts)
		if err != nil {
			return output{}, err
		}
		if out.metaData, err = render.MarshalMetaData(m); err != nil {
			return output{}, fmt.Errorf("writing metaData as YAML: %w", err)
		}
	}
	if nd := tmpl.Spec.NetworkData; nd != nil {
		n, err := render.Networking(nd, facts)
		if err != nil {
			return output{}, err
		}
		if out.networkData, err = n.YAML(); err != nil {
			return output{}, fmt.Errorf("writing networkData as YAML: %w", err)
		}
		out.osNetConfig = osNetConfigKeys(n, facts)
	}
	if onc != nil {
		out.osNetConfig = map[string][]byte{render.OSNetConfigKey: onc.Config, render.OSNetConfigMappingKey: onc.Mapping}
		out.osNetConfigTemplated = true
	}
	return out, nil
}

// templatePools lists the pools a host of the template claims an address in.
func templatePools(tmpl *infrav1.Metal3DataTemplate, facts *render.Facts) ([]render.PoolRef, error) {
	refs, err := render.Pools(tmpl.Spec.MetaData, tmpl.Spec.NetworkData, facts)
	if err != nil {
		return nil, err
	}
	return render.OSNetConfigPools(tmpl.Spec.OSNetConfig, refs), nil
}

// osNetConfigKeys renders the network for os-net-config. A template os-net-config cannot express
// does not stop the other formats: the Secret then says why under osNetConfigError.
func osNetConfigKeys(n *render.NetworkData, facts *render.Facts) map[string][]byte {
	onc, err := n.OSNetConfig(facts.NICs)
	if err != nil {
		return map[string][]byte{render.OSNetConfigErrorKey: []byte(err.Error())}
	}
	return map[string][]byte{render.OSNetConfigKey: onc.Config, render.OSNetConfigMappingKey: onc.Mapping}
}

// hash is the digest recorded in RenderedHashAnnotation.
func (o output) hash() string {
	h := sha256.New()
	parts := [][]byte{o.metaData, o.networkData}
	if o.osNetConfigTemplated {
		parts = append(parts, o.osNetConfig[render.OSNetConfigKey], o.osNetConfig[render.OSNetConfigMappingKey])
	}
	for _, part := range parts {
		// The length first, so that moving bytes from one part to the other changes the digest.
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// secrets builds the Secrets for the output: type infrastructure.cluster.x-k8s.io/secret, the
// cluster-name label, and the Metal3Data as controlling owner.
func secrets(data *infrav1.Metal3Data, m3m, cluster string, out output) []*corev1.Secret {
	mdName, ndName := infrav1.DataSecretNames(data, m3m)
	var list []*corev1.Secret
	for _, s := range []struct {
		name, key string
		content   []byte
		extra     map[string][]byte
	}{
		{mdName, infrav1.DataSecretMetaDataKey, out.metaData, nil},
		{ndName, infrav1.DataSecretNetworkDataKey, out.networkData, out.osNetConfig},
	} {
		if s.content == nil {
			continue
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name:      s.name,
				Namespace: data.Namespace,
				// BMO's label: its cache holds only Secrets carrying it. Ours: the manager keeps
				// only their metadata (cachepolicy.NewRenderedSecrets).
				Labels: map[string]string{
					infrav1.BMOEnvironmentLabel:     infrav1.BMOEnvironmentLabelValue,
					infrav1.DataSecretRenderedLabel: infrav1.DataSecretRenderedLabelValue,
				},
				Annotations:     map[string]string{RenderedHashAnnotation: out.hash()},
				OwnerReferences: []metav1.OwnerReference{dataOwnerRef(data, true)},
			},
			Type: infrav1.DataSecretType,
			Data: map[string][]byte{s.key: s.content},
		}
		for k, v := range s.extra {
			secret.Data[k] = v
		}
		if cluster != "" {
			secret.Labels[clusterv1.ClusterNameLabel] = cluster
		}
		list = append(list, secret)
	}
	return list
}

// writeSecrets creates the Secrets, both at once. A Secret of that name already there is made
// to match when it belongs to this Metal3Data (a write that failed half-way before) and refused
// otherwise: it is someone else's data.
func (r *Reconciler) writeSecrets(ctx context.Context, data *infrav1.Metal3Data, list []*corev1.Secret) error {
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, want := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.writeSecret(ctx, data, want)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeSecret creates want, or makes the Secret of that name match it. What is in memory is the
// Secret's metadata: when it is ours, carries want's labels and records want's digest, it holds
// what want would write and is left alone, without reading its data. Otherwise the Secret is read
// from the API server (an Update sends the whole object, and no cache holds the data) and
// updated, which also gives a Secret written by an earlier version our label.
func (r *Reconciler) writeSecret(ctx context.Context, data *infrav1.Metal3Data, want *corev1.Secret) error {
	err := r.Client.Create(ctx, want)
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("writing Secret %s: %w", want.Name, err)
	}
	key := client.ObjectKeyFromObject(want)
	digest := want.Annotations[RenderedHashAnnotation]
	if m, err := r.secretMeta(ctx, key); err == nil && ownedBy(m, data) && hasLabels(m, want.Labels) && m.Annotations[RenderedHashAnnotation] == digest {
		return nil
	}
	got := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, key, got); err != nil {
		return fmt.Errorf("reading Secret %s: %w", want.Name, err)
	}
	if !ownedBy(got, data) {
		return fmt.Errorf("Secret %s already exists and does not belong to Metal3Data %s; delete or rename it", want.Name, data.Name) //nolint:staticcheck // the message starts with a kind name
	}
	if got.Type == want.Type && sameData(got.Data, want.Data) && hasLabels(got, want.Labels) && got.Annotations[RenderedHashAnnotation] == digest {
		return nil
	}
	got.Data = want.Data
	if got.Labels == nil {
		got.Labels = map[string]string{}
	}
	for k, v := range want.Labels {
		got.Labels[k] = v
	}
	if got.Annotations == nil {
		got.Annotations = map[string]string{}
	}
	got.Annotations[RenderedHashAnnotation] = digest
	if err := r.Client.Update(ctx, got); err != nil {
		return fmt.Errorf("updating Secret %s: %w", want.Name, err)
	}
	return nil
}

// secretMeta is the metadata of a Metal3Data's Secret as the manager holds it: from the
// rendered-Secret cache, or, for a Secret an earlier version wrote without our label, from the
// manager's Secret cache. NotFound when neither holds it (it may still be in the API server:
// CAPM3's Secrets carry neither label).
func (r *Reconciler) secretMeta(ctx context.Context, key client.ObjectKey) (*metav1.PartialObjectMetadata, error) {
	m := cachepolicy.RenderedSecret()
	err := r.RenderedSecrets.Get(ctx, key, m)
	if !apierrors.IsNotFound(err) {
		return m, err
	}
	legacy := &corev1.Secret{}
	if err := r.Client.Get(ctx, key, legacy); err != nil {
		return nil, err
	}
	m.ObjectMeta = legacy.ObjectMeta
	return m, nil
}

// hasLabels says whether s carries every label of want (a Secret written before metalwire
// labelled its Secrets, or as rendered, lacks them, and is rewritten to get them).
func hasLabels(s metav1.Object, want map[string]string) bool {
	for k, v := range want {
		if s.GetLabels()[k] != v {
			return false
		}
	}
	return true
}

func sameData(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// missingSecrets lists the Secrets a rendered Metal3Data names that do not exist, and the digest
// the surviving ones record ("" when none does). Only their metadata is read. The manager holds
// only Secrets with our or BMO's label (secretMeta); one without (CAPM3 does not label its
// Secrets) is looked for in the API server before it is called missing, and left as it is when
// found (docs/takeover.md).
func (r *Reconciler) missingSecrets(ctx context.Context, data *infrav1.Metal3Data) (missing []string, digest string, err error) {
	for _, ref := range []*corev1.SecretReference{data.Spec.MetaData, data.Spec.NetworkData} {
		if ref == nil || ref.Name == "" {
			continue
		}
		key := client.ObjectKey{Namespace: data.Namespace, Name: ref.Name}
		m, err := r.secretMeta(ctx, key)
		if apierrors.IsNotFound(err) {
			m = cachepolicy.RenderedSecret()
			err = r.APIReader.Get(ctx, key, m)
		}
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, ref.Name)
		case err != nil:
			return nil, "", err
		case digest == "":
			digest = m.Annotations[RenderedHashAnnotation]
		}
	}
	return missing, digest, nil
}
