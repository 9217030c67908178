package clusternetwork

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/cachelag"
	"github.com/metalwire/metalwire/internal/controller/fabricindex"
	"github.com/metalwire/metalwire/internal/controller/mapping"
	"github.com/metalwire/metalwire/internal/controller/waits"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
	"github.com/metalwire/metalwire/internal/metrics"
)

// DefaultProgressQuiet is how long the hosts' progress may stay unwritten in a ClusterNetwork's
// status while hosts keep moving: their states read at most this late. docs/fabric.md has the
// figures that set it.
const DefaultProgressQuiet = time.Second

const (
	defaultVLANRetry = 30 * time.Second
	// nicWriters bounds the NIC status writes one reconcile has in flight.
	nicWriters = 16
)

// Reconciler owns ClusterNetwork status, the VLAN locks and the status of the NICs it uses.
type Reconciler struct {
	Client client.Client
	// APIReader reads locks past the cache when a create says one exists.
	APIReader client.Reader
	// VLANRetry is how often a ClusterNetwork whose range ran out looks again (it is also woken
	// when a lock of its NetworkDevice is deleted).
	VLANRetry time.Duration
	// WatchFilter is --watch-filter: with a value, only ClusterNetworks labelled with it are
	// served.
	WatchFilter string
	// ProgressQuiet is the least time between two status writes that only report the hosts'
	// progress (holdProgress): zero means DefaultProgressQuiet, negative writes each at once.
	ProgressQuiet time.Duration

	progress waits.Rewrites
	// nicWrites are the NIC statuses written that the cache may not show yet: a reconcile that
	// runs before it does must not write them again.
	nicWrites cachelag.Writes[netv1.NICStatus]
}

// +kubebuilder:rbac:groups=network.metalwire.io,resources=clusternetworks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=network.metalwire.io,resources=clusternetworks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=network.metalwire.io,resources=nics,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=network.metalwire.io,resources=nics/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=network.metalwire.io,resources=networkdevices,verbs=get;list;watch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;delete

