package preprovisioning

import (
	"errors"
	"fmt"
	"slices"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/poolanswer"
	"github.com/metalwire/metalwire/internal/metrics"
	"github.com/metalwire/metalwire/pkg/render"
)

// Labels on the IPClaims and Secrets this controller makes, so that it finds a host's objects
// with a label selector (from the cache) instead of listing every claim or Secret.
const (
	// templateLabel names the template the object was made for.
	templateLabel = infrav1.PreprovisioningDataTemplateLabel
	// hostLabel names the BareMetalHost the object was made for.
	hostLabel = "infrastructure.cluster.x-k8s.io/preprovisioning-host"
)

// Reasons this package adds to the template's (status.errors[].reason) and the host's events.
const (
	// nameInUseReason: the host already names another Secret in preprovisioningNetworkDataName,
	// or a Secret of our name exists that we did not write.
	nameInUseReason = "PreprovisioningNetworkDataNameInUse"
	// templateNotFoundReason: the template named does not exist (event only: there is no
	// template status to list the host in).
	templateNotFoundReason = "TemplateNotFound"
	// templateDeletingReason: the template is being deleted; the host's data is removed.
	templateDeletingReason = "TemplateDeleting"
	// hostsPendingReason: some hosts have not been reconciled yet.
	hostsPendingReason = "HostsPending"
	// renderedReason, gateReleasedReason, addressReleasedReason, cleanedUpReason: normal events.
	renderedReason        = "PreprovisioningNetworkDataRendered"
	gateReleasedReason    = "PreprovisioningPauseRemoved"
	addressReleasedReason = "PreprovisioningAddressReleased"
	cleanedUpReason       = "PreprovisioningNetworkDataRemoved"
	// stillPausedReason: the host no longer references a template but is still paused with our
	// value, which nothing will remove.
	stillPausedReason = "StillPausedForPreprovisioning"
)

// hostNeedsUs tells whether a host event concerns this controller: the host references a
// template, still names our Secret, or is held with our paused value.
func hostNeedsUs(host *bmov1.BareMetalHost) bool {
	if host == nil {
		return false
	}
	if _, ok := host.Annotations[bmov1.PreprovisioningNetworkDataReferenceAnnotation]; ok {
		return true
	}
	return host.Spec.PreprovisioningNetworkDataName == infrav1.PreprovisioningSecretName(host.Name) ||
		host.Annotations[bmov1.PausedAnnotation] == infrav1.PreprovisioningPausedAnnotationValue
}

// pastPreprovisioning tells whether a host has finished inspection and preparation, the point at
// which the decoupled scenario gives its pre-provisioning address back.
func pastPreprovisioning(state bmov1.ProvisioningState) bool {
	switch state {
	case bmov1.StateAvailable, bmov1.StateReady, bmov1.StateProvisioning, bmov1.StateProvisioned,
		bmov1.StateExternallyProvisioned, bmov1.StateDeprovisioning:
		return true
	}
	return false
}

// keepsAddress tells whether a pre-provisioning claim outlives pre-provisioning. A pool that
// belongs to a cluster is the common pool of the seed: the cluster's Metal3DataTemplate takes
// the host's address from it through the same host-keyed claim, so the host keeps its address
// from inspection to provisioned. A pool of no cluster is a pre-provisioning pool (the decoupled
// scenario): its address is given back once the host is available, so the pool can be small.
func keepsAddress(poolClusterName *string) bool {
	return poolClusterName != nil && *poolClusterName != ""
}

// errNameInUse is returned by hostUpdate when the host already names another Secret.
var errNameInUse = errors.New("name in use")

// hostUpdate is the host as it must be once its Secret exists: spec.preprovisioningNetworkDataName
// names the Secret and, when the host is held with our paused value, the pause is gone. Both
// changes go in one patch, so BMO can never see the pause gone without the name set. lock says
// the patch must fail if the host changed since it was read: otherwise a pause another tool put
// in between with its own value would be removed. changed is false when there is nothing to do.
func hostUpdate(host *bmov1.BareMetalHost, secretName string) (want *bmov1.BareMetalHost, lock, changed bool, err error) {
	if name := host.Spec.PreprovisioningNetworkDataName; name != "" && name != secretName {
		return nil, false, false, fmt.Errorf("%w: spec.preprovisioningNetworkDataName already names Secret %s; remove it (or the %s annotation) so that only one of them configures the ramdisk's network",
			errNameInUse, name, bmov1.PreprovisioningNetworkDataReferenceAnnotation)
	}
	want = host.DeepCopy()
	want.Spec.PreprovisioningNetworkDataName = secretName
	if host.Annotations[bmov1.PausedAnnotation] == infrav1.PreprovisioningPausedAnnotationValue {
		delete(want.Annotations, bmov1.PausedAnnotation)
		lock = true
	}
	changed = lock || host.Spec.PreprovisioningNetworkDataName != secretName
	return want, lock, changed, nil
}

// isLiveISO tells whether the host boots a live ISO, which Ironic cannot inject network data
// into.
func isLiveISO(host *bmov1.BareMetalHost) bool {
	return host.Spec.Image != nil && host.Spec.Image.DiskFormat != nil && *host.Spec.Image.DiskFormat == "live-iso"
}

// renderFailure turns a rendering error into a status reason and a message. A template that
// needs inspected NICs cannot be rendered for a host that has not been inspected, and the host
// will not be inspected until it is: say so rather than wait forever.
func renderFailure(host string, err error) (reason, message string) {
	reason, message = renderFailureOf(host, err)
	if reason == infrav1.PreprovisioningRenderFailedReason {
		metrics.RenderErrors.WithLabelValues("BareMetalHost").Inc()
	}
	return reason, message
}

func renderFailureOf(host string, err error) (reason, message string) {
	var re *render.Error
	if errors.As(err, &re) {
		switch re.Reason {
		case render.ReasonHostNotInspected:
			return infrav1.PreprovisioningRenderFailedReason, fmt.Sprintf(
				"%s: needs host %s's inspected NICs, which a host waiting for its pre-provisioning network data cannot have (inspection waits for this data); take the MAC from fromBootMAC: true, a string, or an annotation of the baremetalhost",
				re.Field, host)
		case render.ReasonWaitingForPool:
			return infrav1.PreprovisioningWaitingForIPAddressesReason, err.Error()
		}
	}
	return infrav1.PreprovisioningRenderFailedReason, err.Error()
}

// isWaitingForPool tells whether a rendering failed only for want of an address.
func isWaitingForPool(err error) bool {
	_, ok := render.IsWaitingForPool(err)
	return ok
}

// addressesOutcome sums up the pools' answers: nil when every address is known, else the reason
// (an exhausted pool first: someone must act) and a message naming each pool.
func addressesOutcome(answers []poolanswer.Answer) *outcome {
	switch state, message := poolanswer.Summary(answers); state {
	case poolanswer.Exhausted:
		return &outcome{Reason: infrav1.PreprovisioningPoolExhaustedReason, Message: message}
	case poolanswer.Waiting:
		return &outcome{Reason: infrav1.PreprovisioningWaitingForIPAddressesReason, Message: message}
	}
	return nil
}

// unsupportedPools lists the pools that are not ipam.metal3.io IPPools: pre-provisioning claims
// addresses with IPClaims only.
func unsupportedPools(pools []render.PoolRef) []string {
	var out []string
	for _, p := range pools {
		if !p.IsMetal3IPPool() {
			out = append(out, p.String())
		}
	}
	slices.Sort(out)
	return out
}
