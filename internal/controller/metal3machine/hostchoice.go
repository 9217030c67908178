package metal3machine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/cachelag"
	"github.com/metalwire/metalwire/pkg/hostmatch"
)

// hostChoice is the assignment of waiting machines to free hosts that every reconcile of the
// manager shares, one per namespace: a maximum matching (pkg/hostmatch), so that a machine that
// could take several hosts does not take the only one another machine accepts.
//
// It only guides the choice. The claim itself is still the host patch with the host's
// resourceVersion (claimHost): two machines never take one host, whatever this memory says, and
// a restart loses nothing but the assignment, which the next reconciles rebuild.
//
// The zero value is ready to use.
type hostChoice struct {
	mu   sync.Mutex
	byNS map[string]*nsChoice
}

// Machines created together are matched together: a machine claims only once no new machine
// has joined the namespace's waiting machines for settleAfterArrival, or it has waited
// maxSettle since its creation. A host claimed is never taken back, so a claim made while
// machines still arrive could take the only host of one that comes a moment later.
const (
	settleAfterArrival = time.Second
	maxSettle          = 30 * time.Second
)

// syncEvery is how stale the matching's view of the waiting machines may be when a machine it
// already holds asks whether machines still arrive (settle): in a scale-up each of a thousand
// machines asks about once a second until they settle, and reading every waiting machine for
// each ask was a sixth of the manager's CPU. A machine new to the matching always reads them,
// and a machine about to claim (assign) always does: a claim never misses an arrival.
const syncEvery = 200 * time.Millisecond

type nsChoice struct {
	// lastArrival is when a machine last joined the matching.
	lastArrival time.Time
	matcher     *hostmatch.Matcher
	// Machines and hosts this manager claimed, until the cache shows the claim: without them a
	// lagging cache would offer the host again, or count the machine as still waiting. Once the
	// cache shows a claimed host in a later version it is trusted again (the host may well be
	// free by then, released by the machine that claimed it).
	claimedMachines map[string]string // machine -> the host it claimed
	claimedHosts    cachelag.Writes[struct{}]
	// lastSync is when the waiting machines were last read (sync).
	lastSync time.Time
}

// lagging says whether the cache's copy of h predates this manager's claim of it.
func (n *nsChoice) lagging(h *bmov1.BareMetalHost) bool {
	_, unseen := n.claimedHosts.Unseen(h.Name, h.ResourceVersion)
	return unseen
}

func (c *hostChoice) namespace(ns string) *nsChoice {
	if c.byNS == nil {
		c.byNS = map[string]*nsChoice{}
	}
	n, ok := c.byNS[ns]
	if !ok {
		n = &nsChoice{matcher: hostmatch.New(), claimedMachines: map[string]string{}}
		c.byNS[ns] = n
	}
	return n
}

// assign returns the host of order (the machine's claimable hosts, most preferred first) that
// the shared matching gives the machine, and pins it there until done is called. nil means every
// host of order is needed by another waiting machine that has no other choice.
func (c *hostChoice) assign(ctx context.Context, cl client.Reader, m3m *infrav1.Metal3Machine, order []*bmov1.BareMetalHost) (*bmov1.BareMetalHost, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.namespace(m3m.Namespace)
	if err := n.sync(ctx, cl, m3m.Namespace); err != nil {
		return nil, err
	}
	if err := n.arriving(m3m); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(order))
	for _, h := range order {
		if !n.lagging(h) {
			names = append(names, h.Name)
		}
	}
	n.matcher.Set(m3m.Name, names)
	chosen := n.matcher.Assign(m3m.Name)
	if chosen == "" {
		return nil, nil
	}
	i := slices.IndexFunc(order, func(h *bmov1.BareMetalHost) bool { return h.Name == chosen })
	if i < 0 {
		return nil, nil
	}
	n.matcher.Pin(m3m.Name)
	return order[i], nil
}

