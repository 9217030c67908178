package metal3data

import (
	"context"
	"errors"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	networkv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/cachelag"
	"github.com/metalwire/metalwire/internal/controller/cachepolicy"
	"github.com/metalwire/metalwire/internal/controller/dataindex"
	"github.com/metalwire/metalwire/internal/controller/fabricindex"
	"github.com/metalwire/metalwire/internal/controller/mapping"
	"github.com/metalwire/metalwire/internal/controller/pause"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
	"github.com/metalwire/metalwire/internal/controller/waits"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
	"github.com/metalwire/metalwire/internal/metrics"
)

// notSeenRecheck is how soon to look again when an object we just learnt of (an IPAddress named
// by a claim) is not in the cache yet; its own event usually comes first.
const notSeenRecheck = 2 * time.Second

// Reconciler owns Metal3Data status, its address claims and its Secrets.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// WatchFilter is --watch-filter: with a value, only Metal3Data labelled with it are
	// rendered (they carry their claim's label from creation).
	WatchFilter string
	// APIReader reads from the API server: a rendered Secret's data (the manager keeps none in
	// memory), and a Secret in no cache (CAPM3's, unlabelled).
	APIReader client.Reader
	// RenderedSecrets is the metadata-only cache of the Secrets a Metal3Data renders
	// (cachepolicy.NewRenderedSecrets): whether they exist, whose they are and their digest.
	// Client's cache does not hold them.
	RenderedSecrets cache.Cache
	// IPReuse names address claims after the BareMetalHost (<host>-<pool>) instead of the
	// Metal3Data, so a host keeps its address across re-provisioning (--ip-reuse).
	IPReuse bool
	// Recorder, when set, gets an event when a Metal3Data is rendered and when a new error
	// stops it, so `kubectl get events` tells the story without reading every status.
	Recorder events.EventRecorder

	// QuietWaits is how long a new Metal3Data's wait stays unwritten (waits.Unwritten): zero
	// means waits.DefaultQuiet, negative writes every wait at once.
	QuietWaits time.Duration

	// createdClaims are the address claims created for a Metal3Data (keyed by claimKey) and
	// readyWritten the Metal3Data whose status this process wrote ready (by UID), until the cache
	// shows them: a reconcile on a lagging cache then waits instead of creating or rendering again.
	createdClaims cachelag.Writes[struct{}]
	readyWritten  cachelag.Writes[struct{}]
	// Progress is when a Metal3Data of each namespace last became ready: a wait is held while
	// others are (waits.Progress). The Metal3DataClaim controller holds a claim's wait for an
	// index by the same progress. Nil: a progress of its own.
	Progress *waits.Progress
	served   waits.Progress

	// claimWritten is the status this process last wrote to each claim (by UID), until the cache
	// shows it: a reconcile on a lagging cache does not write it again.
	claimWritten cachelag.Writes[infrav1.Metal3DataClaimStatus]
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datas,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datas/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datatemplates;metal3dataclaims;metal3machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3dataclaims/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipclaims,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipaddresses,verbs=get;list;watch
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddresses,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=network.metalwire.io,resources=clusternetworks;nics,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile renders one Metal3Data, or cleans up after it, in the reconcilers' one shape
// (skeleton): the finalizer is persisted before any address is claimed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var written *infrav1.Metal3Data      // the Metal3Data as the reconcile left it, once it is stored
	var before *infrav1.Metal3DataStatus // the status as read, for what the patch carries
	var trailing bool                    // the copy read is older than this process's rendering
	phase := func(next func(context.Context, *infrav1.Metal3Data) (ctrl.Result, error)) skeleton.Phase[*infrav1.Metal3Data] {
		return func(ctx context.Context, s *skeleton.Scope[*infrav1.Metal3Data]) (ctrl.Result, error) {
			before = s.Object.Status.DeepCopy()
			return next(ctx, s.Object)
		}
	}
	res, err := skeleton.Reconcile(ctx, req, skeleton.Kind[*infrav1.Metal3Data]{
		Client: r.Client, WatchFilter: r.WatchFilter,
		New:       func() *infrav1.Metal3Data { return &infrav1.Metal3Data{} },
		Finalizer: infrav1.DataFinalizer,
		Normal: phase(func(ctx context.Context, data *infrav1.Metal3Data) (ctrl.Result, error) {
			if _, unseen := r.readyWritten.Unseen(string(data.UID), data.ResourceVersion); unseen {
				// Rendered by this process a moment ago; the cache will show it. Nothing to redo.
				trailing = true
				return ctrl.Result{}, nil
			}
			return r.reconcileNormal(ctx, data)
		}),
		Delete: phase(r.reconcileDelete),
		Ready:  &readySummary,
		Write:  r.writeData,
		Finish: func(s *skeleton.Scope[*infrav1.Metal3Data], res *ctrl.Result) {
			data := s.Object
			if after := r.unwrittenWait(before, data); after > 0 {
				// A new Metal3Data waiting for the next controller: the outcome is the one status
				// write, unless the wait lasts.
				data.Status = *before
				if res.RequeueAfter == 0 || after < res.RequeueAfter {
					res.RequeueAfter = after
				}
			}
			if !statusEqual(before, &data.Status) {
				now := metav1.Now()
				data.Status.LastUpdated = &now
				r.recordChange(before, data)
			}
		},
		Written: func(s *skeleton.Scope[*infrav1.Metal3Data]) {
			if data := s.Object; data.Status.Ready && !before.Ready {
				// Only once the status is written: a failed write must be retried in full.
				// writeData leaves data at the version its status write made.
				r.readyWritten.WroteAt(string(data.UID), data.ResourceVersion, struct{}{})
			}
			written = s.Object
		},
	})
	if err != nil || written == nil {
		return res, err
	}
	if trailing {
		// What a copy older than this process's rendering says is no news for the claim, which
		// heard of the rendering when it was written.
		return res, nil
	}
	return res, r.reportToClaim(ctx, written)
}

