package metal3data

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/pkg/render"
)

// poolState is where one pool's address stands.
type poolState int

const (
	poolReady     poolState = iota // the address is known
	poolWaiting                    // claimed, not given yet
	poolExhausted                  // the pool has no free address; retried when it gains one
)

// poolAnswer is one pool's answer to this host's claim.
type poolAnswer struct {
	pool    render.PoolRef
	state   poolState
	address render.PoolAddress
	// message says why there is no address yet, in the IPAM controller's words.
	message string
}

// exhaustedReason is the reason both our IPAM and this controller use for a full pool; a
// Cluster API provider that says the same is understood too.
const exhaustedReason = ipamv1.PoolExhaustedReason

// claimAddresses makes sure a claim exists in every pool and reads the addresses given so far.
// The pools are asked at once: a host's first reconcile creates a claim in each, and the API
// server's latency, not our work, is what a thousand hosts wait for.
func (r *Reconciler) claimAddresses(ctx context.Context, data *infrav1.Metal3Data, in *inputs, pools []render.PoolRef) ([]poolAnswer, error) {
	answers := make([]poolAnswer, len(pools))
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
// the cluster, and with IP reuse the labels CAPM3 sets to find the Metal3Data and pool back.
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
func (r *Reconciler) metal3Address(ctx context.Context, data *infrav1.Metal3Data, in *inputs, pool render.PoolRef) (poolAnswer, error) {
	want := r.claimMeta(data, in, pool)
	claim := &ipamv1.IPClaim{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: want.Namespace, Name: want.Name}, claim)
	if apierrors.IsNotFound(err) && r.recent.claimPending(data.UID, want.Name) {
		return unanswered(pool, "IPClaim", want.Name, nil, nil), nil
	}
	if err == nil {
		r.recent.claimSeen(data.UID, want.Name)
	}
	if apierrors.IsNotFound(err) {
		claim = &ipamv1.IPClaim{
			ObjectMeta: want,
			Spec: ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{
				APIVersion: ipamv1.GroupVersion.String(), Kind: render.DefaultPoolKind, Name: pool.Name, Namespace: data.Namespace,
			}},
		}
		if err := r.Client.Create(ctx, claim); err != nil && !apierrors.IsAlreadyExists(err) {
			return poolAnswer{}, err
		}
		r.recent.claimCreated(data.UID, want.Name)
		// The claim is new, or the cache had not seen it: its own event brings us back. The
		// message is the one a claim without an address gets, so the status is written once.
		return unanswered(pool, "IPClaim", want.Name, nil, nil), nil
	}
	if err != nil {
		return poolAnswer{}, err
	}
	if claim.Spec.Pool.Name != pool.Name {
		return poolAnswer{}, fmt.Errorf("IPClaim %s already exists for pool %s; delete it so a claim on pool %s can be made", claim.Name, claim.Spec.Pool.Name, pool.Name)
	}
	if !claim.DeletionTimestamp.IsZero() {
		return poolAnswer{pool: pool, state: poolWaiting, message: fmt.Sprintf("IPClaim %s is being deleted; a new one is made once it is gone", claim.Name)}, nil
	}
	if err := r.adoptIfShared(ctx, claim, data); err != nil {
		return poolAnswer{}, err
	}
	if claim.Status.Address != nil && claim.Status.Address.Name != "" {
		addr := &ipamv1.IPAddress{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: claim.Namespace, Name: claim.Status.Address.Name}, addr); err != nil {
			if apierrors.IsNotFound(err) {
				return poolAnswer{pool: pool, state: poolWaiting, message: fmt.Sprintf("IPAddress %s of IPClaim %s not seen yet", claim.Status.Address.Name, claim.Name)}, nil
			}
			return poolAnswer{}, err
		}
		out := render.PoolAddress{Address: string(addr.Spec.Address), Prefix: addr.Spec.Prefix}
		if addr.Spec.Gateway != nil {
			out.Gateway = string(*addr.Spec.Gateway)
		}
		for _, d := range addr.Spec.DNSServers {
			out.DNSServers = append(out.DNSServers, string(d))
		}
		return poolAnswer{pool: pool, state: poolReady, address: out}, nil
	}
	return unanswered(pool, "IPClaim", claim.Name, claim.Status.Conditions, claim.Status.ErrorMessage), nil
}