// settle returns errCacheBehind while the cache may not show the machine's own claim yet
// (unseenClaim), or while machines still arrive in its namespace: a machine claims only once
// they settle. Otherwise it brings the machine into the matching, reading the waiting machines
// at most every syncEvery for a machine the matching holds. It reads nothing past the cache.
func (c *hostChoice) settle(ctx context.Context, cl client.Reader, m3m *infrav1.Metal3Machine) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.namespace(m3m.Namespace)
	switch unseen, err := n.unseenClaim(ctx, cl, m3m); {
	case err != nil:
		return err
	case unseen:
		return fmt.Errorf("%w: the host claimed for Metal3Machine %s is not in the cache yet", errCacheBehind, m3m.Name)
	}
	if !n.matcher.Has(m3m.Name) || time.Since(n.lastSync) >= syncEvery {
		if err := n.sync(ctx, cl, m3m.Namespace); err != nil {
			return err
		}
	}
	return n.arriving(m3m)
}

// arriving returns errCacheBehind while machines still join the matching, unless m3m has waited
// maxSettle already.
func (n *nsChoice) arriving(m3m *infrav1.Metal3Machine) error {
	if quiet := time.Since(n.lastArrival); quiet < settleAfterArrival && time.Since(m3m.CreationTimestamp.Time) < maxSettle {
		return fmt.Errorf("%w: machines still arriving in namespace %s, claiming once they settle", errCacheBehind, m3m.Namespace)
	}
	return nil
}

// unseenClaim says whether this manager claimed a host for the machine that the cache does not
// show yet. A claim is two writes, the host's consumerRef and then the machine's annotation; if
// the second fails, the machine is still waiting on its next reconcile, the cache may still show
// its host free, and without this it would claim a second host. Once the cache shows the host
// in a later version the record goes: the machine then finds its host among those naming it, or
// the claim was undone and it claims again.
func (n *nsChoice) unseenClaim(ctx context.Context, cl client.Reader, m3m *infrav1.Metal3Machine) (bool, error) {
	name, ok := n.claimedMachines[m3m.Name]
	if !ok {
		return false, nil
	}
	host := &bmov1.BareMetalHost{}
	switch err := cl.Get(ctx, client.ObjectKey{Namespace: m3m.Namespace, Name: name}, host); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return false, err
	case n.lagging(host):
		return true, nil
	}
	delete(n.claimedMachines, m3m.Name)
	return false, nil
}

// claimOutcome is how a claim of an assigned host ended.
type claimOutcome int

const (
	claimMade   claimOutcome = iota // the host is the machine's
	claimLost                       // someone else has the host: it is no longer free
	claimFailed                     // the claim failed for another reason: try again later
)

// done records how the machine's claim of host (as it was before the claim) ended.
func (c *hostChoice) done(m3m *infrav1.Metal3Machine, host *bmov1.BareMetalHost, outcome claimOutcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.namespace(m3m.Namespace)
	switch outcome {
	case claimMade:
		n.matcher.Claimed(m3m.Name, host.Name)
		n.claimedMachines[m3m.Name] = host.Name
		n.claimedHosts.Wrote(host.Name, host.ResourceVersion, struct{}{})
	case claimLost:
		n.matcher.Unpin(m3m.Name)
		n.matcher.RemoveHost(host.Name)
	default:
		n.matcher.Unpin(m3m.Name)
	}
}