// progress is the namespaces' progress waits are held by.
func (r *Reconciler) progress() *waits.Progress {
	if r.Progress != nil {
		return r.Progress
	}
	return &r.served
}

// readySummary: a Metal3Data is Ready once its Secrets are written; until then Ready says what
// SecretsReady says (what the rendering waits for, or the error that stops it).
var readySummary = skeleton.Ready[*infrav1.Metal3Data]{
	Condition: infrav1.DataReadyCondition, From: []string{infrav1.DataSecretsReadyCondition},
	TrueReason: infrav1.DataRenderedReason,
	Conditions: func(d *infrav1.Metal3Data) *[]metav1.Condition { return &d.Status.Conditions },
}

// unwrittenWait says how much longer the status of a new Metal3Data that only waits may stay
// unwritten (waits.Unwritten); zero when it is to be written now. Errors, success and deletion
// are written at once.
func (r *Reconciler) unwrittenWait(before *infrav1.Metal3DataStatus, data *infrav1.Metal3Data) time.Duration {
	now := time.Now()
	if data.Status.Ready && !before.Ready {
		r.progress().Served(data.Namespace, now)
	}
	if data.Status.Ready || data.Status.ErrorMessage != nil || !data.DeletionTimestamp.IsZero() || statusEqual(before, &data.Status) {
		return 0
	}
	return waits.Unwritten(data.CreationTimestamp.Time, r.progress().LastServed(data.Namespace), len(before.Conditions) > 0, r.QuietWaits, now)
}

// statusEqual compares what a person reads in the status, leaving out lastUpdated.
func statusEqual(a, b *infrav1.Metal3DataStatus) bool {
	x, y := a.DeepCopy(), b.DeepCopy()
	x.LastUpdated, y.LastUpdated = nil, nil
	for _, s := range []*infrav1.Metal3DataStatus{x, y} {
		for i := range s.Conditions {
			s.Conditions[i].LastTransitionTime = metav1.Time{}
		}
	}
	return equality.Semantic.DeepEqual(x, y)
}

