// Package allocationview keeps the Equinix Metal layer-2 seed's ConfigMap of address
// allocations as a read-only view of metalwire's IPAM: in each namespace whose IPPools carry the
// network.metalwire.io/allocation-view-key annotation ("<metro>-<vlan>-<range>", which
// `metalwire migrate` sets on the pools it makes of a PacketMachineTemplate), ConfigMap
// capp-ip-allocations holds one key per such pool whose value is the JSON object claim name ->
// address, as the seed's tools read it. The IPPools and their claims are the truth; the view is
// rewritten after every claim and release, and an edit to it is overwritten at the next one.
package allocationview

import (
	"context"
	"fmt"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/pkg/ipam"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "allocationview"

// ViewLabel marks the ConfigMap as metalwire's view.
const ViewLabel = "network.metalwire.io/allocation-view"

// Reconciler writes one namespace's view. Requests are namespaces (Name is the ConfigMap's).
type Reconciler struct {
	Client client.Client
	// APIReader reads the ConfigMap: the manager caches no ConfigMaps.
	APIReader client.Reader

	// noView holds the namespaces last found with no annotated pool and no view of ours. Most
	// namespaces are such, and every IPAddress written there is an event of this controller: for
	// them an event costs no read of the ConfigMap from the API server (at a thousand machines it
	// was two reads a machine, each answered 404) until a pool there is annotated.
	noView sync.Map // namespace -> struct{}
}

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;create;update;delete
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ippools;ipaddresses,verbs=get;list;watch

// Reconcile rewrites the namespace's view from its pools and addresses.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pools := &ipamv1.IPPoolList{}
	// Read only (annotations, names, addresses): the cache's own objects, not copies; a pool's
	// copy would carry its status, an entry per allocation.
	if err := r.Client.List(ctx, pools, client.InNamespace(req.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the IPPools of namespace %s: %w", req.Namespace, err)
	}
	keys := map[string]string{}
	for _, p := range pools.Items {
		if k := p.Annotations[ipam.AllocationViewKeyAnnotation]; k != "" && p.DeletionTimestamp.IsZero() {
			keys[p.Name] = k
		}
	}
	if len(keys) == 0 {
		if _, known := r.noView.Load(req.Namespace); known {
			return ctrl.Result{}, nil
		}
	} else {
		r.noView.Delete(req.Namespace)
	}
	cm := &corev1.ConfigMap{}
	err := r.APIReader.Get(ctx, req.NamespacedName, cm)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	exists := err == nil
	if len(keys) == 0 {
		if exists && cm.Labels[ViewLabel] == "true" {
			if err := client.IgnoreNotFound(r.Client.Delete(ctx, cm)); err != nil {
				return ctrl.Result{}, err
			}
		}
		r.noView.Store(req.Namespace, struct{}{})
		return ctrl.Result{}, nil
	}
	addrs := &ipamv1.IPAddressList{}
	if err := r.Client.List(ctx, addrs, client.InNamespace(req.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the IPAddresses of namespace %s: %w", req.Namespace, err)
	}
	var held []ipam.Held
	for _, a := range addrs.Items {
		if a.DeletionTimestamp.IsZero() {
			held = append(held, ipam.Held{Pool: a.Spec.Pool.Name, Claim: a.Spec.Claim.Name, Address: string(a.Spec.Address)})
		}
	}
	data, err := ipam.AllocationView(keys, held)
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("allocation view not written", "error", err.Error())
		return ctrl.Result{}, nil // a pool's annotation must change first; its event brings us back
	}
	if !exists {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name,
			Labels:      map[string]string{ViewLabel: "true"},
			Annotations: map[string]string{"network.metalwire.io/read-only": "a view of the IPPools' claims kept by metalwire; edits are overwritten"}},
			Data: data}
		return ctrl.Result{}, r.Client.Create(ctx, cm)
	}
	if maps.Equal(cm.Data, data) {
		return ctrl.Result{}, nil
	}
	cm.Data = data
	return ctrl.Result{}, r.Client.Update(ctx, cm)
}

// SetupWithManager watches IPPools and IPAddresses; every event asks for its namespace's view.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	toView := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ipam.AllocationViewName}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&ipamv1.IPPool{}, toView).
		Watches(&ipamv1.IPAddress{}, toView).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Complete(r)
}
