package ippool

import (
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/pkg/ipam"
)

// specOf copies an IPPool's spec into the plain values pkg/ipam parses.
func specOf(p *ipamv1.IPPool) ipam.Spec {
	s := ipam.Spec{
		Strategy:          ipam.Strategy(p.Spec.AllocationStrategy),
		Prefix:            p.Spec.Prefix,
		Gateway:           str(p.Spec.Gateway),
		DNSServers:        strs(p.Spec.DNSServers),
		ExcludedAddresses: p.Spec.ExcludedAddresses,
	}
	if p.Spec.ReuseGracePeriod != nil {
		s.ReuseGracePeriod = p.Spec.ReuseGracePeriod.Duration
	}
	for _, r := range p.Spec.Pools {
		s.Pools = append(s.Pools, ipam.Range{
			Start:      str(r.Start),
			End:        str(r.End),
			Subnet:     ptr.Deref((*string)(r.Subnet), ""),
			Prefix:     r.Prefix,
			Gateway:    str(r.Gateway),
			DNSServers: strs(r.DNSServers),
		})
	}
	if len(p.Spec.PreAllocations) > 0 {
		s.PreAllocations = make(map[string]string, len(p.Spec.PreAllocations))
		for claim, addr := range p.Spec.PreAllocations {
			s.PreAllocations[claim] = string(addr)
		}
	}
	return s
}

func str(s *ipamv1.IPAddressStr) string {
	if s == nil {
		return ""
	}
	return string(*s)
}

func strs(in []ipamv1.IPAddressStr) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = string(s)
	}
	return out
}

// newIPAddress is the ipam.metal3.io IPAddress for addr given to a claim: named after the
// address (the lock), owned by the claim (controller) and the pool, labelled as the claim is.
func newIPAddress(pool *ipamv1.IPPool, c claim, addr netip.Addr, entry ipam.Entry) *ipamv1.IPAddress {
	obj := c.object()
	a := &ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ipamv1.IPAddressName(pool.Spec.NamePrefix, addr.String()),
			Namespace: pool.Namespace,
			Labels:    copyLabels(obj.GetLabels()),
			OwnerReferences: []metav1.OwnerReference{
				{
					APIVersion: c.apiVersion(), Kind: c.kind(), Name: obj.GetName(), UID: obj.GetUID(),
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
				},
				{APIVersion: metal3APIVersion, Kind: ipPoolKind, Name: pool.Name, UID: pool.UID},
			},
		},
		Spec: ipamv1.IPAddressSpec{
			Claim:   corev1.ObjectReference{APIVersion: c.apiVersion(), Kind: c.kind(), Name: obj.GetName(), Namespace: obj.GetNamespace()},
			Pool:    corev1.ObjectReference{APIVersion: metal3APIVersion, Kind: ipPoolKind, Name: pool.Name, Namespace: pool.Namespace},
			Address: ipamv1.IPAddressStr(addr.String()),
			Prefix:  entry.Prefix,
		},
	}
	if entry.Gateway.IsValid() {
		a.Spec.Gateway = ptr.To(ipamv1.IPAddressStr(entry.Gateway.String()))
	}
	for _, d := range entry.DNSServers {
		a.Spec.DNSServers = append(a.Spec.DNSServers, ipamv1.IPAddressStr(d.String()))
	}
	return a
}

// newCAPIAddress is the Cluster API IPAddress for a Cluster API claim, as the IPAM contract
// asks: named after the claim, the claim its controller owner, the pool an owner too.
func newCAPIAddress(pool *ipamv1.IPPool, c *capiipamv1.IPAddressClaim, addr netip.Addr, entry ipam.Entry) *capiipamv1.IPAddress {
	a := &capiipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{
			Name:       c.Name,
			Namespace:  c.Namespace,
			Labels:     copyLabels(c.Labels),
			Finalizers: []string{ipamv1.CAPIIPAddressFinalizer},
			OwnerReferences: []metav1.OwnerReference{
				{
					APIVersion: capiAPIVersion, Kind: capiClaimKind, Name: c.Name, UID: c.UID,
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
				},
				{APIVersion: metal3APIVersion, Kind: ipPoolKind, Name: pool.Name, UID: pool.UID, BlockOwnerDeletion: ptr.To(true)},
			},
		},
		Spec: capiipamv1.IPAddressSpec{
			ClaimRef: capiipamv1.IPAddressClaimReference{Name: c.Name},
			PoolRef:  capiipamv1.IPPoolReference{APIGroup: ipamGroup, Kind: ipPoolKind, Name: pool.Name},
			Address:  addr.String(),
			Prefix:   ptr.To(int32(entry.Prefix)), //nolint:gosec // a prefix is at most 128
		},
	}
	if entry.Gateway.IsValid() {
		a.Spec.Gateway = entry.Gateway.String()
	}
	return a
}

func copyLabels(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// readyCondition builds a Ready condition.
func readyCondition(status metav1.ConditionStatus, reason, message string, generation int64, now time.Time) metav1.Condition {
	return metav1.Condition{
		Type: ipamv1.ReadyCondition, Status: status, Reason: reason, Message: message,
		ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now),
	}
}