// recordChange emits an event for what a person watching events wants to know: the data is
// rendered after its status said something else, or a new error stops it. Waits are not events:
// they are expected and pass.
func (r *Reconciler) recordChange(before *infrav1.Metal3DataStatus, data *infrav1.Metal3Data) {
	ready := meta.FindStatusCondition(data.Status.Conditions, infrav1.DataReadyCondition)
	switch {
	case data.Status.Ready && !before.Ready:
		metrics.ObserveRendered(data.CreationTimestamp.Time)
	case data.Status.ErrorMessage != nil && ready != nil && ready.Reason == infrav1.DataRenderFailedReason &&
		!equality.Semantic.DeepEqual(before.ErrorMessage, data.Status.ErrorMessage):
		metrics.RenderErrors.WithLabelValues("Metal3Data").Inc()
	}
	if r.Recorder == nil {
		return
	}
	switch {
	case data.Status.Ready && !before.Ready && len(before.Conditions) == 0:
		// Rendered straight away: the status says so, and in a scale-up an event per machine
		// would be a write per machine that says nothing more.
	case data.Status.Ready && !before.Ready:
		r.Recorder.Eventf(data, nil, corev1.EventTypeNormal, infrav1.DataRenderedReason, "Render",
			"rendered index %d into Secrets %s", ptr.Deref(data.Spec.Index, 0), secretList(data))
	case data.Status.ErrorMessage != nil && !equality.Semantic.DeepEqual(before.ErrorMessage, data.Status.ErrorMessage):
		reason := infrav1.DataRenderFailedReason
		if ready != nil && ready.Reason != "" {
			reason = ready.Reason
		}
		r.Recorder.Eventf(data, nil, corev1.EventTypeWarning, reason, "Render", "%s", *data.Status.ErrorMessage)
	}
}

func secretList(data *infrav1.Metal3Data) string {
	var names []string
	for _, ref := range []*corev1.SecretReference{data.Spec.MetaData, data.Spec.NetworkData} {
		if ref != nil {
			names = append(names, ref.Name)
		}
	}
	return strings.Join(names, ", ")
}

func setCondition(data *infrav1.Metal3Data, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&data.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: data.Generation,
	})
}

// SetupWithManager watches what a rendering waits for, each mapped to the few Metal3Data
// concerned through the field indexes: address claims (addresses given, pools exhausted),
// Metal3Machines (a host associated), BareMetalHosts (inspected, annotated), templates
// (created late), and the Secrets (deleted ones are re-created).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	if err := dataindex.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	// A bond with bondFrom, and the HostSwitchMismatch check, read the host's NIC (by spec.node).
	if err := fabricindex.Setup(ctx, mgr); err != nil {
		return err
	}
	if r.RenderedSecrets == nil {
		return errors.New("metal3data: no rendered-Secret cache; make one with cachepolicy.NewRenderedSecrets and set Reconciler.RenderedSecrets")
	}
	// Made now, so that it starts and syncs with the caches, before the controller.
	if _, err := r.RenderedSecrets.GetInformer(ctx, cachepolicy.RenderedSecret(), cache.BlockUntilSynced(false)); err != nil {
		return err
	}
	// Informers for the kinds only read, never watched, are made here so they start and sync
	// with the manager, rather than lazily inside a reconcile (where a first read waits for a
	// whole list, and a manager stopping at that moment waits for it too).
	for _, o := range []client.Object{&clusterv1.Machine{}, &capiipamv1.IPAddress{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, o); err != nil {
			return err
		}
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.Metal3Data{}, builder.WithPredicates(watchfilter.Predicate(r.WatchFilter))).
		// A deleted rendered Secret is written again: its metadata-only watch wakes its owner.
		// Only deletions: our own writes would wake every Metal3Data.
		WatchesRawSource(source.Kind(r.RenderedSecrets, cachepolicy.RenderedSecret(),
			handler.TypedEnqueueRequestForOwner[*metav1.PartialObjectMetadata](mgr.GetScheme(), mgr.GetRESTMapper(), &infrav1.Metal3Data{}, handler.OnlyControllerOwner()),
			predicate.TypedFuncs[*metav1.PartialObjectMetadata]{
				CreateFunc: func(event.TypedCreateEvent[*metav1.PartialObjectMetadata]) bool { return false },
				UpdateFunc: func(event.TypedUpdateEvent[*metav1.PartialObjectMetadata]) bool { return false },
			})).
		// A Secret rendered by an earlier version (without DataSecretRenderedLabel) is still in
		// the manager's full cache until it is next written; its deletion wakes its owner too.
		Owns(&corev1.Secret{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false },
			UpdateFunc: func(event.UpdateEvent) bool { return false },
		})).
		Watches(&ipamv1.IPClaim{}, handler.EnqueueRequestsFromMapFunc(claimToData)).
		Watches(&capiipamv1.IPAddressClaim{}, handler.EnqueueRequestsFromMapFunc(claimToData)).
		// An address may reach the cache after its claim names it.
		Watches(&ipamv1.IPAddress{}, handler.EnqueueRequestsFromMapFunc(r.addressToData), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(event.UpdateEvent) bool { return false },
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		Watches(&infrav1.Metal3Machine{}, handler.EnqueueRequestsFromMapFunc(r.machineToData)).
		Watches(&bmov1.BareMetalHost{}, handler.EnqueueRequestsFromMapFunc(r.hostToData)).
		Watches(&infrav1.Metal3DataTemplate{}, handler.EnqueueRequestsFromMapFunc(r.templateToData)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(pause.ClusterToObjects(mgr.GetClient(),
			func() client.ObjectList { return &infrav1.Metal3DataList{} },
			func(o client.Object) string { return pause.ClusterName(o) })), pause.Transitions()).
		// A VLAN link may wait for the VLAN id a ClusterNetwork assigns (vlanIDFrom).
		Watches(&networkv1.ClusterNetwork{}, handler.EnqueueRequestsFromMapFunc(r.clusterNetworkToData)).
		// The switch ports of a host changed: its rendered data is checked against them again,
		// and a bond that waits for the cards the fabric bonds (bondFrom) is rendered.
		Watches(&networkv1.NIC{}, handler.EnqueueRequestsFromMapFunc(r.nicToData), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				return !equality.Semantic.DeepEqual(e.ObjectOld.(*networkv1.NIC).Status, e.ObjectNew.(*networkv1.NIC).Status)
			},
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Named("metal3data").
		Complete(r)
}

