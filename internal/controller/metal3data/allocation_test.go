package metal3data_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// indexesOf returns claim name -> index from the Metal3Data of a template, failing on a claim
// served twice or an index given twice.
func indexesOf(g Gomega, ns, template string) map[string]int32 {
	list := &infrav1.Metal3DataList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	out := map[string]int32{}
	seen := map[int32]string{}
	for _, d := range list.Items {
		if d.Spec.Template.Name != template || !d.DeletionTimestamp.IsZero() {
			continue
		}
		g.Expect(out).NotTo(HaveKey(d.Spec.Claim.Name), "claim %s has two Metal3Data", d.Spec.Claim.Name)
		g.Expect(seen).NotTo(HaveKey(d.Spec.Index), "index %d given to %s and %s", d.Spec.Index, seen[ptr.Deref(d.Spec.Index, 0)], d.Spec.Claim.Name)
		g.Expect(d.Name).To(Equal(infrav1.DataName(template, ptr.Deref(d.Spec.Index, 0))))
		out[d.Spec.Claim.Name] = ptr.Deref(d.Spec.Index, 0)
		seen[ptr.Deref(d.Spec.Index, 0)] = d.Spec.Claim.Name
	}
	return out
}

func sortedIndexes(m map[string]int32) []int32 {
	out := make([]int32, 0, len(m))
	for _, i := range m {
		out = append(out, i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

func upTo(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// createClaims creates n machines with claims at once, from 8 goroutines, as a MachineDeployment
// scaling up would.
func createClaims(t *testing.T, ns, template, prefix string, from, n int) {
	t.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := from; i < from+n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			machine(t, ns, fmt.Sprintf("%s-%d", prefix, i), template, machineOpts{})
		}()
	}
	wg.Wait()
}

// TestIndexesUniqueAndGapsReused: 50 claims at once get indexes 0..49, each exactly once; after
// 5 are deleted, 5 new claims take exactly the 5 freed indexes.
func TestIndexesUniqueAndGapsReused(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})
	template(t, ns, "tmpl", infrav1.Metal3DataTemplateSpec{ClusterName: "cluster-a"})

	createClaims(t, ns, "tmpl", "m", 0, 50)
	var first map[string]int32
	NewWithT(t).Eventually(func(g Gomega) {
		first = indexesOf(g, ns, "tmpl")
		g.Expect(sortedIndexes(first)).To(Equal(upTo(50)))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// The template's status lists every claim once, by index.
	NewWithT(t).Eventually(func(g Gomega) {
		tmpl := &infrav1.Metal3DataTemplate{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "tmpl"}, tmpl)).To(Succeed())
		g.Expect(tmpl.Status.Indexes).To(HaveLen(50))
		for _, e := range tmpl.Status.Indexes {
			g.Expect(first).To(HaveKeyWithValue(e.Name, e.Index))
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	freed := map[int32]bool{}
	for _, name := range []string{"m-3", "m-11", "m-20", "m-34", "m-49"} {
		freed[first[name]] = true
		c := &infrav1.Metal3DataClaim{}
		NewWithT(t).Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
		NewWithT(t).Expect(env.Client.Delete(context.Background(), c)).To(Succeed())
	}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(indexesOf(g, ns, "tmpl")).To(HaveLen(45))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	createClaims(t, ns, "tmpl", "n", 0, 5)
	NewWithT(t).Eventually(func(g Gomega) {
		now := indexesOf(g, ns, "tmpl")
		g.Expect(sortedIndexes(now)).To(Equal(upTo(50)), "the new claims fill the gaps rather than grow the top")
		for i := range 5 {
			g.Expect(freed).To(HaveKey(now[fmt.Sprintf("n-%d", i)]))
		}
		for name, index := range now {
			if _, kept := first[name]; kept {
				g.Expect(index).To(Equal(first[name]), "claim %s kept its index", name)
			}
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// TestIndexesRebuiltAfterRestart: a manager restarted with the template's status cleared rebuilds
// the indexes from the Metal3Data names, serves new claims without a duplicate, and writes the
// status again.
func TestIndexesRebuiltAfterRestart(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	mgr := startManager(t, ns, managerOptions{})
	template(t, ns, "tmpl", infrav1.Metal3DataTemplateSpec{ClusterName: "cluster-a"})
	createClaims(t, ns, "tmpl", "m", 0, 10)
	var before map[string]int32
	NewWithT(t).Eventually(func(g Gomega) {
		before = indexesOf(g, ns, "tmpl")
		g.Expect(before).To(HaveLen(10))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	mgr.stop()

	// Free index 4 while no controller runs: the Metal3Data goes by hand (its finalizer too).
	d := getData(NewWithT(t), ns, infrav1.DataName("tmpl", 4))
	freedClaim := d.Spec.Claim.Name
	for _, o := range []client.Object{d, getClaim(NewWithT(t), ns, freedClaim)} {
		o.SetFinalizers(nil)
		NewWithT(t).Expect(env.Client.Update(ctx, o)).To(Succeed())
		NewWithT(t).Expect(env.Client.Delete(ctx, o)).To(Succeed())
	}
	tmpl := &infrav1.Metal3DataTemplate{}
	NewWithT(t).Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tmpl"}, tmpl)).To(Succeed())
	tmpl.Status.Indexes = nil
	NewWithT(t).Expect(env.Client.Status().Update(ctx, tmpl)).To(Succeed())

	createClaims(t, ns, "tmpl", "late", 0, 3)
	startManager(t, ns, managerOptions{})
	NewWithT(t).Eventually(func(g Gomega) {
		now := indexesOf(g, ns, "tmpl")
		g.Expect(sortedIndexes(now)).To(Equal(upTo(12)))
		for name, index := range before {
			if name != freedClaim {
				g.Expect(now).To(HaveKeyWithValue(name, index))
			}
		}
		// One late claim takes the freed index 4; the others go to the top.
		g.Expect([]int32{now["late-0"], now["late-1"], now["late-2"]}).To(ContainElement(int32(4)))

		tmpl := &infrav1.Metal3DataTemplate{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tmpl"}, tmpl)).To(Succeed())
		g.Expect(tmpl.Status.Indexes).To(HaveLen(12))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// TestClaimsDeletedRightAfterCreationLeaveNothing: claims deleted as soon as they are created —
// before or after their index is given, with or without their finalizer — leave no Metal3Data.
func TestClaimsDeletedRightAfterCreationLeaveNothing(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{})
	template(t, ns, "tmpl", infrav1.Metal3DataTemplateSpec{ClusterName: "cluster-a"})

	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := machine(t, ns, fmt.Sprintf("m-%d", i), "tmpl", machineOpts{})
			if err := env.Client.Delete(ctx, c); err != nil {
				t.Errorf("deleting claim %s: %v", c.Name, err)
			}
		}()
	}
	wg.Wait()
	NewWithT(t).Eventually(func(g Gomega) {
		list := &infrav1.Metal3DataList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(BeEmpty())
		claims := &infrav1.Metal3DataClaimList{}
		g.Expect(env.Client.List(ctx, claims, client.InNamespace(ns))).To(Succeed())
		g.Expect(claims.Items).To(BeEmpty())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