// capiAddress claims from any other IPAM provider's pool with a Cluster API IPAddressClaim.
func (r *Reconciler) capiAddress(ctx context.Context, data *infrav1.Metal3Data, in *inputs, pool render.PoolRef) (poolAnswer, error) {
	want := r.claimMeta(data, in, pool)
	claim := &capiipamv1.IPAddressClaim{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: want.Namespace, Name: want.Name}, claim)
	if apierrors.IsNotFound(err) && r.recent.claimPending(data.UID, want.Name) {
		return unanswered(pool, "IPAddressClaim", want.Name, nil, nil), nil
	}
	if err == nil {
		r.recent.claimSeen(data.UID, want.Name)
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
			return poolAnswer{}, err
		}
		r.recent.claimCreated(data.UID, want.Name)
		return unanswered(pool, "IPAddressClaim", want.Name, nil, nil), nil
	}
	if err != nil {
		return poolAnswer{}, err
	}
	got := claim.Spec.PoolRef
	if got.Name != pool.Name || got.Kind != pool.Kind || got.APIGroup != pool.APIGroup {
		return poolAnswer{}, fmt.Errorf("IPAddressClaim %s already exists for pool %s.%s/%s; delete it so a claim on pool %s can be made", claim.Name, got.Kind, got.APIGroup, got.Name, pool)
	}
	if !claim.DeletionTimestamp.IsZero() {
		return poolAnswer{pool: pool, state: poolWaiting, message: fmt.Sprintf("IPAddressClaim %s is being deleted; a new one is made once it is gone", claim.Name)}, nil
	}
	if err := r.adoptIfShared(ctx, claim, data); err != nil {
		return poolAnswer{}, err
	}
	if name := claim.Status.AddressRef.Name; name != "" {
		addr := &capiipamv1.IPAddress{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: claim.Namespace, Name: name}, addr); err != nil {
			if apierrors.IsNotFound(err) {
				return poolAnswer{pool: pool, state: poolWaiting, message: fmt.Sprintf("IPAddress %s of IPAddressClaim %s not seen yet", name, claim.Name)}, nil
			}
			return poolAnswer{}, err
		}
		out := render.PoolAddress{Address: addr.Spec.Address, Gateway: addr.Spec.Gateway}
		if addr.Spec.Prefix != nil {
			out.Prefix = int(*addr.Spec.Prefix)
		}
		return poolAnswer{pool: pool, state: poolReady, address: out}, nil
	}
	return unanswered(pool, "IPAddressClaim", claim.Name, claim.Status.Conditions, nil), nil
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

// unanswered reads why a claim has no address from its Ready condition.
func unanswered(pool render.PoolRef, kind, name string, conds []metav1.Condition, errorMessage *string) poolAnswer {
	a := poolAnswer{pool: pool, state: poolWaiting, message: fmt.Sprintf("%s %s has no address yet", kind, name)}
	// A claim's Ready=False carries the IPAM controller's reason and words (pool exhausted, pool
	// not found): those are worth showing. Until then the message stays the same, so waiting
	// costs one status write.
	if c := meta.FindStatusCondition(conds, ipamv1.ReadyCondition); c != nil && c.Status == metav1.ConditionFalse {
		if c.Reason == exhaustedReason {
			a.state = poolExhausted
		}
		if c.Message != "" {
			a.message = fmt.Sprintf("%s %s: %s", kind, name, c.Message)
		}
	}
	if errorMessage != nil && *errorMessage != "" && a.state == poolExhausted && !strings.Contains(a.message, *errorMessage) {
		a.message += " (" + *errorMessage + ")"
	}
	return a
}

// addressesSummary decides the IPAddressesReady condition from the pools' answers: exhausted
// pools first (an error someone must act on), then pools still allocating.
func addressesSummary(answers []poolAnswer) (state poolState, message string) {
	var exhausted, waiting []string
	for _, a := range answers {
		switch a.state {
		case poolExhausted:
			exhausted = append(exhausted, a.message)
		case poolWaiting:
			waiting = append(waiting, a.message)
		}
	}
	switch {
	case len(exhausted) > 0:
		return poolExhausted, "no free address: " + strings.Join(exhausted, "; ") + "; add addresses to the pool or release some (retried as soon as the pool changes)"
	case len(waiting) > 0:
		return poolWaiting, "waiting for addresses: " + strings.Join(waiting, "; ")
	}
	return poolReady, ""
}

// poolAddresses is the render input: the address from every pool that gave one.
func poolAddresses(answers []poolAnswer) map[render.PoolRef]render.PoolAddress {
	out := make(map[render.PoolRef]render.PoolAddress, len(answers))
	for _, a := range answers {
		if a.state == poolReady {
			out[a.pool] = a.address
		}
	}
	return out
}
