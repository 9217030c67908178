package metal3datatemplate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/dataindex"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
)

// createWorkers bounds the Metal3Data created at once for one template: enough to hide the
// API server's latency when a thousand machines scale up together, few enough not to crowd out
// other clients.
const createWorkers = 8

// collisionRecheck is how soon to try again when every free index the cache showed was taken.
const collisionRecheck = time.Second

// reconcileNormal gives every waiting claim an index and creates its Metal3Data; status says
// when the indexes last changed.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *skeleton.Scope[*infrav1.Metal3DataTemplate]) (ctrl.Result, error) {
	tmpl := s.Object
	data, err := r.dataOf(ctx, tmpl)
	if err != nil {
		return ctrl.Result{}, err
	}
	// allocate replaces the list, never changes it in place (copyTemplate shares it with the
	// cache): the list as read is kept as it is, to compare with.
	before := tmpl.Status.Indexes
	defer func() {
		if !slices.Equal(before, tmpl.Status.Indexes) {
			now := metav1.Now()
			tmpl.Status.LastUpdated = &now
		}
	}()
	return r.allocate(ctx, tmpl, data)
}

// allocate gives every waiting claim an index and creates its Metal3Data.
func (r *Reconciler) allocate(ctx context.Context, tmpl *infrav1.Metal3DataTemplate, data []infrav1.Metal3Data) (ctrl.Result, error) {
	claimList := &infrav1.Metal3DataClaimList{}
	if err := r.Client.List(ctx, claimList, client.InNamespace(tmpl.Namespace),
		client.MatchingFields{dataindex.ClaimByTemplate: tmpl.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Metal3DataClaims of Metal3DataTemplate %s: %w", tmpl.Name, err)
	}
	claims := make(map[string]*infrav1.Metal3DataClaim, len(claimList.Items))
	for i := range claimList.Items {
		claims[claimList.Items[i].Name] = &claimList.Items[i]
	}

	if err := r.deleteOrphans(ctx, data, claims); err != nil {
		return ctrl.Result{}, err
	}

	// Who holds what: the Metal3Data in the cache, plus those created here that the cache has
	// not shown yet.
	var holders []holder
	served := map[string]bool{}
	names := make([]string, 0, len(data))
	for i := range data {
		d := &data[i]
		names = append(names, d.Name)
		if index, ok := infrav1.DataIndexFromName(tmpl.Name, d.Name); ok {
			holders = append(holders, holder{Index: index, Claim: d.Spec.Claim.Name})
		}
		served[d.Spec.Claim.Name] = true
	}
	key := client.ObjectKeyFromObject(tmpl)
	for _, h := range r.unseen(key, data, claims) {
		holders = append(holders, h)
		names = append(names, infrav1.DataName(tmpl.Name, h.Index))
		served[h.Claim] = true
	}
	taken := used(tmpl.Name, names)

	// A claim gets an index at once, without waiting for the claim controller's finalizer: a
	// claim deleted before it has one leaves an orphan that deleteOrphans removes.
	var queue []waiting
	for name, c := range claims {
		// Under --watch-filter a claim of another manager is left alone, even on our template.
		if served[name] || !c.DeletionTimestamp.IsZero() || !watchfilter.Matches(c, r.WatchFilter) {
			continue
		}
		queue = append(queue, waiting{Name: name, Created: c.CreationTimestamp.Time})
	}

	var errs []error
	for round := 0; len(queue) > 0 && round < maxCreateRounds; round++ {
		plan := assign(queue, taken)
		results := r.createAll(ctx, tmpl, claims, plan)
		var retry []waiting
		for _, w := range queue {
			index := plan[w.Name]
			taken[index] = true
			switch err := results[w.Name]; {
			case err == nil:
				holders = append(holders, holder{Index: index, Claim: w.Name})
				r.remember(key, holder{Index: index, Claim: w.Name})
			case apierrors.IsAlreadyExists(err):
				// Someone holds the name the cache did not show: take the next free index.
				retry = append(retry, w)
			default:
				errs = append(errs, fmt.Errorf("creating Metal3Data %s for claim %s: %w", infrav1.DataName(tmpl.Name, index), w.Name, err))
			}
		}
		queue = retry
	}
	tmpl.Status.Indexes = statusIndexes(holders)
	setCondition(tmpl, metav1.ConditionTrue, ReadyReason, "")
	if len(queue) > 0 {
		// Still colliding after several rounds: the cache is far behind; come back when it is
		// not (every Metal3Data created wakes this template).
		return ctrl.Result{RequeueAfter: collisionRecheck}, errors.Join(errs...)
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// createAll creates the planned Metal3Data, a few at a time, and returns each claim's outcome.
func (r *Reconciler) createAll(ctx context.Context, tmpl *infrav1.Metal3DataTemplate, claims map[string]*infrav1.Metal3DataClaim, plan map[string]int32) map[string]error {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		results = make(map[string]error, len(plan))
		sem     = make(chan struct{}, createWorkers)
	)
	for name, index := range plan {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := r.Client.Create(ctx, newData(tmpl, claims[name], index))
			mu.Lock()
			results[name] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	return results
}

// newData is the Metal3Data of a claim: named <template>-<index>, controlled by the claim and
// also owned by its Metal3Machine (as CAPM3 does, so tools that walk owners from the machine
// find it), created with the data controller's finalizer so that its IPClaims and Secrets are
// always cleaned up.
func newData(tmpl *infrav1.Metal3DataTemplate, claim *infrav1.Metal3DataClaim, index int32) *infrav1.Metal3Data {
	yes, no := true, false
	owners := []metav1.OwnerReference{{
		APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3DataClaim",
		Name: claim.Name, UID: claim.UID, Controller: &yes, BlockOwnerDeletion: &yes,
	}}
	machine := ""
	for _, ref := range claim.OwnerReferences {
		if ref.Kind == "Metal3Machine" && ref.APIVersion == infrav1.GroupVersion.String() {
			owners = append(owners, metav1.OwnerReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID, Controller: &no})
			machine = ref.Name
		}
	}
	d := &infrav1.Metal3Data{
		ObjectMeta: metav1.ObjectMeta{
			Name:            infrav1.DataName(tmpl.Name, index),
			Namespace:       tmpl.Namespace,
			OwnerReferences: owners,
			Finalizers:      []string{infrav1.DataFinalizer},
		},
		Spec: infrav1.Metal3DataSpec{
			Index:    ptr.To(index),
			Claim:    corev1.ObjectReference{Name: claim.Name, Namespace: claim.Namespace},
			Template: corev1.ObjectReference{Name: tmpl.Name, Namespace: tmpl.Namespace},
		},
	}
	// The Secrets' names are known now: naming them at creation spares the data controller a
	// second write of the Metal3Data (besides its status) when it renders them. They exist
	// once status.ready is true.
	md, nd := infrav1.DataSecretNames(d, machine)
	if machine != "" && tmpl.Spec.MetaData != nil {
		d.Spec.MetaData = &corev1.SecretReference{Name: md, Namespace: tmpl.Namespace}
	}
	if machine != "" && tmpl.Spec.NetworkData != nil {
		d.Spec.NetworkData = &corev1.SecretReference{Name: nd, Namespace: tmpl.Namespace}
	}
	if cluster := clusterOf(tmpl, claim); cluster != "" {
		d.Labels = map[string]string{clusterv1.ClusterNameLabel: cluster}
	}
	d.Labels = watchfilter.Carry(d.Labels, claim)
	return d
}

func clusterOf(tmpl *infrav1.Metal3DataTemplate, claim *infrav1.Metal3DataClaim) string {
	for _, name := range []string{claim.Labels[clusterv1.ClusterNameLabel], tmpl.Labels[clusterv1.ClusterNameLabel], tmpl.Spec.ClusterName} {
		if name != "" {
			return name
		}
	}
	return ""
}

// createdData is a Metal3Data this process created, for the template it was created from.
type createdData struct {
	template types.NamespacedName
	holder
}

// unseen returns the Metal3Data this process created for the template that the cache does not
// list yet, and forgets those it now lists or whose claim is gone.
func (r *Reconciler) unseen(tmpl types.NamespacedName, cached []infrav1.Metal3Data, claims map[string]*infrav1.Metal3DataClaim) []holder {
	var out []holder
	var versions map[string]string // cached Metal3Data by name: resourceVersion
	for key, c := range r.created.All() {
		if c.template != tmpl {
			continue
		}
		if _, ok := claims[c.Claim]; !ok {
			r.created.Forget(key)
			continue
		}
		if versions == nil {
			versions = make(map[string]string, len(cached))
			for i := range cached {
				versions[cached[i].Name] = cached[i].ResourceVersion
			}
		}
		if _, ok := r.created.Unseen(key, versions[infrav1.DataName(tmpl.Name, c.Index)]); ok {
			out = append(out, c.holder)
		}
	}
	return out
}

// remember records a Metal3Data created for the template tmpl.
func (r *Reconciler) remember(tmpl types.NamespacedName, h holder) {
	key := types.NamespacedName{Namespace: tmpl.Namespace, Name: infrav1.DataName(tmpl.Name, h.Index)}
	r.created.Wrote(key.String(), "", createdData{template: tmpl, holder: h})
}

// forget drops what is remembered of a template that is gone.
func (r *Reconciler) forget(tmpl types.NamespacedName) {
	for key, c := range r.created.All() {
		if c.template == tmpl {
			r.created.Forget(key)
		}
	}
}

// deleteOrphans deletes Metal3Data whose claim is gone. The claim's deletion normally deletes
// its Metal3Data; this catches the one created just as the claim was deleted, before the claim
// controller could see it. The claim was in the cache when its Metal3Data was made from it, so
// a claim missing from the cache now is really gone.
func (r *Reconciler) deleteOrphans(ctx context.Context, data []infrav1.Metal3Data, claims map[string]*infrav1.Metal3DataClaim) error {
	for i := range data {
		d := &data[i]
		owner := metav1.GetControllerOf(d)
		if owner == nil || owner.Kind != "Metal3DataClaim" || !d.DeletionTimestamp.IsZero() || !watchfilter.Matches(d, r.WatchFilter) {
			continue
		}
		if c, ok := claims[owner.Name]; ok && c.UID == owner.UID {
			continue
		}
		ctrl.LoggerFrom(ctx).Info("deleting Metal3Data whose claim is gone", "metal3data", d.Name, "claim", owner.Name)
		if err := r.Client.Delete(ctx, d.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Metal3Data %s, whose claim %s is gone: %w", d.Name, owner.Name, err)
		}
	}
	return nil
}
