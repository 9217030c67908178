package preprovisioning

import (
	"context"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/cluster-api/util/annotations"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
)

// HostReconciler renders the pre-provisioning network data of one BareMetalHost and releases
// its inspection gate.
type HostReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server: the cache holds only labelled Secrets, so a user's
	// Secret in the way of ours is seen only there.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// WatchFilter is --watch-filter: with a value, a host is served only while the template it
	// names carries the label; what this manager made for a host (IPClaims, Secret, both
	// labelled) is all it ever cleans up, so another manager's hosts and objects are left alone.
	WatchFilter string

	results *results
}

// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3preprovisioningdatatemplates,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3preprovisioningdatatemplates/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipclaims,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipaddresses;ippools,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one host's pre-provisioning data in line with its annotation, in the
// reconcilers' one shape (skeleton). The host is BMO's: no finalizer of ours, and what is
// written to it goes in patches of copies, so the skeleton's patch finds nothing changed. The
// watch filter and pause that count are the template's, checked once the host names one.
func (r *HostReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, req, skeleton.Kind[*bmov1.BareMetalHost]{
		Client: r.Client,
		New:    func() *bmov1.BareMetalHost { return &bmov1.BareMetalHost{} },
		Gone: func(ctx context.Context, key types.NamespacedName) (ctrl.Result, error) {
			// The host is gone: nothing else will release its claims.
			r.results.forget(ctx, key)
			return ctrl.Result{}, r.cleanup(ctx, key.Namespace, key.Name, nil, "")
		},
		Normal: r.reconcileHost,
		Delete: func(ctx context.Context, s *skeleton.Scope[*bmov1.BareMetalHost]) (ctrl.Result, error) {
			r.results.forget(ctx, client.ObjectKeyFromObject(s.Object))
			return ctrl.Result{}, r.reconcileDelete(ctx, s.Object)
		},
	})
}

// reconcileHost serves a host that names a template, and takes back what a host that no longer
// names one was given.
func (r *HostReconciler) reconcileHost(ctx context.Context, s *skeleton.Scope[*bmov1.BareMetalHost]) (ctrl.Result, error) {
	host := s.Object
	ref, annotated := referenceOf(host)
	if !annotated {
		r.results.forget(ctx, client.ObjectKeyFromObject(host))
		return ctrl.Result{}, r.reconcileDelete(ctx, host)
	}
	if !ref.valid() {
		if r.WatchFilter != "" {
			// No template, no telling which manager's host this is: say nothing, keep ours.
			return ctrl.Result{}, r.cleanup(ctx, host.Namespace, host.Name, host, "")
		}
		r.fail(ctx, host, ref.Key, infrav1.PreprovisioningBadReferenceReason, fmt.Sprintf("annotation %s: %v", refAnnotation, ref.Err))
		return ctrl.Result{}, nil
	}

	tmpl := &infrav1.Metal3PreprovisioningDataTemplate{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: host.Namespace, Name: ref.Template}, tmpl); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		// The template's creation brings the host back (the index maps templates to hosts).
		// Anything a template of that name gave the host before it went is taken back: its
		// Secret may already be gone, and a name pointing at no Secret stops BMO.
		if r.WatchFilter == "" {
			r.fail(ctx, host, ref.Key, templateNotFoundReason, r.missingTemplate(ctx, host.Namespace, ref.Template))
		}
		return ctrl.Result{}, r.cleanup(ctx, host.Namespace, host.Name, host, "")
	}
	if !watchfilter.Matches(tmpl, r.WatchFilter) {
		// Another manager's template: its host is that manager's; only what we made goes.
		return ctrl.Result{}, r.cleanup(ctx, host.Namespace, host.Name, host, "")
	}
	if !tmpl.DeletionTimestamp.IsZero() {
		r.fail(ctx, host, ref.Key, templateDeletingReason, fmt.Sprintf(
			"Metal3PreprovisioningDataTemplate %s is being deleted; the host's pre-provisioning network data and addresses are removed", tmpl.Name))
		return ctrl.Result{}, r.cleanup(ctx, host.Namespace, host.Name, host, "")
	}
	if annotations.HasPaused(tmpl) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.reconcileNormal(ctx, host, tmpl, ref)
}

