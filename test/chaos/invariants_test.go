package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
)

// world is every object of the data path in the scenario's namespace, read straight from the
// API server.
type world struct {
	claims    []infrav1.Metal3DataClaim
	data      []infrav1.Metal3Data
	ipClaims  []ipamv1.IPClaim
	addresses []ipamv1.IPAddress
	secrets   []corev1.Secret
	pools     []ipamv1.IPPool
	template  *infrav1.Metal3DataTemplate
	// uids holds every object above by UID, to tell whether an owner reference points at an
	// object that exists.
	uids map[types.UID]bool
}

// names are the names of the objects of a resource (as the audit log names it) that exist.
func (w *world) names(resource string) map[string]bool {
	out := map[string]bool{}
	var objs []client.Object
	switch resource {
	case "metal3datas":
		for i := range w.data {
			objs = append(objs, &w.data[i])
		}
	case "ipaddresses":
		for i := range w.addresses {
			objs = append(objs, &w.addresses[i])
		}
	case "ipclaims":
		for i := range w.ipClaims {
			objs = append(objs, &w.ipClaims[i])
		}
	case "secrets":
		for i := range w.secrets {
			objs = append(objs, &w.secrets[i])
		}
	}
	for _, o := range objs {
		out[o.GetName()] = true
	}
	return out
}

func readWorld(ctx context.Context, c *cluster) (*world, error) {
	w := &world{uids: map[types.UID]bool{}}
	lists := []client.ObjectList{
		&infrav1.Metal3DataClaimList{}, &infrav1.Metal3DataList{}, &ipamv1.IPClaimList{},
		&ipamv1.IPAddressList{}, &corev1.SecretList{}, &ipamv1.IPPoolList{}, &infrav1.Metal3MachineList{},
	}
	for _, l := range lists {
		if err := c.env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return nil, err
		}
		for _, o := range items {
			w.uids[o.(client.Object).GetUID()] = true
		}
	}
	w.claims = lists[0].(*infrav1.Metal3DataClaimList).Items
	w.data = lists[1].(*infrav1.Metal3DataList).Items
	w.ipClaims = lists[2].(*ipamv1.IPClaimList).Items
	w.addresses = lists[3].(*ipamv1.IPAddressList).Items
	for _, s := range lists[4].(*corev1.SecretList).Items {
		if s.Type == infrav1.DataSecretType {
			w.secrets = append(w.secrets, s)
		}
	}
	w.pools = lists[5].(*ipamv1.IPPoolList).Items
	w.template = &infrav1.Metal3DataTemplate{}
	if err := c.env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: templateName}, w.template); err != nil {
		return nil, err
	}
	return w, nil
}

// renderedCount is how many claims are served: a ready Metal3Data, named in the claim's status.
func (w *world) renderedCount() int {
	ready := map[string]bool{}
	for _, d := range w.data {
		if d.Status.Ready && d.DeletionTimestamp.IsZero() {
			ready[d.Name] = true
		}
	}
	n := 0
	for _, cl := range w.claims {
		if cl.Status.RenderedData != nil && ready[cl.Status.RenderedData.Name] && meta.IsStatusConditionTrue(cl.Status.Conditions, infrav1.DataClaimReadyCondition) {
			n++
		}
	}
	return n
}

