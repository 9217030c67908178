package clusternetwork

import (
	"context"
	"fmt"
	"strconv"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// vlanIDAnnotation on a VLAN lock says which id it holds.
const vlanIDAnnotation = "network.metalwire.io/vlan-id"

// vlanResult is the outcome of assigning a ClusterNetwork's VLANs.
type vlanResult struct {
	assigned map[string]int // network -> id
	problem  string         // why some network has none
	reason   string
}

// vlanLocks lists the VLAN locks of a NetworkDevice.
func (r *Reconciler) vlanLocks(ctx context.Context, ns, nd string) ([]coordinationv1.Lease, error) {
	leases := &coordinationv1.LeaseList{}
	if err := r.Client.List(ctx, leases, client.InNamespace(ns), client.MatchingLabels{netv1.VLANLockNetworkDeviceLabel: nd}); err != nil {
		return nil, err
	}
	return leases.Items, nil
}

func lockID(l *coordinationv1.Lease) int {
	id, _ := strconv.Atoi(l.Annotations[vlanIDAnnotation])
	return id
}

// assignVLANs gives each network an id from the range. Ids are unique per NetworkDevice because
// each is held by a Lease named after the device and the id: a second ClusterNetwork (or a second
// manager with a stale cache) asking for the same id gets AlreadyExists and moves on.
func (r *Reconciler) assignVLANs(ctx context.Context, cn *netv1.ClusterNetwork) (vlanResult, error) {
	res := vlanResult{assigned: map[string]int{}}
	rng, err := fabric.ParseVLANRange(cn.Spec.VLANRange)
	if err != nil {
		return res, err // refused at admission; only an old object could get here
	}
	locks, err := r.vlanLocks(ctx, cn.Namespace, cn.Spec.NetworkDeviceRef)
	if err != nil {
		return res, err
	}
	held := map[int]string{}
	taken := map[int]bool{}
	holder := map[int]string{}
	for i := range locks {
		id := lockID(&locks[i])
		taken[id] = true
		holder[id] = locks[i].Labels[netv1.VLANLockClusterNetworkLabel]
		if holder[id] == cn.Name {
			held[id] = locks[i].Annotations[netv1.VLANLockNetworkAnnotation]
		}
	}
	wants := make([]fabric.VLANRequest, 0, len(cn.Spec.Networks))
	for _, n := range cn.Spec.Networks {
		wants = append(wants, fabric.VLANRequest{Network: n.Name, Pin: int(ptr.Deref(n.VLANID, 0))})
	}
	plan := fabric.PlanVLANs(rng, wants, held)
	for _, id := range plan.Release {
		if err := r.releaseVLAN(ctx, cn, id); err != nil {
			return res, err
		}
	}
	res.assigned = plan.Keep
	for _, need := range plan.Need {
		if need.Pin != 0 {
			ok, err := r.lockVLAN(ctx, cn, need.Network, need.Pin)
			if err != nil {
				return res, err
			}
			if !ok {
				res.problem, res.reason = fmt.Sprintf("network %s pins vlanID %d, which ClusterNetwork %s already uses on NetworkDevice %s; pin another id", need.Network, need.Pin, holderName(ctx, r, cn, need.Pin, holder), cn.Spec.NetworkDeviceRef), netv1.ReasonVLANTaken
				continue
			}
			res.assigned[need.Network] = need.Pin
			continue
		}
		// Pins of this ClusterNetwork's other networks are not free for unpinned ones.
		for _, w := range wants {
			if w.Pin != 0 {
				taken[w.Pin] = true
			}
		}
		for {
			id := rng.NextFree(taken)
			if id == 0 {
				res.problem, res.reason = fmt.Sprintf("vlanRange %s has no free VLAN id left on NetworkDevice %s for network %s; widen vlanRange or delete a ClusterNetwork using it (retried when an id frees)", cn.Spec.VLANRange, cn.Spec.NetworkDeviceRef, need.Network), netv1.ReasonVLANRangeExhausted
				break
			}
			taken[id] = true
			ok, err := r.lockVLAN(ctx, cn, need.Network, id)
			if err != nil {
				return res, err
			}
			if ok {
				res.assigned[need.Network] = id
				break
			}
		}
	}
	return res, nil
}

func holderName(ctx context.Context, r *Reconciler, cn *netv1.ClusterNetwork, id int, cached map[int]string) string {
	if h := cached[id]; h != "" {
		return h
	}
	l := &coordinationv1.Lease{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: cn.Namespace, Name: netv1.VLANLockName(cn.Spec.NetworkDeviceRef, id)}, l); err == nil {
		return l.Labels[netv1.VLANLockClusterNetworkLabel]
	}
	return "another"
}

// lockVLAN creates the Lease holding id for network; false when another holds it.
func (r *Reconciler) lockVLAN(ctx context.Context, cn *netv1.ClusterNetwork, network string, id int) (bool, error) {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Namespace: cn.Namespace,
		Name:      netv1.VLANLockName(cn.Spec.NetworkDeviceRef, id),
		Labels: map[string]string{
			netv1.VLANLockNetworkDeviceLabel:  cn.Spec.NetworkDeviceRef,
			netv1.VLANLockClusterNetworkLabel: cn.Name,
		},
		Annotations: map[string]string{netv1.VLANLockNetworkAnnotation: network, vlanIDAnnotation: strconv.Itoa(id)},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: netv1.GroupVersion.String(), Kind: "ClusterNetwork", Name: cn.Name, UID: cn.UID,
		}},
	}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(cn.Name)}}
	err := r.Client.Create(ctx, l)
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsAlreadyExists(err):
		// Ours already (a stale cache)? Then keep it.
		cur := &coordinationv1.Lease{}
		if gerr := r.APIReader.Get(ctx, client.ObjectKeyFromObject(l), cur); gerr == nil &&
			cur.Labels[netv1.VLANLockClusterNetworkLabel] == cn.Name && cur.Annotations[netv1.VLANLockNetworkAnnotation] == network {
			return true, nil
		}
		return false, nil
	}
	return false, fmt.Errorf("locking VLAN %d: %w", id, err)
}

func (r *Reconciler) releaseVLAN(ctx context.Context, cn *netv1.ClusterNetwork, id int) error {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: cn.Namespace, Name: netv1.VLANLockName(cn.Spec.NetworkDeviceRef, id)}}
	err := r.Client.Delete(ctx, l, client.Preconditions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing VLAN %d: %w", id, err)
	}
	return nil
}

// releaseAll frees every VLAN id the ClusterNetwork holds.
func (r *Reconciler) releaseAll(ctx context.Context, cn *netv1.ClusterNetwork) error {
	locks, err := r.vlanLocks(ctx, cn.Namespace, cn.Spec.NetworkDeviceRef)
	if err != nil {
		return err
	}
	for i := range locks {
		if locks[i].Labels[netv1.VLANLockClusterNetworkLabel] == cn.Name {
			if err := r.releaseVLAN(ctx, cn, lockID(&locks[i])); err != nil {
				return err
			}
		}
	}
	return nil
}