// reconcileNormal renders the host's Secret if it has none, names it in the host's spec and
// lifts our pause, and gives a decoupled pool's address back once the host is available.
func (r *HostReconciler) reconcileNormal(ctx context.Context, host *bmov1.BareMetalHost, tmpl *infrav1.Metal3PreprovisioningDataTemplate, ref reference) error {
	secretName := infrav1.PreprovisioningSecretName(host.Name)
	// The user's own Secret in the field is checked first, before any address is taken.
	if _, _, _, err := hostUpdate(host, secretName); errors.Is(err, errNameInUse) {
		r.fail(ctx, host, ref.Key, nameInUseReason, err.Error())
		return nil
	}
	secret := &corev1.Secret{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: host.Namespace, Name: secretName}, secret)
	switch {
	case err == nil && secret.Labels[templateLabel] == tmpl.Name:
		// Rendered once; it is never rendered again (delete the Secret to have it rendered anew).
	case err == nil && secret.Labels[templateLabel] != "":
		// Made for the template the host referenced before: remove it and its claims; their
		// events bring the host back to render from the new one.
		return r.cleanup(ctx, host.Namespace, host.Name, nil, tmpl.Name)
	case err == nil:
		r.fail(ctx, host, ref.Key, nameInUseReason, fmt.Sprintf(
			"Secret %s already exists and was not written by metalwire for a pre-provisioning template; delete or rename it", secretName))
		return nil
	case apierrors.IsNotFound(err):
		if inUse, err := r.foreignSecret(ctx, client.ObjectKey{Namespace: host.Namespace, Name: secretName}); err != nil {
			return err
		} else if inUse {
			r.fail(ctx, host, ref.Key, nameInUseReason, fmt.Sprintf(
				"Secret %s already exists and was not written by metalwire for a pre-provisioning template; delete or rename it", secretName))
			return nil
		}
		failed, err := r.render(ctx, host, tmpl)
		if err != nil || failed != nil {
			if failed != nil {
				failed.Key = ref.Key
				r.fail(ctx, host, ref.Key, failed.Reason, failed.Message)
			}
			return err
		}
	default:
		return fmt.Errorf("reading Secret %s: %w", secretName, err)
	}

	want, lock, changed, err := hostUpdate(host, secretName)
	if errors.Is(err, errNameInUse) {
		r.fail(ctx, host, ref.Key, nameInUseReason, err.Error())
		return nil
	}
	if changed {
		opts := []client.MergeFromOption{}
		if lock {
			opts = append(opts, client.MergeFromWithOptimisticLock{})
		}
		if err := r.Client.Patch(ctx, want, client.MergeFromWithOptions(host, opts...)); err != nil {
			return fmt.Errorf("setting spec.preprovisioningNetworkDataName of host %s: %w", host.Name, err)
		}
		if lock {
			r.Recorder.Eventf(host, tmpl, corev1.EventTypeNormal, gateReleasedReason, "ReleaseInspection",
				"spec.preprovisioningNetworkDataName is %s; removed %s: %s so that BMO inspects the host", secretName, bmov1.PausedAnnotation, infrav1.PreprovisioningPausedAnnotationValue)
		}
	}
	if pastPreprovisioning(host.Status.Provisioning.State) {
		if err := r.releaseDecoupled(ctx, host, tmpl); err != nil {
			return err
		}
	}
	r.results.set(ctx, types.NamespacedName{Namespace: host.Namespace, Name: host.Name}, outcome{Key: ref.Key})
	return nil
}

// releaseDecoupled gives back the addresses of pools that belong to no cluster, once the host is
// past pre-provisioning. Claims in a cluster's pool stay: the host keeps that address.
func (r *HostReconciler) releaseDecoupled(ctx context.Context, host *bmov1.BareMetalHost, tmpl *infrav1.Metal3PreprovisioningDataTemplate) error {
	claims, err := r.hostClaims(ctx, host.Namespace, host.Name)
	if err != nil {
		return err
	}
	for i := range claims {
		claim := &claims[i]
		if claim.Labels[templateLabel] != tmpl.Name {
			continue
		}
		pool := &ipamv1.IPPool{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: claim.Namespace, Name: claim.Spec.Pool.Name}, pool)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading IPPool %s: %w", claim.Spec.Pool.Name, err)
		}
		if err == nil && keepsAddress(pool.Spec.ClusterName) {
			continue
		}
		deleted, err := releaseClaim(ctx, r.Client, claim)
		if err != nil {
			return err
		}
		if deleted {
			r.Recorder.Eventf(host, claim, corev1.EventTypeNormal, addressReleasedReason, "ReleaseAddress",
				"host is %s: released IPClaim %s of pre-provisioning pool %s (it belongs to no cluster); the address in Secret %s is no longer reserved",
				host.Status.Provisioning.State, claim.Name, claim.Spec.Pool.Name, infrav1.PreprovisioningSecretName(host.Name))
		}
	}
	return nil
}

// reconcileDelete removes what the host got from a template it no longer references (or as it
// goes away), and warns when our pause would hold it forever.
func (r *HostReconciler) reconcileDelete(ctx context.Context, host *bmov1.BareMetalHost) error {
	if err := r.cleanup(ctx, host.Namespace, host.Name, host, ""); err != nil {
		return err
	}
	if host.DeletionTimestamp.IsZero() && host.Annotations[bmov1.PausedAnnotation] == infrav1.PreprovisioningPausedAnnotationValue {
		// The pause is the user's to lift now: lifting it ourselves would let BMO inspect a
		// host whose network data the user just took away.
		r.Recorder.Eventf(host, nil, corev1.EventTypeWarning, stillPausedReason, "ReleaseInspection",
			"host is paused with %s: %s but references no Metal3PreprovisioningDataTemplate; remove the paused annotation, or add %s again",
			bmov1.PausedAnnotation, infrav1.PreprovisioningPausedAnnotationValue, refAnnotation)
	}
	return nil
}

