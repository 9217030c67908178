package metal3data

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/poolanswer"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
	"github.com/metalwire/metalwire/pkg/render"
)

// claimAddresses makes sure a claim exists in every pool and reads the addresses given so far.
// The pools are asked at once: a host's first reconcile creates a claim in each, and the API
// server's latency, not our work, is what a thousand hosts wait for.
func (r *Reconciler) claimAddresses(ctx context.Context, data *infrav1.Metal3Data, in *inputs, pools []render.PoolRef) ([]poolanswer.Answer, error) {
	answers := make([]poolanswer.Answer, len(pools))
	errs := make([]error, len(pools))
	var wg sync.WaitGroup
	for i, pool := range pools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if pool.IsMetal3IPPool() {
				answers[i], err = r.metal3Address(ctx, data, in, pool)
			} else {
				answers[i], err = r.capiAddress(ctx, data, in, pool)
			}
			if err != nil {
				errs[i] = fmt.Errorf("claiming an address from pool %s: %w", pool, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return answers, nil
}

// claimMeta is the metadata of a new address claim: owned by the Metal3Data (as controller,
// so deleting the Metal3Data in a cluster with garbage collection removes it too), labelled with
// the cluster and the Metal3Data's watch-filter label, and with IP reuse the labels CAPM3 sets to find the Metal3Data and pool back.
func (r *Reconciler) claimMeta(data *infrav1.Metal3Data, in *inputs, pool render.PoolRef) metav1.ObjectMeta {
	om := metav1.ObjectMeta{
		Name:            AddressClaimName(data.Name, in.host.Name, pool, r.IPReuse),
		Namespace:       data.Namespace,
		Labels:          map[string]string{},
		OwnerReferences: []metav1.OwnerReference{dataOwnerRef(data, true)},
	}
	if c := in.clusterName(); c != "" {
		om.Labels[clusterv1.ClusterNameLabel] = c
	}
	if r.IPReuse {
		om.Labels[ipamv1.DataNameLabel] = data.Name
		om.Labels[ipamv1.PoolNameLabel] = pool.Name
	}
	// The Metal3Data's manager (--watch-filter) is the one whose pools serve it.
	om.Labels = watchfilter.Carry(om.Labels, data)
	return om
}

func dataOwnerRef(data *infrav1.Metal3Data, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         infrav1.GroupVersion.String(),
		Kind:               dataKind,
		Name:               data.Name,
		UID:                data.UID,
		Controller:         &controller,
		BlockOwnerDeletion: &controller,
	}
}

func ownedBy(o client.Object, data *infrav1.Metal3Data) bool {
	return slices.ContainsFunc(o.GetOwnerReferences(), func(ref metav1.OwnerReference) bool { return ref.UID == data.UID })
}

// adopt makes an existing claim ours too. With IP reuse the claim is keyed by host and may have
// been made by pre-provisioning or a previous Metal3Data of the host; sharing it (as a
// non-controlling owner) is how the host keeps its address.
func (r *Reconciler) adopt(ctx context.Context, claim client.Object, data *infrav1.Metal3Data) error {
	if ownedBy(claim, data) {
		return nil
	}
	before := claim.DeepCopyObject().(client.Object)
	claim.SetOwnerReferences(append(claim.GetOwnerReferences(), dataOwnerRef(data, false)))
	return r.Client.Patch(ctx, claim, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// metal3Address claims from an ipam.metal3.io IPPool with an IPClaim.
func (r *Reconciler) metal3Address(ctx context.Context, data *infrav1.Metal3Data, in *inputs, pool render.PoolRef) (poolanswer.Answer, error) {
	want := r.claimMeta(data, in, pool)
	claim := &ipamv1.IPClaim{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: want.Namespace, Name: want.Name}, claim)
	// A claim created here a moment ago and not in the cache yet is waited for, not created
	// again (the API server would refuse it, but count the write).
	if _, unseen := r.createdClaims.Unseen(claimKey(data, want.Name), claim.ResourceVersion); unseen && apierrors.IsNotFound(err) {
		return poolanswer.Unanswered(pool, "IPClaim", want.Name, nil, nil), nil
	}
	if apierrors.IsNotFound(err) {
		claim = &ipamv1.IPClaim{
			ObjectMeta: want,
			Spec: ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{
				APIVersion: ipamv1.GroupVersion.String(), Kind: render.DefaultPoolKind, Name: pool.Name, Namespace: data.Namespace,
			}},
		}
		if err := r.Client.Create(ctx, claim); err != nil && !apierrors.IsAlreadyExists(err) {
			return poolanswer.Answer{}, fmt.Errorf("creating IPClaim %s: %w", claim.Name, err)
		}
		r.createdClaims.Wrote(claimKey(data, want.Name), "", struct{}{})
		// The claim is new, or the cache had not seen it: its own event brings us back. The
		// message is the one a claim without an address gets, so the status is written once.
		return poolanswer.Unanswered(pool, "IPClaim", want.Name, nil, nil), nil
	}
	if err != nil {
		return poolanswer.Answer{}, err
	}
	if claim.Spec.Pool.Name != pool.Name {
		return poolanswer.Answer{}, fmt.Errorf("IPClaim %s already exists for pool %s; delete it so a claim on pool %s can be made", claim.Name, claim.Spec.Pool.Name, pool.Name)
	}
	if claim.DeletionTimestamp.IsZero() {
		if err := r.adoptIfShared(ctx, claim, data); err != nil {
			return poolanswer.Answer{}, err
		}
	}
	return poolanswer.OfIPClaim(ctx, r.Client, pool, claim)
}

// capiAddress claims from any other IPAM provider's pool with a Cluster API IPAddressClaim.
func (r *Reconciler) capiAddress(ctx context.Context, data *infrav1.Metal3Data, in *inputs, pool render.PoolRef) (poolanswer.Answer, error) {
	want := r.claimMeta(data, in, pool)
	claim := &capiipamv1.IPAddressClaim{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: want.Namespace, Name: want.Name}, claim)
	// A claim created here a moment ago and not in the cache yet is waited for, not created
	// again (the API server would refuse it, but count the write).
	if _, unseen := r.createdClaims.Unseen(claimKey(data, want.Name), claim.ResourceVersion); unseen && apierrors.IsNotFound(err) {
		return poolanswer.Unanswered(pool, "IPAddressClaim", want.Name, nil, nil), nil
	}
	if apierrors.IsNotFound(err) {
		claim = &capiipamv1.IPAddressClaim{
			ObjectMeta: want,
			Spec: capiipamv1.IPAddressClaimSpec{
				ClusterName: in.clusterName(),
				PoolRef:     capiipamv1.IPPoolReference{APIGroup: pool.APIGroup, Kind: pool.Kind, Name: pool.Name},
			},
		}
		if err := r.Client.Create(ctx, claim); err != nil && !apierrors.IsAlreadyExists(err) {
			return poolanswer.Answer{}, fmt.Errorf("creating IPAddressClaim %s: %w", claim.Name, err)
		}
		r.createdClaims.Wrote(claimKey(data, want.Name), "", struct{}{})
		return poolanswer.Unanswered(pool, "IPAddressClaim", want.Name, nil, nil), nil
	}
	if err != nil {
		return poolanswer.Answer{}, err
	}
	got := claim.Spec.PoolRef
	if got.Name != pool.Name || got.Kind != pool.Kind || got.APIGroup != pool.APIGroup {
		return poolanswer.Answer{}, fmt.Errorf("IPAddressClaim %s already exists for pool %s.%s/%s; delete it so a claim on pool %s can be made", claim.Name, got.Kind, got.APIGroup, got.Name, pool)
	}
	if !claim.DeletionTimestamp.IsZero() {
		return poolanswer.WaitingFor(pool, fmt.Sprintf("IPAddressClaim %s is being deleted; a new one is made once it is gone", claim.Name)), nil
	}
	if err := r.adoptIfShared(ctx, claim, data); err != nil {
		return poolanswer.Answer{}, err
	}
	if name := claim.Status.AddressRef.Name; name != "" {
		addr := &capiipamv1.IPAddress{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: claim.Namespace, Name: name}, addr); err != nil {
			if apierrors.IsNotFound(err) {
				a := poolanswer.WaitingFor(pool, fmt.Sprintf("IPAddress %s of IPAddressClaim %s not seen yet", name, claim.Name))
				a.NotSeen = true
				return a, nil
			}
			return poolanswer.Answer{}, err
		}
		out := render.PoolAddress{Address: addr.Spec.Address, Gateway: addr.Spec.Gateway}
		if addr.Spec.Prefix != nil {
			out.Prefix = int(*addr.Spec.Prefix)
		}
		return poolanswer.Answer{Pool: pool, State: poolanswer.Ready, Address: out}, nil
	}
	return poolanswer.Unanswered(pool, "IPAddressClaim", claim.Name, claim.Status.Conditions, nil), nil
}

// adoptIfShared adds this Metal3Data as an owner of a claim it did not create. Without IP reuse
// a claim named after this Metal3Data that another object owns is left alone: it is reported
// by the IPAM controller if it conflicts.
func (r *Reconciler) adoptIfShared(ctx context.Context, claim client.Object, data *infrav1.Metal3Data) error {
	if !r.IPReuse {
		return nil
	}
	return r.adopt(ctx, claim, data)
}
