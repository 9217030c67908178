package metal3machine

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// InvalidHostSelectorReason: spec.hostSelector is no valid label selector (something admission
// could not refuse, such as a key prefix longer than a DNS name). The machine is not retried
// until its spec changes.
const InvalidHostSelectorReason = "InvalidHostSelector"

// invalidInputError is input no retry can fix: the reconcile sets a condition with reason and
// the error's words, and returns a terminal error (no requeue; the object's next change brings
// it back).
type invalidInputError struct {
	reason string
	err    error
}

func (e *invalidInputError) Error() string { return e.err.Error() }
func (e *invalidInputError) Unwrap() error { return e.err }

// claimHost picks a host and claims it, shaped by shape, with a patch that carries the host's
// resourceVersion: if another machine claimed it first, or BMO changed it since the cache saw
// it, the API server refuses, and the next candidate is tried. Two machines therefore never take
// one host, however stale the cache.
//
// Which host: one already naming the machine; else one kept for the machine's owner by node
// reuse; else the one the shared matching (hostChoice) gives the machine among the claimable
// hosts matching its selector (and, with a ClusterNetwork, available in it), so that machines
// claiming together serve as many as a perfect assignment would. Alone, a machine gets its first
// preference: its failure domain's hosts first, then its own hash order (chooseHost).
func (r *Reconciler) claimHost(ctx context.Context, m3m *infrav1.Metal3Machine, machine *clusterv1.Machine, cn *netv1.ClusterNetwork,
	shape func(*bmov1.BareMetalHost),
) (*bmov1.BareMetalHost, string, error) {
	sel, err := m3m.Spec.HostSelector.Selector()
	if err != nil {
		// No retry can fix the selector: the machine comes back when its spec is changed.
		return nil, "", &invalidInputError{reason: InvalidHostSelectorReason, err: fmt.Errorf("spec.%w; fix the selector", err)}
	}
	ours := &bmov1.BareMetalHostList{}
	if err := r.Client.List(ctx, ours, client.InNamespace(m3m.Namespace),
		client.MatchingFields{hostConsumerIndex: metal3MachineKind + "/" + m3m.Name}); err != nil {
		return nil, "", err
	}
	for i := range ours.Items {
		if consumedBy(&ours.Items[i], m3m) {
			return &ours.Items[i], "", nil
		}
	}
	// While the cache may not show a host this manager claimed for the machine (its own write
	// after the claim failed), or machines still arrive, the machine only joins the matching
	// (errCacheBehind brings it back in a second), before anything is read past the cache: a
	// thousand machines arriving ask about once a second each.
	if err := r.choice.settle(ctx, r.Client, m3m); err != nil {
		return nil, "", err
	}
	// A machine whose own claim has not reached the cache yet must not claim a second host.
	live := &infrav1.Metal3Machine{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(m3m), live); err != nil {
		return nil, "", fmt.Errorf("reading Metal3Machine %s from the API server: %w", m3m.Name, err)
	}
	if live.Annotations[infrav1.HostAnnotation] != "" {
		return nil, "", errCacheBehind
	}

	var refused sets.Set[string]
	var allowed sets.Set[string]
	if cn != nil {
		// Only the hosts the ClusterNetwork offers, less those whose ports failed for this
		// machine (read live: the cache may not have the machine's last refusal yet).
		refused = refusedHosts(live.Annotations)
		allowed = networkHosts(cn, refused)
	}
	domain := failureDomain(m3m, machine)

	skip := sets.New[string]()
	for range maxClaimAttempts {
		order, why, err := r.candidates(ctx, m3m, machine, domain, sel, allowed, skip)
		if err != nil || why != "" {
			return nil, why, err
		}
		var host *bmov1.BareMetalHost
		if len(order) > 0 {
			// errCacheBehind while machines still arrive: the reconcile comes back in a second.
			if host, err = r.choice.assign(ctx, r.Client, m3m, order); err != nil {
				return nil, "", err
			}
		}
		if host == nil {
			why, err := r.explainNoHost(ctx, m3m, sel, skip, len(order))
			if cn != nil {
				why = noNetworkHostMessage(cn, refused, why)
			}
			return nil, why, err
		}
		claimed := host.DeepCopy()
		shape(claimed)
		delete(claimed.Labels, NodeReuseLabel) // the reservation ends with the claim, as upstream
		err = r.Client.Patch(ctx, claimed, client.MergeFromWithOptions(host, client.MergeFromWithOptimisticLock{}))
		switch {
		case err == nil:
			r.choice.done(m3m, host, claimMade)
			ctrl.LoggerFrom(ctx).Info("claimed host", "host", host.Name)
			return claimed, "", nil
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			r.choice.done(m3m, host, claimLost)
			skip.Insert(host.Name)
		default:
			r.choice.done(m3m, host, claimFailed)
			return nil, "", fmt.Errorf("claiming BareMetalHost %s: %w", host.Name, err)
		}
	}
	return nil, "", errCacheBehind
}

// candidates returns the hosts the machine may claim, most preferred first: the hosts kept for
// its owner by node reuse if there are any (why says what it waits for when none of them is
// ready yet), else the free claimable hosts matching sel, within allowed when it is not nil.
func (r *Reconciler) candidates(ctx context.Context, m3m *infrav1.Metal3Machine, machine *clusterv1.Machine, domain string,
	sel labels.Selector, allowed, skip sets.Set[string],
) ([]*bmov1.BareMetalHost, string, error) {
	reuse, why, err := r.reuseHosts(ctx, m3m, machine, sel, skip)
	if err != nil || why != "" || len(reuse) > 0 {
		return reuse, why, err
	}
	// Free hosts only, matched by the selector in the cache: the full list of a namespace's
	// hosts is read only to explain a failure. The cache's own objects, not copies: claimHost
	// patches a copy of the one it claims, and nothing changes the others.
	list := &bmov1.BareMetalHostList{}
	if err := r.Client.List(ctx, list, client.InNamespace(m3m.Namespace),
		client.MatchingFields{hostConsumerIndex: noConsumer}, client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, "", err
	}
	free := slices.DeleteFunc(list.Items, func(h bmov1.BareMetalHost) bool {
		_, kept := h.Labels[NodeReuseLabel] // kept for another owner's machines
		return kept || allowed != nil && !allowed.Has(h.Name)
	})
	return preferred(m3m, domain, free, sel, skip), "", nil
}

// explainNoHost reads every host of the namespace matching the selector, claimed or not, to say
// why none could be claimed. It runs only when the claim failed. claimable is how many hosts
// the machine could have claimed but the shared matching gave to other waiting machines.
func (r *Reconciler) explainNoHost(ctx context.Context, m3m *infrav1.Metal3Machine, sel labels.Selector, skip sets.Set[string], claimable int) (string, error) {
	all := &bmov1.BareMetalHostList{}
	if err := r.Client.List(ctx, all, client.InNamespace(m3m.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return "", fmt.Errorf("listing the BareMetalHosts matching the selector of Metal3Machine %s: %w", m3m.Name, err)
	}
	matching := make([]*bmov1.BareMetalHost, 0, len(all.Items))
	for i := range all.Items {
		matching = append(matching, &all.Items[i])
	}
	msg := noHostMessage(m3m.Namespace, sel, matching, skip)
	if claimable > 0 {
		msg = fmt.Sprintf("the %d free hosts this machine accepts are assigned to other waiting machines, and giving one to this machine would leave another without any (the most machines are served at once); %s",
			claimable, msg)
	}
	return msg, nil
}
