// Package poolanswer reads a pool's answer to an address claim: the address given, a wait, or an
// exhausted pool, in words a person can act on. The Metal3Data controller and the
// pre-provisioning controller both claim addresses for hosts and read the answers here, so both
// report a pool's state alike.
package poolanswer

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/pkg/render"
)

// State is where one pool's address for a host stands.
type State int

const (
	// Ready: the address is known.
	Ready State = iota
	// Waiting: claimed, not given yet.
	Waiting
	// Exhausted: the pool has no free address; the claim is retried when the pool changes.
	Exhausted
)

// Answer is one pool's answer to a host's claim.
type Answer struct {
	Pool    render.PoolRef
	State   State
	Address render.PoolAddress
	// Message says why there is no address yet, in the IPAM controller's words.
	Message string
	// NotSeen is set when the claim names an IPAddress the cache does not show yet: its own
	// event usually brings the reader back, but it may have come before the claim's, so the
	// caller looks again soon.
	NotSeen bool
}

// WaitingFor answers a claim that has no address yet and no word from IPAM: just created, or being
// deleted and made again.
func WaitingFor(pool render.PoolRef, message string) Answer {
	return Answer{Pool: pool, State: Waiting, Message: message}
}

// OfIPClaim reads an ipam.metal3.io IPClaim's answer; the IPAddress it names is read through c
// (the manager's cache).
func OfIPClaim(ctx context.Context, c client.Reader, pool render.PoolRef, claim *ipamv1.IPClaim) (Answer, error) {
	if !claim.DeletionTimestamp.IsZero() {
		return WaitingFor(pool, fmt.Sprintf("IPClaim %s is being deleted; a new one is made once it is gone", claim.Name)), nil
	}
	if claim.Status.Address == nil || claim.Status.Address.Name == "" {
		return Unanswered(pool, "IPClaim", claim.Name, claim.Status.Conditions, claim.Status.ErrorMessage), nil
	}
	addr := &ipamv1.IPAddress{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: claim.Namespace, Name: claim.Status.Address.Name}, addr); err != nil {
		if apierrors.IsNotFound(err) {
			a := WaitingFor(pool, fmt.Sprintf("IPAddress %s of IPClaim %s not seen yet", claim.Status.Address.Name, claim.Name))
			a.NotSeen = true
			return a, nil
		}
		return Answer{}, fmt.Errorf("reading IPAddress %s: %w", claim.Status.Address.Name, err)
	}
	return Answer{Pool: pool, State: Ready, Address: AddressOf(addr)}, nil
}

// AddressOf is an IPAddress as the renderer reads it.
func AddressOf(a *ipamv1.IPAddress) render.PoolAddress {
	out := render.PoolAddress{Address: string(a.Spec.Address), Prefix: a.Spec.Prefix}
	if a.Spec.Gateway != nil {
		out.Gateway = string(*a.Spec.Gateway)
	}
	for _, d := range a.Spec.DNSServers {
		out.DNSServers = append(out.DNSServers, string(d))
	}
	return out
}

// Unanswered reads why a claim (of kind, named name) has no address from its Ready condition.
// A claim's Ready=False carries the IPAM controller's reason and words (pool exhausted, pool not
// found): those are worth showing. Until then the message stays the same, so that waiting costs
// the reader at most one status write.
func Unanswered(pool render.PoolRef, kind, name string, conds []metav1.Condition, errorMessage *string) Answer {
	a := WaitingFor(pool, fmt.Sprintf("%s %s has no address yet", kind, name))
	c := meta.FindStatusCondition(conds, ipamv1.ReadyCondition)
	if c == nil || c.Status != metav1.ConditionFalse {
		return a
	}
	if c.Reason == ipamv1.PoolExhaustedReason {
		a.State = Exhausted
	}
	switch {
	case c.Message != "":
		a.Message = fmt.Sprintf("%s %s: %s", kind, name, c.Message)
	case errorMessage != nil && *errorMessage != "":
		// A refusal with no words in its condition: upstream's errorMessage has them.
		a.Message = fmt.Sprintf("%s %s: %s", kind, name, *errorMessage)
	}
	return a
}

// Summary sums the pools' answers up: Ready when every address is known; else an exhausted pool
// first (someone must act), then the pools still allocating, each named in the message.
func Summary(answers []Answer) (State, string) {
	var exhausted, waiting []string
	for _, a := range answers {
		switch a.State {
		case Exhausted:
			exhausted = append(exhausted, a.Message)
		case Waiting:
			waiting = append(waiting, a.Message)
		}
	}
	switch {
	case len(exhausted) > 0:
		return Exhausted, "no free address: " + strings.Join(exhausted, "; ") + "; add addresses to the pool or release some (retried as soon as the pool changes)"
	case len(waiting) > 0:
		return Waiting, "waiting for addresses: " + strings.Join(waiting, "; ")
	}
	return Ready, ""
}

// AnyNotSeen says whether an answer waits for an IPAddress the cache has not shown yet.
func AnyNotSeen(answers []Answer) bool {
	for _, a := range answers {
		if a.NotSeen {
			return true
		}
	}
	return false
}

// Addresses is the render input: the address of every pool that gave one.
func Addresses(answers []Answer) map[render.PoolRef]render.PoolAddress {
	out := make(map[render.PoolRef]render.PoolAddress, len(answers))
	for _, a := range answers {
		if a.State == Ready {
			out[a.Pool] = a.Address
		}
	}
	return out
}
