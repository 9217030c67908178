package preprovisioning

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/poolanswer"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
	"github.com/metalwire/metalwire/pkg/render"
)

// render claims the host's addresses, renders the template and writes the Secret. A host that
// cannot be rendered yet, or at all, gets an outcome saying why; err is for failures worth a
// retry with back-off (API errors).
func (r *HostReconciler) render(ctx context.Context, host *bmov1.BareMetalHost, tmpl *infrav1.Metal3PreprovisioningDataTemplate) (*outcome, error) {
	facts := &render.Facts{Namespace: host.Namespace}
	facts.HostFacts(host)
	nd := tmpl.Spec.PreprovisioningNetworkData

	pools, err := render.PreprovisioningPools(nd, facts)
	if err != nil {
		reason, message := renderFailure(host.Name, err)
		return &outcome{Reason: reason, Message: message}, nil
	}
	// Render once without addresses first: a template this host can never satisfy (a NIC name
	// before inspection, a bad link) fails here without taking an address from a pool that
	// may be small. Links are rendered before networks, so only address errors remain.
	if _, err := render.PreprovisioningNetworking(nd, facts); err != nil && !isWaitingForPool(err) {
		reason, message := renderFailure(host.Name, err)
		return &outcome{Reason: reason, Message: message}, nil
	}
	if bad := unsupportedPools(pools); len(bad) > 0 {
		return &outcome{Reason: infrav1.PreprovisioningRenderFailedReason, Message: fmt.Sprintf(
			"pools %s are not ipam.metal3.io IPPools: pre-provisioning claims addresses with IPClaims only; use ipAddressFromIPPool with an IPPool", strings.Join(bad, ", "))}, nil
	}
	answers := make([]poolanswer.Answer, 0, len(pools))
	for _, pool := range pools {
		a, err := r.claimAddress(ctx, host, tmpl, pool)
		if err != nil {
			return nil, err
		}
		answers = append(answers, a)
	}
	if o := addressesOutcome(answers); o != nil {
		// The claims' events bring the host back once IPAM answers.
		return o, nil
	}
	facts.Pools = poolanswer.Addresses(answers)
	out, err := render.PreprovisioningNetworking(nd, facts)
	if err != nil {
		reason, message := renderFailure(host.Name, err)
		return &outcome{Reason: reason, Message: message}, nil
	}
	doc, err := out.YAML()
	if err != nil {
		return nil, fmt.Errorf("writing the network data of host %s as YAML: %w", host.Name, err)
	}

	secret := preprovisioningSecret(host, tmpl, doc)
	if err := r.Client.Create(ctx, secret); err != nil {
		// AlreadyExists too: a Secret the cache has not shown us yet is looked at next time.
		return nil, fmt.Errorf("writing Secret %s: %w", secret.Name, err)
	}
	r.Recorder.Eventf(host, tmpl, corev1.EventTypeNormal, renderedReason, "RenderPreprovisioningNetworkData",
		"wrote Secret %s from Metal3PreprovisioningDataTemplate %s (addresses: %s)", secret.Name, tmpl.Name, strings.Join(renderedAddresses(doc), ", "))
	if isLiveISO(host) {
		r.Recorder.Eventf(host, tmpl, corev1.EventTypeWarning, infrav1.PreprovisioningLiveISOReason, "RenderPreprovisioningNetworkData",
			"the host boots a live-iso image: Ironic cannot inject network data into it, so Secret %s will not configure its network; embed the configuration in the image instead", secret.Name)
	}
	return nil, nil
}

// preprovisioningSecret is the Secret BMO reads for the host: key networkData, labelled for
// BMO's cache, owned by the template (not as controller: the host uses it, the template made
// it).
func preprovisioningSecret(host *bmov1.BareMetalHost, tmpl *infrav1.Metal3PreprovisioningDataTemplate, doc []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      infrav1.PreprovisioningSecretName(host.Name),
			Namespace: host.Namespace,
			Labels: watchfilter.Carry(map[string]string{
				infrav1.BMOEnvironmentLabel: infrav1.BMOEnvironmentLabelValue,
				templateLabel:               tmpl.Name,
				hostLabel:                   host.Name,
			}, tmpl),
			OwnerReferences: []metav1.OwnerReference{templateOwnerRef(tmpl)},
		},
		Type: infrav1.DataSecretType,
		Data: map[string][]byte{infrav1.DataSecretNetworkDataKey: doc},
	}
}