// claimToData maps an address claim to the Metal3Data that own it.
func claimToData(_ context.Context, o client.Object) []reconcile.Request {
	names := dataindex.DataOwners(o)
	reqs := make([]reconcile.Request, 0, len(names))
	for _, n := range names {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: n}})
	}
	return reqs
}

// addressToData maps a new IPAddress to the Metal3Data owning its claim.
func (r *Reconciler) addressToData(ctx context.Context, o client.Object) []reconcile.Request {
	addr, ok := o.(*ipamv1.IPAddress)
	if !ok || addr.Spec.Claim.Name == "" {
		return nil
	}
	claim := &ipamv1.IPClaim{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: addr.Namespace, Name: addr.Spec.Claim.Name}, claim); err != nil {
		return nil
	}
	return claimToData(ctx, claim)
}

// machineToData maps a Metal3Machine to the Metal3Data of its claim (named after it), while
// that Metal3Data is not rendered: a rendered one does not read the machine again unless it
// must re-create a Secret.
func (r *Reconciler) machineToData(ctx context.Context, o client.Object) []reconcile.Request {
	return r.dataMatching(ctx, o.GetNamespace(), dataindex.DataByClaim, o.GetName(), false)
}

// hostToData maps a BareMetalHost to the Metal3Data of the machines holding it that are not
// rendered yet.
func (r *Reconciler) hostToData(ctx context.Context, o client.Object) []reconcile.Request {
	return r.dataOfHost(ctx, o.GetNamespace(), o.GetName(), false)
}

// dataOfHost lists the Metal3Data of the machines holding the host namespace/name: those not
// rendered yet, or with rendered too.
func (r *Reconciler) dataOfHost(ctx context.Context, namespace, name string, rendered bool) []reconcile.Request {
	machines := &infrav1.Metal3MachineList{}
	key := namespace + "/" + name
	// A Metal3Machine holds hosts of its own namespace only.
	if err := r.Client.List(ctx, machines, client.InNamespace(namespace), client.MatchingFields{dataindex.MachineByHost: key}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the Metal3Machines of a host", "host", key)
		return nil
	}
	var reqs []reconcile.Request
	for i := range machines.Items {
		reqs = append(reqs, r.dataMatching(ctx, machines.Items[i].Namespace, dataindex.DataByClaim, machines.Items[i].Name, rendered)...)
	}
	return reqs
}

// templateToData maps a template to its Metal3Data that are not rendered yet (or whose deleted
// Secrets could not be re-created).
func (r *Reconciler) templateToData(ctx context.Context, o client.Object) []reconcile.Request {
	return r.dataMatching(ctx, o.GetNamespace(), dataindex.DataByTemplate, o.GetName(), false)
}

func (r *Reconciler) dataMatching(ctx context.Context, namespace, index, value string, rendered bool) []reconcile.Request {
	return mapping.Listed(ctx, r.Client, &infrav1.Metal3DataList{}, "the Metal3Data with "+index+" "+value, func(o client.Object) bool {
		d := o.(*infrav1.Metal3Data)
		return rendered || !d.Status.Ready || d.Status.ErrorMessage != nil || !d.DeletionTimestamp.IsZero()
	}, client.InNamespace(namespace), client.MatchingFields{index: value}, client.UnsafeDisableDeepCopy)
}