// claimsServed counts the claims whose status says ready: a cheap progress figure (one list of
// the claims), not the invariant check.
func claimsServed(ctx context.Context, c *cluster) (int, error) {
	claims := &infrav1.Metal3DataClaimList{}
	if err := c.env.Client.List(ctx, claims, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	n := 0
	for _, cl := range claims.Items {
		if meta.IsStatusConditionTrue(cl.Status.Conditions, infrav1.DataClaimReadyCondition) {
			n++
		}
	}
	return n, nil
}

// waitRendered waits until every one of n claims is served and returns when that was. It
// prints progress every few seconds.
func waitRendered(t *testing.T, c *cluster, n int, timeout time.Duration) time.Time {
	t.Helper()
	ctx := context.Background()
	deadline, lastPrint := time.Now().Add(timeout), time.Now()
	for {
		w, err := readWorld(ctx, c)
		if err == nil {
			done := w.renderedCount()
			if done == n {
				return time.Now()
			}
			if time.Since(lastPrint) > 10*time.Second {
				fmt.Printf("    %d of %d machines rendered (%d Metal3Data, %d IPAddresses)\n", done, n, len(w.data), len(w.addresses))
				lastPrint = time.Now()
			}
			if time.Now().After(deadline) {
				t.Fatalf("after %s only %d of %d machines are rendered", timeout, done, n)
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("after %s the API server still answers: %v", timeout, err)
		}
		time.Sleep(time.Second)
	}
}

// checkInvariants is the promise every scenario ends with, once the run has converged with
// machines claims:
//   - every claim is served by exactly one ready Metal3Data, which its status names;
//   - no index is given twice, and no address is given twice within a pool;
//   - no Metal3Data, IPClaim, IPAddress or Secret is left without the owner that controls it;
//   - each machine was rendered once: each Metal3Data, IPAddress and Secret created once in the
//     whole run (the API server's audit log), no Secret ever updated or deleted, and each
//     Secret holds the addresses its Metal3Data was given;
//   - the pools' and the template's status agree with the objects.
//
// With machines 0 it checks that nothing is left: no Metal3Data, IPClaim, IPAddress or data
// Secret, the pools' allocations and the template's indexes empty.
func checkInvariants(t *testing.T, c *cluster, machines int) {
	t.Helper()
	ctx := context.Background()
	w, err := readWorld(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	if len(w.claims) != machines {
		add("%d Metal3DataClaims, want %d", len(w.claims), machines)
	}
	checkIndexes(w, add)
	checkAddresses(w, add)
	checkSecrets(w, add)
	if machines > 0 {
		checkAudit(c, w, machines, add)
	}
	if len(problems) == 0 {
		// The statuses are written after the objects (the pool's at most every few seconds
		// while claims stream in): give them time.
		problems = waitStatuses(ctx, c)
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		if len(problems) > 30 {
			problems = append(problems[:30], fmt.Sprintf("... and %d more", len(problems)-30))
		}
		t.Fatalf("invariants broken:\n  %s", strings.Join(problems, "\n  "))
	}
}

// controlledByLive says whether o's controlling owner exists.
func (w *world) controlledByLive(o metav1.Object) bool {
	ref := metav1.GetControllerOf(o)
	return ref != nil && w.uids[ref.UID]
}

func checkIndexes(w *world, add func(string, ...any)) {
	claimUIDs := map[types.UID]*infrav1.Metal3DataClaim{}
	for i := range w.claims {
		claimUIDs[w.claims[i].UID] = &w.claims[i]
	}
	dataOf := map[string][]string{}
	indexes := map[int32][]string{}
	for _, d := range w.data {
		if !w.controlledByLive(&d) {
			add("Metal3Data %s has no live controlling owner (%v)", d.Name, d.OwnerReferences)
			continue
		}
		claim := claimUIDs[metav1.GetControllerOf(&d).UID]
		if claim == nil {
			add("Metal3Data %s is controlled by something other than a claim", d.Name)
			continue
		}
		dataOf[claim.Name] = append(dataOf[claim.Name], d.Name)
		indexes[ptr.Deref(d.Spec.Index, 0)] = append(indexes[ptr.Deref(d.Spec.Index, 0)], d.Name)
		if d.Name != infrav1.DataName(templateName, ptr.Deref(d.Spec.Index, 0)) {
			add("Metal3Data %s holds index %d under another name", d.Name, ptr.Deref(d.Spec.Index, 0))
		}
		if !d.Status.Ready {
			add("Metal3Data %s is not ready", d.Name)
		}
	}
	for index, names := range indexes {
		if len(names) > 1 {
			add("index %d given %d times: %v", index, len(names), names)
		}
	}
	for _, cl := range w.claims {
		got := dataOf[cl.Name]
		switch {
		case len(got) != 1:
			add("claim %s is served by %d Metal3Data: %v", cl.Name, len(got), got)
		case cl.Status.RenderedData == nil || cl.Status.RenderedData.Name != got[0]:
			add("claim %s's status names %v, not its Metal3Data %s", cl.Name, cl.Status.RenderedData, got[0])
		}
	}
}

func checkAddresses(w *world, add func(string, ...any)) {
	given := map[string][]string{} // pool/address -> IPAddress names
	byName := map[string]*ipamv1.IPAddress{}
	for i := range w.addresses {
		a := &w.addresses[i]
		byName[a.Name] = a
		if !w.controlledByLive(a) {
			add("IPAddress %s (%s) has no live controlling owner (%v)", a.Name, a.Spec.Address, a.OwnerReferences)
		}
		key := a.Spec.Pool.Name + "/" + string(a.Spec.Address)
		given[key] = append(given[key], a.Name)
	}
	for key, names := range given {
		if len(names) > 1 {
			add("address %s given %d times: %v", key, len(names), names)
		}
	}
	perData := map[types.UID]int{}
	for _, cl := range w.ipClaims {
		if !w.controlledByLive(&cl) {
			add("IPClaim %s has no live controlling owner (%v)", cl.Name, cl.OwnerReferences)
			continue
		}
		perData[metav1.GetControllerOf(&cl).UID]++
		if cl.Status.Address == nil {
			add("IPClaim %s has no address", cl.Name)
			continue
		}
		a := byName[cl.Status.Address.Name]
		if a == nil || a.Spec.Claim.Name != cl.Name {
			add("IPClaim %s names IPAddress %s, which is not its", cl.Name, cl.Status.Address.Name)
		}
	}
	for _, d := range w.data {
		if perData[d.UID] != len(pools) {
			add("Metal3Data %s has %d IPClaims, want %d", d.Name, perData[d.UID], len(pools))
		}
	}
}

// checkSecrets checks that each Metal3Data's Secrets exist, are its own, and hold the
// addresses it was given.
func checkSecrets(w *world, add func(string, ...any)) {
	secrets := map[string]*corev1.Secret{}
	for i := range w.secrets {
		s := &w.secrets[i]
		secrets[s.Name] = s
		if !w.controlledByLive(s) {
			add("Secret %s has no live controlling owner (%v)", s.Name, s.OwnerReferences)
		}
	}
	addressOf := map[string]string{} // IPClaim name -> address
	for _, a := range w.addresses {
		addressOf[a.Spec.Claim.Name] = string(a.Spec.Address)
	}
	claimsOf := map[types.UID][]string{}
	for _, cl := range w.ipClaims {
		if ref := metav1.GetControllerOf(&cl); ref != nil {
			claimsOf[ref.UID] = append(claimsOf[ref.UID], cl.Name)
		}
	}
	for _, d := range w.data {
		for _, ref := range []*corev1.SecretReference{d.Spec.MetaData, d.Spec.NetworkData} {
			if ref == nil {
				add("Metal3Data %s names no Secret", d.Name)
				continue
			}
			s := secrets[ref.Name]
			if s == nil {
				add("Secret %s of Metal3Data %s is missing", ref.Name, d.Name)
				continue
			}
			if ctl := metav1.GetControllerOf(s); ctl == nil || ctl.UID != d.UID {
				add("Secret %s is not controlled by its Metal3Data %s", s.Name, d.Name)
			}
			var content string
			for _, v := range s.Data {
				content += string(v)
			}
			for _, claim := range claimsOf[d.UID] {
				if addr := addressOf[claim]; addr == "" || !strings.Contains(content, addr) {
					add("Secret %s does not hold address %q of its IPClaim %s", s.Name, addr, claim)
				}
			}
		}
	}
}

// checkAudit counts, in the API server's audit log, the writes that made the objects: each
// created once, no Secret rewritten or deleted.
func checkAudit(c *cluster, w *world, machines int, add func(string, ...any)) {
	log, bad, err := readAuditAll(c.auditLog)
	if err != nil {
		add("%v", err)
		return
	}
	for _, s := range w.secrets {
		if !log.names("secrets", "create")[s.Name] {
			add("Secret %s exists but no create of it is in the audit log; its refused writes: %v", s.Name, bad["secrets"][s.Name])
		}
	}
	for _, r := range []struct {
		resource string
		want     int
	}{{"metal3datas", machines}, {"ipaddresses", machines * len(pools)}, {"ipclaims", machines * len(pools)}, {"secrets", machines * 2}} {
		// Objects named once each: a Metal3Data created for a claim that already had one, or
		// an address or Secret made again after a delete, would add names or counts here. A
		// create whose outcome the log cannot tell (the manager killed mid-request) of an
		// object that does not exist and was never deleted was not stored.
		created := log.names(r.resource, "create")
		existing := w.names(r.resource)
		deletedNames := log.names(r.resource, "delete")
		var cut []string
		for name := range created {
			if log[r.resource]["create"][name] == 0 && !existing[name] && !deletedNames[name] {
				delete(created, name)
				cut = append(cut, name)
			}
		}
		if got := len(created); got != r.want {
			add("%d %s created in the run, want %d (one per machine and pool); creates cut by a kill and never stored: %v", got, r.resource, r.want, cut)
		}
		if twice := log.more(r.resource, "create"); len(twice) > 0 {
			add("%s created more than once: %v", r.resource, twice)
		}
		if deleted := log.names(r.resource, "delete"); len(deleted) != 0 {
			add("%d %s deleted during a scale-up: %v", len(deleted), r.resource, deleted)
		}
	}
	for _, verb := range []string{"update", "patch"} {
		if rewritten := log.names("secrets", verb); len(rewritten) != 0 {
			add("Secrets rewritten (%s): %v", verb, rewritten)
		}
	}
}

// waitStatuses waits for the pools' allocations and the template's indexes to match the
// objects, and returns what still differs after a minute.
func waitStatuses(ctx context.Context, c *cluster) []string {
	deadline := time.Now().Add(time.Minute)
	for {
		w, err := readWorld(ctx, c)
		var problems []string
		if err != nil {
			problems = []string{err.Error()}
		} else {
			problems = statusProblems(w)
		}
		if len(problems) == 0 || time.Now().After(deadline) {
			return problems
		}
		time.Sleep(time.Second)
	}
}

func statusProblems(w *world) []string {
	var problems []string
	want := map[string]map[string]ipamv1.IPAddressStr{}
	for _, a := range w.addresses {
		if want[a.Spec.Pool.Name] == nil {
			want[a.Spec.Pool.Name] = map[string]ipamv1.IPAddressStr{}
		}
		want[a.Spec.Pool.Name][a.Spec.Claim.Name] = a.Spec.Address
	}
	for _, p := range w.pools {
		got := p.Status.Allocations
		if len(got) == 0 && len(want[p.Name]) == 0 {
			continue
		}
		if !maps.Equal(got, want[p.Name]) {
			problems = append(problems, fmt.Sprintf("IPPool %s's status lists %d allocations, the pool has %d IPAddresses (or they differ)", p.Name, len(got), len(want[p.Name])))
		}
		if used := p.Status.Used; used != nil && int(*used) != len(want[p.Name]) {
			problems = append(problems, fmt.Sprintf("IPPool %s's status.used is %d, want %d", p.Name, *used, len(want[p.Name])))
		}
	}
	indexOf := map[string]int32{}
	for _, d := range w.data {
		indexOf[d.Spec.Claim.Name] = ptr.Deref(d.Spec.Index, 0)
	}
	got := map[string]int32{}
	for _, e := range w.template.Status.Indexes {
		got[e.Name] = e.Index
	}
	if !maps.Equal(got, indexOf) {
		problems = append(problems, fmt.Sprintf("Metal3DataTemplate's status.indexes lists %d claims, %d hold an index (or they differ)", len(got), len(indexOf)))
	}
	return problems
}