// cleanup releases the host's claims and deletes its Secret, except those made for template
// keep, and then clears spec.preprovisioningNetworkDataName when it names our Secret (host nil:
// the host is gone, or its new template's Secret will have the same name).
func (r *HostReconciler) cleanup(ctx context.Context, ns, hostName string, host *bmov1.BareMetalHost, keep string) error {
	claims, err := r.hostClaims(ctx, ns, hostName)
	if err != nil {
		return err
	}
	var removed []string
	for i := range claims {
		if keep != "" && claims[i].Labels[templateLabel] == keep {
			continue
		}
		if _, err := releaseClaim(ctx, r.Client, &claims[i]); err != nil {
			return err
		}
		removed = append(removed, "IPClaim "+claims[i].Name)
	}

	secretName := infrav1.PreprovisioningSecretName(hostName)
	secret := &corev1.Secret{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: secretName}, secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading Secret %s: %w", secretName, err)
	}
	ours := err == nil && secret.Labels[templateLabel] != "" && secret.Labels[hostLabel] == hostName && watchfilter.Matches(secret, r.WatchFilter)
	if ours && secret.Labels[templateLabel] != keep {
		if err := r.Client.Delete(ctx, secret, client.Preconditions{UID: &secret.UID}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Secret %s: %w", secretName, err)
		}
		removed = append(removed, "Secret "+secretName)
	}

	// Our name may be cleared if the Secret it names is ours or gone; a Secret of that name that
	// someone else wrote is theirs, and so is the field then. Under --watch-filter a gone Secret
	// may have been another manager's: only ours clears the field.
	gone := apierrors.IsNotFound(err) && r.WatchFilter == ""
	if host != nil && host.DeletionTimestamp.IsZero() && host.Spec.PreprovisioningNetworkDataName == secretName && (ours || gone) {
		want := host.DeepCopy()
		want.Spec.PreprovisioningNetworkDataName = ""
		if err := r.Client.Patch(ctx, want, client.MergeFrom(host)); err != nil {
			return fmt.Errorf("clearing spec.preprovisioningNetworkDataName of host %s: %w", hostName, err)
		}
		removed = append(removed, "spec.preprovisioningNetworkDataName")
	}
	if host != nil && len(removed) > 0 {
		sort.Strings(removed)
		r.Recorder.Eventf(host, nil, corev1.EventTypeNormal, cleanedUpReason, "RemovePreprovisioningData",
			"removed the host's pre-provisioning data: %v", removed)
	}
	return nil
}

// fail records why a host is not rendered, for its template's status, and tells the host.
func (r *HostReconciler) fail(ctx context.Context, host *bmov1.BareMetalHost, key, reason, message string) {
	r.results.set(ctx, types.NamespacedName{Namespace: host.Namespace, Name: host.Name}, outcome{Key: key, Reason: reason, Message: message})
	eventType := corev1.EventTypeWarning
	if reason == infrav1.PreprovisioningWaitingForIPAddressesReason {
		eventType = corev1.EventTypeNormal
	}
	r.Recorder.Eventf(host, nil, eventType, reason, "RenderPreprovisioningNetworkData", "%s", message)
}

// missingTemplate says a template does not exist, and where one of that name does, since a
// template in another namespace is the likely mistake.
func (r *HostReconciler) missingTemplate(ctx context.Context, ns, name string) string {
	msg := fmt.Sprintf("Metal3PreprovisioningDataTemplate %s not found in namespace %s", name, ns)
	list := &infrav1.Metal3PreprovisioningDataTemplateList{}
	if err := r.Client.List(ctx, list); err == nil {
		var elsewhere []string
		for i := range list.Items {
			if list.Items[i].Name == name && list.Items[i].Namespace != ns {
				elsewhere = append(elsewhere, list.Items[i].Namespace)
			}
		}
		if len(elsewhere) > 0 {
			sort.Strings(elsewhere)
			return fmt.Sprintf("%s (one exists in namespace %v, but a host only uses templates of its own namespace); create it in %s", msg, elsewhere, ns)
		}
	}
	return msg + "; create it, or fix the name in the " + refAnnotation + " annotation"
}

// foreignSecret says whether a Secret the cache does not hold (it holds only labelled ones)
// exists under the name all the same: someone else's, in the way of ours.
func (r *HostReconciler) foreignSecret(ctx context.Context, key client.ObjectKey) (bool, error) {
	if r.APIReader == nil {
		return false, nil
	}
	s := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
	err := r.APIReader.Get(ctx, key, s)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading Secret %s: %w", key.Name, err)
	}
	// Ours, just written and not yet in the cache, is not in the way.
	return s.Labels[templateLabel] == "", nil
}