// sync brings the matching's machines in line with those the cache says wait for a host: gone
// ones are dropped, new ones added with the hosts their selector accepts, in their own
// preference order (their failure domain from spec; their own reconcile refines the list with
// what only it reads: the Machine's failure domain, a ClusterNetwork, node reuse).
func (n *nsChoice) sync(ctx context.Context, cl client.Reader, ns string) error {
	waiting := &infrav1.Metal3MachineList{}
	if err := cl.List(ctx, waiting, client.InNamespace(ns), client.MatchingFields{waitingForHostIndex: "true"}, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("listing the Metal3Machines waiting for a host in namespace %s: %w", ns, err)
	}
	present := sets.New[string]()
	clusters := map[string]*clusterv1.Cluster{}
	stillClaimed := map[string]string{}
	var added []*infrav1.Metal3Machine
	for i := range waiting.Items {
		m := &waiting.Items[i]
		if host, ok := n.claimedMachines[m.Name]; ok {
			stillClaimed[m.Name] = host // the cache has not seen the claim yet
			continue
		}
		if !n.matcher.Has(m.Name) {
			ready, err := readyToClaim(ctx, cl, m, clusters)
			if err != nil {
				return err
			}
			if !ready {
				continue
			}
			added = append(added, m)
		}
		present.Insert(m.Name)
	}
	n.lastSync = time.Now()
	n.claimedMachines = stillClaimed
	for _, name := range n.matcher.Machines() {
		if !present.Has(name) {
			n.matcher.Remove(name)
		}
	}
	if len(added) == 0 {
		return nil
	}
	free := &bmov1.BareMetalHostList{}
	if err := cl.List(ctx, free, client.InNamespace(ns), client.MatchingFields{hostConsumerIndex: noConsumer}, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("listing the free BareMetalHosts of namespace %s: %w", ns, err)
	}
	hosts := make([]bmov1.BareMetalHost, 0, len(free.Items))
	for i := range free.Items {
		h := free.Items[i]
		if n.lagging(&h) {
			continue
		}
		if _, reserved := h.Labels[NodeReuseLabel]; reserved {
			continue // only for machines of the owner it names
		}
		hosts = append(hosts, h)
	}
	for _, m := range added {
		sel, err := m.Spec.HostSelector.Selector()
		if err != nil {
			continue // the machine's own reconcile reports it
		}
		order := preferred(m, m.Spec.FailureDomain, hosts, sel, refusedHosts(m.Annotations))
		names := make([]string, len(order))
		for i, h := range order {
			names[i] = h.Name
		}
		n.matcher.Set(m.Name, names)
	}
	// Every known machine holds a host in the matching before any claims one: else the machine
	// reconciling now would take a host another, not yet assigned, has no other choice for.
	n.lastArrival = time.Now()
	slices.SortFunc(added, func(a, b *infrav1.Metal3Machine) int { return strings.Compare(a.Name, b.Name) })
	for _, m := range added {
		n.matcher.Assign(m.Name)
	}
	return nil
}

// readyToClaim says whether a machine that waits for a host would claim one if it reconciled
// now: its Machine has bootstrap data (or it has spec.userData), its Cluster's infrastructure is
// provisioned, and neither is paused. Machines that are not take no place in the matching, so
// that they hold no host another machine could claim now. clusters caches Clusters by name.
func readyToClaim(ctx context.Context, cl client.Reader, m3m *infrav1.Metal3Machine, clusters map[string]*clusterv1.Cluster) (bool, error) {
	machine, err := ownerMachine(ctx, cl, m3m)
	if err != nil || machine == nil || userDataRef(m3m, machine) == nil {
		return false, err
	}
	name := machine.Labels[clusterv1.ClusterNameLabel]
	cluster, seen := clusters[name]
	if !seen {
		c := &clusterv1.Cluster{}
		switch err := cl.Get(ctx, client.ObjectKey{Namespace: m3m.Namespace, Name: name}, c); {
		case apierrors.IsNotFound(err):
			c = nil
		case err != nil:
			return false, err
		}
		clusters[name], cluster = c, c
	}
	return cluster != nil && !annotations.IsPaused(cluster, m3m) &&
		ptr.Deref(cluster.Status.Initialization.InfrastructureProvisioned, false), nil
}

// ownerMachine reads the Machine that owns m3m from the cache; nil if it has none or it is gone.
func ownerMachine(ctx context.Context, cl client.Reader, m3m *infrav1.Metal3Machine) (*clusterv1.Machine, error) {
	for _, ref := range m3m.OwnerReferences {
		if ref.Kind != "Machine" {
			continue
		}
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != clusterv1.GroupVersion.Group {
			continue
		}
		machine := &clusterv1.Machine{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: m3m.Namespace, Name: ref.Name}, machine); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return machine, nil
	}
	return nil, nil
}
