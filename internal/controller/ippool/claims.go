package ippool

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// claim is what the allocator needs from either kind of claim: an ipam.metal3.io IPClaim or a
// Cluster API IPAddressClaim. Both are keyed in the index by name, so an IPClaim and an
// IPAddressClaim of one name on one pool contend for one address and the second is refused.
type claim interface {
	object() client.Object
	kind() string
	apiVersion() string
	finalizer() string
	// served reports whether the status already says the claim holds addressName (never an
	// empty name).
	served(addressName string) bool
	// decidedAddress reports whether the status says the claim holds an address, and the name of
	// its IPAddress when the status names it ("" for a Cluster API claim, whose status names its
	// own IPAddress).
	decidedAddress() (string, bool)
	// readyReason is the reason of the Ready condition, "" when there is none.
	readyReason() string
	setAllocated(addressName string, now time.Time)
	setFailed(reason, message string, now time.Time)
	deepCopy() claim
}

type ipClaim struct{ *ipamv1.IPClaim }

func (c ipClaim) object() client.Object { return c.IPClaim }
func (ipClaim) kind() string            { return ipClaimKind }
func (ipClaim) apiVersion() string      { return metal3APIVersion }
func (ipClaim) finalizer() string       { return ipamv1.IPClaimFinalizer }
func (c ipClaim) deepCopy() claim       { return ipClaim{c.DeepCopy()} }

func (c ipClaim) served(addressName string) bool {
	return addressName != "" && c.Status.Address != nil && c.Status.Address.Name == addressName && c.Status.ErrorMessage == nil &&
		meta.IsStatusConditionTrue(c.Status.Conditions, ipamv1.ReadyCondition)
}

func (c ipClaim) decidedAddress() (string, bool) {
	if c.Status.Address == nil || c.Status.Address.Name == "" {
		return "", false
	}
	return c.Status.Address.Name, true
}

func (c ipClaim) readyReason() string {
	if cond := meta.FindStatusCondition(c.Status.Conditions, ipamv1.ReadyCondition); cond != nil {
		return cond.Reason
	}
	return ""
}

func (c ipClaim) setAllocated(addressName string, now time.Time) {
	c.Status.Address = &corev1.ObjectReference{Name: addressName, Namespace: c.Namespace}
	c.Status.ErrorMessage = nil
	meta.SetStatusCondition(&c.Status.Conditions, readyCondition(metav1.ConditionTrue, ipamv1.AllocatedReason,
		"holds IPAddress "+addressName, c.Generation, now))
}

func (c ipClaim) setFailed(reason, message string, now time.Time) {
	c.Status.ErrorMessage = ptr.To(upstreamMessage(reason, message))
	meta.SetStatusCondition(&c.Status.Conditions, readyCondition(metav1.ConditionFalse, reason, message, c.Generation, now))
}

type capiClaim struct{ *capiipamv1.IPAddressClaim }

func (c capiClaim) object() client.Object { return c.IPAddressClaim }
func (capiClaim) kind() string            { return capiClaimKind }
func (capiClaim) apiVersion() string      { return capiAPIVersion }
func (capiClaim) finalizer() string       { return ipamv1.CAPIIPAddressClaimFinalizer }
func (c capiClaim) deepCopy() claim       { return capiClaim{c.DeepCopy()} }

func (c capiClaim) served(string) bool {
	return c.Status.AddressRef.Name == c.Name && meta.IsStatusConditionTrue(c.Status.Conditions, capiipamv1.IPAddressClaimReadyCondition)
}

func (c capiClaim) decidedAddress() (string, bool) { return "", c.Status.AddressRef.Name != "" }

func (c capiClaim) readyReason() string {
	if cond := meta.FindStatusCondition(c.Status.Conditions, capiipamv1.IPAddressClaimReadyCondition); cond != nil {
		return cond.Reason
	}
	return ""
}

func (c capiClaim) setAllocated(addressName string, now time.Time) {
	c.Status.AddressRef = capiipamv1.IPAddressReference{Name: c.Name}
	meta.SetStatusCondition(&c.Status.Conditions, readyCondition(metav1.ConditionTrue, ipamv1.AllocatedReason,
		"holds IPAddress "+c.Name+" (ipam.metal3.io IPAddress "+addressName+")", c.Generation, now))
}

func (c capiClaim) setFailed(reason, message string, now time.Time) {
	meta.SetStatusCondition(&c.Status.Conditions, readyCondition(metav1.ConditionFalse, reason, message, c.Generation, now))
}

// upstreamMessage is IPClaim.status.errorMessage in the words upstream uses, so that tools
// written for metal3's ip-address-manager recognise it; the condition carries our message.
func upstreamMessage(reason, message string) string {
	switch reason {
	case ipamv1.PoolExhaustedReason:
		return "Exhausted IP Pools: " + message
	case ipamv1.RequestedAddressUnavailableReason, ipamv1.RequestedAddressInvalidReason:
		return "Requested IP not available: " + message
	}
	return message
}

// requestedAddress is the ipAddress annotation, if set.
func requestedAddress(c claim) (string, bool) {
	v, ok := c.object().GetAnnotations()[ipamv1.IPAddressAnnotation]
	return v, ok && v != ""
}

func hasFinalizer(c claim) bool { return controllerutil.ContainsFinalizer(c.object(), c.finalizer()) }

func deleting(o client.Object) bool { return !o.GetDeletionTimestamp().IsZero() }

// paused reports whether Cluster API asks to leave this claim alone: the claim or its Cluster is
// paused. A claim of a Cluster that does not exist (yet) is left alone too, as the IPAM contract
// says.
func pausedCAPIClaim(c *capiipamv1.IPAddressClaim, cluster *clusterv1.Cluster, clusterFound bool) bool {
	if _, ok := c.Annotations[clusterv1.PausedAnnotation]; ok {
		return true
	}
	if capiClusterName(c) == "" {
		return false
	}
	if !clusterFound {
		return true
	}
	_, annotated := cluster.Annotations[clusterv1.PausedAnnotation]
	return annotated || ptr.Deref(cluster.Spec.Paused, false)
}
