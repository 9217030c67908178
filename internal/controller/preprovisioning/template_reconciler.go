package preprovisioning

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
)

// TemplateReconciler owns a template's status and its finalizer.
type TemplateReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// WatchFilter is --watch-filter: with a value, only templates labelled with it are served.
	WatchFilter string

	results *results
}

// Reconcile writes a template's status from its hosts, or releases what it made as it goes, in
// the reconcilers' one shape (skeleton).
func (r *TemplateReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, req, skeleton.Kind[*infrav1.Metal3PreprovisioningDataTemplate]{
		Client: r.Client, WatchFilter: r.WatchFilter,
		New:       func() *infrav1.Metal3PreprovisioningDataTemplate { return &infrav1.Metal3PreprovisioningDataTemplate{} },
		Finalizer: infrav1.PreprovisioningDataTemplateFinalizer,
		Normal: func(ctx context.Context, s *skeleton.Scope[*infrav1.Metal3PreprovisioningDataTemplate]) (ctrl.Result, error) {
			return ctrl.Result{}, r.reconcileNormal(ctx, s.Object)
		},
		Delete: func(ctx context.Context, s *skeleton.Scope[*infrav1.Metal3PreprovisioningDataTemplate]) (ctrl.Result, error) {
			return ctrl.Result{}, r.reconcileDelete(ctx, s.Object)
		},
		IgnoreGoneOnPatch: true,
	})
}

// reconcileNormal lists the template's hosts (through the index, so hosts of other templates
// are never read) and writes what became of each.
func (r *TemplateReconciler) reconcileNormal(ctx context.Context, tmpl *infrav1.Metal3PreprovisioningDataTemplate) error {
	key := tmpl.Namespace + "/" + tmpl.Name
	hosts := &bmov1.BareMetalHostList{}
	// Read only: no copies of every host on each wake-up.
	if err := r.Client.List(ctx, hosts, client.MatchingFields{hostTemplateIndex: key}, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("listing the hosts of template %s: %w", tmpl.Name, err)
	}
	views := make([]hostView, 0, len(hosts.Items))
	for i := range hosts.Items {
		v, err := r.view(ctx, tmpl, key, &hosts.Items[i])
		if err != nil {
			return err
		}
		views = append(views, v)
	}
	st := buildStatus(views)

	before := tmpl.Status.DeepCopy()
	tmpl.Status.Hosts, tmpl.Status.Errors = st.Hosts, st.Errors
	tmpl.Status.Rendered, tmpl.Status.Failed = int32(len(st.Hosts)), int32(len(st.Errors)) //nolint:gosec // host counts are far below 2^31
	st.Condition.ObservedGeneration = tmpl.Generation
	meta.SetStatusCondition(&tmpl.Status.Conditions, st.Condition)
	if !statusEqual(before, &tmpl.Status) {
		now := metav1.Now()
		tmpl.Status.LastUpdated = &now
	}
	return nil
}

// view reads what became of one host.
func (r *TemplateReconciler) view(ctx context.Context, tmpl *infrav1.Metal3PreprovisioningDataTemplate, key string, host *bmov1.BareMetalHost) (hostView, error) {
	ref, _ := referenceOf(host)
	v := hostView{Name: host.Name, Ref: ref}
	if host.Namespace != tmpl.Namespace {
		v.Name = host.Namespace + "/" + host.Name
	}
	if o, ok := r.results.get(types.NamespacedName{Namespace: host.Namespace, Name: host.Name}); ok && o.Key == key {
		v.Last = &o
	}
	if !ref.valid() {
		return v, nil
	}
	secretName := infrav1.PreprovisioningSecretName(host.Name)
	secret := &corev1.Secret{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: host.Namespace, Name: secretName}, secret)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return v, fmt.Errorf("reading Secret %s: %w", secretName, err)
	case secret.Labels[templateLabel] == tmpl.Name && host.Spec.PreprovisioningNetworkDataName == secretName:
		v.Rendered, v.SecretName = true, secretName
		v.Addresses = renderedAddresses(secret.Data[infrav1.DataSecretNetworkDataKey])
	}
	return v, nil
}

// reconcileDelete gives back every address the template's hosts hold through it and deletes
// their Secrets, then lets the template go. The hosts' spec.preprovisioningNetworkDataName is
// cleared by the host reconciler, which the template's deletion wakes for each host.
func (r *TemplateReconciler) reconcileDelete(ctx context.Context, tmpl *infrav1.Metal3PreprovisioningDataTemplate) error {
	claims := &ipamv1.IPClaimList{}
	if err := r.Client.List(ctx, claims, client.InNamespace(tmpl.Namespace), client.MatchingLabels{templateLabel: tmpl.Name}); err != nil {
		return fmt.Errorf("listing the IPClaims of template %s: %w", tmpl.Name, err)
	}
	for i := range claims.Items {
		if !slices.ContainsFunc(claims.Items[i].OwnerReferences, func(ref metav1.OwnerReference) bool { return ref.UID == tmpl.UID }) {
			continue
		}
		if _, err := releaseClaim(ctx, r.Client, &claims.Items[i]); err != nil {
			return err
		}
	}
	secrets := &corev1.SecretList{}
	if err := r.Client.List(ctx, secrets, client.InNamespace(tmpl.Namespace), client.MatchingLabels{templateLabel: tmpl.Name}); err != nil {
		return fmt.Errorf("listing the Secrets of template %s: %w", tmpl.Name, err)
	}
	for i := range secrets.Items {
		s := &secrets.Items[i]
		if err := r.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Secret %s: %w", s.Name, err)
		}
	}
	controllerutil.RemoveFinalizer(tmpl, infrav1.PreprovisioningDataTemplateFinalizer)
	return nil
}

// statusEqual compares two statuses ignoring lastUpdated and condition timestamps, so a
// reconcile that changes nothing writes nothing.
func statusEqual(a, b *infrav1.Metal3PreprovisioningDataTemplateStatus) bool {
	x, y := a.DeepCopy(), b.DeepCopy()
	x.LastUpdated, y.LastUpdated = nil, nil
	for i := range x.Conditions {
		x.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	for i := range y.Conditions {
		y.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	return equality.Semantic.DeepEqual(x, y)
}