// Reconcile brings one ClusterNetwork in line.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cn := &netv1.ClusterNetwork{}
	if err := r.Client.Get(ctx, req.NamespacedName, cn); err != nil {
		if apierrors.IsNotFound(err) {
			r.progress.Forget(req.String())
			metrics.ForgetClusterNetwork(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !watchfilter.Matches(cn, r.WatchFilter) {
		return ctrl.Result{}, nil
	}
	if !cn.DeletionTimestamp.IsZero() {
		r.progress.Forget(req.String())
		before := cn.DeepCopy()
		err := r.reconcileDelete(ctx, cn)
		return ctrl.Result{}, errors.Join(err, r.write(ctx, before, cn))
	}
	// The finalizer is written before anything else: the NIC statuses this reconcile writes
	// must be undone if the ClusterNetwork is deleted.
	if controllerutil.AddFinalizer(cn, netv1.ClusterNetworkFinalizer) {
		unfinalized := cn.DeepCopy()
		unfinalized.Finalizers = slices.DeleteFunc(unfinalized.Finalizers, func(f string) bool { return f == netv1.ClusterNetworkFinalizer })
		if err := r.writeFinalizers(ctx, unfinalized, cn); err != nil {
			return ctrl.Result{}, err
		}
	}
	before := cn.DeepCopy()
	result, err := r.reconcileNormal(ctx, cn)
	if err == nil {
		if hold := r.holdProgress(req.String(), before, cn); hold > 0 {
			// Hosts moved on since the last write: that is written once the quiet period ends,
			// with whatever else moved by then (the NIC statuses that drive the switches were
			// written already).
			ctrl.LoggerFrom(ctx).V(1).Info("hosts' progress held", "for", hold)
			if result.RequeueAfter == 0 || hold < result.RequeueAfter {
				result.RequeueAfter = hold
			}
			return result, nil
		}
	}
	return result, errors.Join(err, r.write(ctx, before, cn))
}

// write sends what the reconcile changed of the ClusterNetwork: its status (conditions with
// it) in one write, then its finalizers. Cluster API's patch helper would write the conditions
// and the rest of the status apart: two rewrites of the whole object (a thousand hosts'
// states) whenever the Ready message moves, which it does with every host of a burst.
func (r *Reconciler) write(ctx context.Context, before, cn *netv1.ClusterNetwork) error {
	if !equality.Semantic.DeepEqual(before.Status, cn.Status) {
		if err := r.Client.Status().Patch(ctx, cn.DeepCopy(), client.MergeFrom(before)); err != nil {
			return fmt.Errorf("writing the status of ClusterNetwork %s/%s: %w", cn.Namespace, cn.Name, err)
		}
	}
	if !slices.Equal(before.Finalizers, cn.Finalizers) {
		return r.writeFinalizers(ctx, before, cn)
	}
	return nil
}

// writeFinalizers writes cn's finalizers over before's, refused if the ClusterNetwork changed
// since before was read (another finalizer may have come or gone).
func (r *Reconciler) writeFinalizers(ctx context.Context, before, cn *netv1.ClusterNetwork) error {
	from := before.DeepCopy()
	from.Status = netv1.ClusterNetworkStatus{}
	to := from.DeepCopy()
	to.Finalizers = cn.Finalizers
	if err := r.Client.Patch(ctx, to, client.MergeFromWithOptions(from, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("writing the finalizers of ClusterNetwork %s/%s: %w", cn.Namespace, cn.Name, err)
	}
	cn.ResourceVersion = to.ResourceVersion
	return nil
}

// holdProgress says how much longer the reconciled status may stay unwritten: zero to write it
// now. Only the hosts' progress may wait (available, selected, states and the Ready summary of
// them), at most ProgressQuiet since the last write; the first change after a quiet spell, a
// host newly in error, Ready turning True (every selected host ready: what a user waits for),
// the finalizer, VLAN ids and the other conditions are written at once. In a burst of a thousand
// hosts joining, every NIC the switches configure changes the status, and each write has the
// API server decode, validate and store the whole object (a thousand hosts' states).
func (r *Reconciler) holdProgress(key string, before, after *netv1.ClusterNetwork) time.Duration {
	if equality.Semantic.DeepEqual(before.Status, after.Status) && slices.Equal(before.Finalizers, after.Finalizers) {
		return 0 // nothing to write
	}
	mayWait := slices.Equal(before.Finalizers, after.Finalizers) &&
		equality.Semantic.DeepEqual(before.Status.Networks, after.Status.Networks) &&
		sameCondition(before, after, netv1.ConditionVLANsAssigned) &&
		sameCondition(before, after, netv1.ConditionNICsValid) &&
		sameCondition(before, after, netv1.ConditionLinkAggregationValid) &&
		sameCondition(before, after, netv1.ConditionPortPoliciesValid) &&
		!newErrors(before, after) && !becameReady(before, after)
	quiet := r.ProgressQuiet
	if quiet == 0 {
		quiet = DefaultProgressQuiet
	}
	if quiet < 0 {
		return 0
	}
	return r.progress.Hold(key, mayWait, quiet, time.Now())
}

// newErrors says whether a host is in state error that was not before: a switch refused its
// ports, which its user must see at once, not after the quiet period (by then a retry may have
// gone through, and the refusal would never show).
func newErrors(before, after *netv1.ClusterNetwork) bool {
	for h, st := range after.Status.States {
		if st.State == netv1.HostError && before.Status.States[h].State != netv1.HostError {
			return true
		}
	}
	return false
}

// becameReady says whether Ready turned True: the last host of a burst is configured. Held for
// the quiet period, that write would keep everyone waiting on the condition up to a second
// after every switch port is set.
func becameReady(before, after *netv1.ClusterNetwork) bool {
	return conditions.IsTrue(after, netv1.ConditionReady) && !conditions.IsTrue(before, netv1.ConditionReady)
}

func sameCondition(a, b *netv1.ClusterNetwork, typ string) bool {
	ca, cb := conditions.Get(a, typ), conditions.Get(b, typ)
	if ca == nil || cb == nil {
		return ca == nil && cb == nil
	}
	return ca.Status == cb.Status && ca.Reason == cb.Reason && ca.Message == cb.Message && ca.ObservedGeneration == cb.ObservedGeneration
}

func (r *Reconciler) reconcileNormal(ctx context.Context, cn *netv1.ClusterNetwork) (ctrl.Result, error) {
	nd := &netv1.NetworkDevice{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cn.Namespace, Name: cn.Spec.NetworkDeviceRef}, nd); err != nil {
		if apierrors.IsNotFound(err) {
			set(cn, netv1.ConditionReady, false, netv1.ReasonNetworkDeviceNotFound, fmt.Sprintf("spec.networkDeviceRef: NetworkDevice %s not found in namespace %s; create it or correct the name", cn.Spec.NetworkDeviceRef, cn.Namespace))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	vres, err := r.assignVLANs(ctx, cn)
	if err != nil {
		return ctrl.Result{}, err
	}
	var result ctrl.Result
	cn.Status.Networks = nil
	for _, n := range cn.Spec.Networks {
		if id, ok := vres.assigned[n.Name]; ok {
			cn.Status.Networks = append(cn.Status.Networks, netv1.NetworkStatus{Name: n.Name, VLANID: vlan32(id)})
		}
	}
	allVLANs := vres.problem == ""
	if allVLANs {
		set(cn, netv1.ConditionVLANsAssigned, true, netv1.ReasonAssigned, fmt.Sprintf("%d network(s) have a VLAN id", len(vres.assigned)))
	} else {
		set(cn, netv1.ConditionVLANsAssigned, false, vres.reason, vres.problem)
		result.RequeueAfter = r.vlanRetry()
	}

	// The cache's own objects, not copies: a thousand NICs are read on every reconcile and
	// only the few whose status changes are copied, to be written (setNICStatus).
	nics := &netv1.NICList{}
	if err := r.Client.List(ctx, nics, client.InNamespace(cn.Namespace), client.MatchingFields{fabricindex.NICByNetworkDevice: nd.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	available := map[string]string{}
	states := make(map[string]netv1.HostNetworkState, len(cn.Status.States))
	var selected, miscabled, unbondable, unfit []string
	var writes []nicWrite
	ports := configuredPortsOf(nd)
	views := make([]hostView, len(nics.Items))
	for i := range nics.Items {
		views[i] = viewHost(&nics.Items[i], nd, cn)
	}
	refuseAggregateCollisions(nd, cn, nics.Items, views)
	for i := range nics.Items {
		nic, v := &nics.Items[i], views[i]
		if v.cabling != "" {
			miscabled = append(miscabled, v.cabling)
		}
		if v.lagRefused {
			unbondable = append(unbondable, v.misfit)
		}
		if v.policyRefused {
			unfit = append(unfit, v.misfit)
		}
		// What this manager wrote that the cache does not show yet is as good as shown.
		status := nic.Status
		if unseen, ok := r.nicWrites.Unseen(nicKey(nic), nic.ResourceVersion); ok {
			status = unseen
		}
		isSelected := nic.Labels[netv1.SelectedForLabel] == cn.Name
		switch {
		case isSelected:
			selected = append(selected, nic.Spec.Node)
			st, want := selectedHost(cn, ports, v, vres.assigned, allVLANs)
			if want != nil && !reflect.DeepEqual(status, *want) {
				writes = append(writes, nicWrite{nic: nic, status: *want})
				continue // its state follows the write
			}
			states[nic.Spec.Node] = st
		case status.ClusterNetwork == cn.Name:
			// The host left: clear its status; the switch ports go back to idle.
			writes = append(writes, nicWrite{nic: nic, status: netv1.NICStatus{}, left: true})
		case nic.Status.ClusterNetwork == cn.Name:
			// Cleared, the cache does not show it yet: neither used nor available.
		case nic.Labels[netv1.SelectedForLabel] == "" && status.ClusterNetwork == "" && v.cabling == "" && v.placement != nil && nic.DeletionTimestamp.IsZero():
			available[nic.Spec.Node] = nic.Name
		}
	}
	if err := r.writeNICs(ctx, ports, writes, states); err != nil {
		return ctrl.Result{}, err
	}
	sort.Strings(selected)
	cn.Status.Available, cn.Status.Selected, cn.Status.States = available, selected, states
	byState := map[string]int{"available": len(available)}
	for _, st := range states {
		byState[string(st.State)]++
	}
	metrics.SetFabricHosts(cn.Namespace, cn.Name, byState)
	if len(miscabled) > 0 {
		set(cn, netv1.ConditionNICsValid, false, netv1.ReasonNICMiscabled, strings.Join(miscabled, "; "))
	} else {
		set(cn, netv1.ConditionNICsValid, true, netv1.ReasonValid, "every NIC of the NetworkDevice is cabled to one of its switches")
	}
	setLAGsValid(cn, unbondable)
	setPoliciesValid(cn, unfit)
	setReady(cn, allVLANs)
	return result, nil
}

// selectedHost is a selected host's state and, when its ports can be configured, the NIC
// status it should have (nil: none to write).
func selectedHost(cn *netv1.ClusterNetwork, ports switchPorts, v hostView, vlans map[string]int, allVLANs bool) (netv1.HostNetworkState, *netv1.NICStatus) {
	nic := v.nic
	switch {
	case v.cabling != "":
		return netv1.HostNetworkState{NIC: nic.Name, State: netv1.HostError, Message: v.cabling}, nil
	case v.placement == nil:
		return netv1.HostNetworkState{NIC: nic.Name, State: netv1.HostError, Message: v.misfit}, nil
	case !allVLANs:
		return netv1.HostNetworkState{NIC: nic.Name, State: netv1.HostConfiguring, Message: "waiting for VLAN ids (see condition VLANsAssigned)"}, nil
	case nic.Status.ClusterNetwork != "" && nic.Status.ClusterNetwork != cn.Name:
		return netv1.HostNetworkState{NIC: nic.Name, State: netv1.HostError, Message: fmt.Sprintf("NIC %s is used by ClusterNetwork %s", nic.Name, nic.Status.ClusterNetwork)}, nil
	}
	want := wantStatus(cn, nic.Spec.Node, v.placement, v.lags, vlans)
	return hostState(nic, want, ports), &want
}

// nicWrite is a NIC status to write: a selected host's assignment, or cleared when it left.
type nicWrite struct {
	nic    *netv1.NIC // the cache's object: read, never changed
	status netv1.NICStatus
	left   bool
}

// writeNICs writes the NIC statuses that changed, nicWriters at a time (a thousand hosts joining
// at once must not wait on each other's round trips), and records the selected hosts' states.
// A host that left must have its status cleared: that failure fails the reconcile.
func (r *Reconciler) writeNICs(ctx context.Context, ports switchPorts, writes []nicWrite, states map[string]netv1.HostNetworkState) error {
	errs := make([]error, len(writes))
	var wg sync.WaitGroup
	slots := make(chan struct{}, nicWriters)
	for i, w := range writes {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			errs[i] = r.setNICStatus(ctx, w.nic, w.status)
		}()
	}
	wg.Wait()
	var failed []error
	for i, w := range writes {
		switch {
		case w.left:
			if errs[i] != nil {
				failed = append(failed, errs[i])
			}
		case errs[i] != nil:
			states[w.nic.Spec.Node] = netv1.HostNetworkState{NIC: w.nic.Name, State: netv1.HostConfiguring, Message: "writing NIC status: " + errs[i].Error()}
		default:
			states[w.nic.Spec.Node] = hostState(w.nic, w.status, ports)
		}
	}
	return errors.Join(failed...)
}

// setNICStatus writes a NIC's status when it differs. nic is not changed (it may be the
// cache's own object): a copy is patched.
func (r *Reconciler) setNICStatus(ctx context.Context, nic *netv1.NIC, st netv1.NICStatus) error {
	if reflect.DeepEqual(nic.Status, st) {
		return nil
	}
	changed := nic.DeepCopy()
	changed.Status = st
	if err := r.Client.Status().Patch(ctx, changed, client.MergeFromWithOptions(nic, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	r.nicWrites.Wrote(nicKey(nic), nic.ResourceVersion, st)
	return nil
}

// nicKey names a NIC among the writes the cache may not show yet.
func nicKey(nic client.Object) string {
	return client.ObjectKeyFromObject(nic).String()
}

// reconcileDelete resets every host of the ClusterNetwork, waits until the switches no longer
// carry its VLANs, frees them, then lets the object go.
func (r *Reconciler) reconcileDelete(ctx context.Context, cn *netv1.ClusterNetwork) error {
	nd := &netv1.NetworkDevice{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: cn.Namespace, Name: cn.Spec.NetworkDeviceRef}, nd)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	ndGone := apierrors.IsNotFound(err)
	nics := &netv1.NICList{}
	if err := r.Client.List(ctx, nics, client.InNamespace(cn.Namespace), client.MatchingFields{fabricindex.NICByNetworkDevice: cn.Spec.NetworkDeviceRef}); err != nil {
		return err
	}
	for i := range nics.Items {
		nic := &nics.Items[i]
		if nic.Labels[netv1.SelectedForLabel] == cn.Name {
			base := nic.DeepCopy()
			delete(nic.Labels, netv1.SelectedForLabel)
			if err := r.Client.Patch(ctx, nic, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
				return err
			}
		}
		if nic.Status.ClusterNetwork == cn.Name {
			if err := r.setNICStatus(ctx, nic, netv1.NICStatus{}); err != nil {
				return err
			}
		}
	}
	cn.Status.Selected, cn.Status.States = nil, nil
	if !ndGone {
		ids := map[int32]bool{}
		for _, n := range cn.Status.Networks {
			ids[n.VLANID] = true
		}
		if still := usesVLANs(nd, ids); still != "" {
			set(cn, netv1.ConditionReady, false, netv1.ReasonDeleting, "resetting the hosts' switch ports before deletion: "+still)
			return nil // the NetworkDevice's status change wakes us
		}
	}
	if err := r.releaseAll(ctx, cn); err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(cn, netv1.ClusterNetworkFinalizer)
	return nil
}

func (r *Reconciler) vlanRetry() time.Duration {
	if r.VLANRetry > 0 {
		return r.VLANRetry
	}
	return defaultVLANRetry
}

func set(cn *netv1.ClusterNetwork, typ string, ok bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	conditions.Set(cn, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: cn.Generation})
}

// setLAGsValid says which hosts are refused because their cards cannot be bonded as a network
// asks; they are not offered (status.available), and a selected one is in error.
func setLAGsValid(cn *netv1.ClusterNetwork, refused []string) {
	if len(refused) > 0 {
		sort.Strings(refused)
		set(cn, netv1.ConditionLinkAggregationValid, false, netv1.ReasonLAGRefused, hostList(refused, "; "))
		return
	}
	set(cn, netv1.ConditionLinkAggregationValid, true, netv1.ReasonValid, "every host's bonded cards can be bonded")
}

// setPoliciesValid says which hosts are refused because a switch of theirs cannot apply a
// network's acl or portStatus down; they are not offered, and a selected one is in error.
func setPoliciesValid(cn *netv1.ClusterNetwork, refused []string) {
	if len(refused) > 0 {
		sort.Strings(refused)
		set(cn, netv1.ConditionPortPoliciesValid, false, netv1.ReasonPortPolicyRefused, hostList(refused, "; "))
		return
	}
	set(cn, netv1.ConditionPortPoliciesValid, true, netv1.ReasonValid, "every host's switches can apply its networks' acl and portStatus")
}

// setReady summarises: VLANs assigned and no selected host in error.
func setReady(cn *netv1.ClusterNetwork, allVLANs bool) {
	if !allVLANs {
		c := conditions.Get(cn, netv1.ConditionVLANsAssigned)
		set(cn, netv1.ConditionReady, false, c.Reason, c.Message)
		return
	}
	var failed, configuring []string
	for _, host := range slices.Sorted(maps.Keys(cn.Status.States)) {
		switch s := cn.Status.States[host]; s.State {
		case netv1.HostError:
			failed = append(failed, host+": "+s.Message)
		case netv1.HostConfiguring:
			configuring = append(configuring, host)
		}
	}
	switch {
	case len(failed) > 0:
		set(cn, netv1.ConditionReady, false, netv1.ReasonHostsFailed, hostList(failed, "; "))
	case len(configuring) > 0:
		set(cn, netv1.ConditionReady, false, netv1.ReasonHostsConfiguring, "configuring switch ports of "+hostList(configuring, ", "))
	default:
		set(cn, netv1.ConditionReady, true, netv1.ReasonAllReady, fmt.Sprintf("%d selected host(s) ready, %d available", len(cn.Status.Selected), len(cn.Status.Available)))
	}
}

// SetupWithManager watches ClusterNetworks, the NICs and NetworkDevice they use, and the VLAN
// locks (a freed id wakes the ClusterNetworks of its device).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	if err := fabricindex.Setup(ctx, mgr); err != nil {
		return err
	}
	byDevice := func(ctx context.Context, ns, nd string) []reconcile.Request {
		// Names only: no copy of each ClusterNetwork (and its thousand-host status) per NIC event.
		return mapping.Listed(ctx, r.Client, &netv1.ClusterNetworkList{}, "the ClusterNetworks of NetworkDevice "+nd, nil,
			client.InNamespace(ns), client.MatchingFields{fabricindex.ClusterNetworkByNetworkDevice: nd}, client.UnsafeDisableDeepCopy)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&netv1.ClusterNetwork{}, builder.WithPredicates(watchfilter.Predicate(r.WatchFilter))).
		Watches(&netv1.NIC{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return byDevice(ctx, o.GetNamespace(), o.(*netv1.NIC).Spec.NetworkDeviceRef)
		})).
		// A deleted NIC's last written status will never be seen.
		Watches(&netv1.NIC{}, handler.Funcs{DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.nicWrites.Forget(nicKey(e.Object))
		}}).
		Watches(&netv1.NetworkDevice{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return byDevice(ctx, o.GetNamespace(), o.GetName())
		})).
		Watches(&coordinationv1.Lease{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			nd := o.GetLabels()[netv1.VLANLockNetworkDeviceLabel]
			if nd == "" {
				return nil
			}
			return byDevice(ctx, o.GetNamespace(), nd)
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Named("clusternetwork").
		Complete(r)
}
