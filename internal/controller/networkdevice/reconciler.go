package networkdevice

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/cluster-api/util/conditions"
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
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/cachelag"
	"github.com/metalwire/metalwire/internal/controller/fabricindex"
	"github.com/metalwire/metalwire/internal/controller/waits"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
	"github.com/metalwire/metalwire/internal/metrics"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// Defaults of the Reconciler's knobs.
const (
	// DefaultConcurrency is how many switches are worked at once: a switch's pass waits on the
	// switch (a login takes seconds on some), not on the manager's CPU, and 10 is what Cluster
	// API providers default their controllers' concurrency to.
	DefaultConcurrency = 10
	// DefaultPassQuiet is the least time between two passes over one NetworkDevice's switches.
	DefaultPassQuiet  = time.Second
	defaultRetryFirst = time.Second
	defaultRetryLast  = 5 * time.Minute
	defaultTimeout    = 30 * time.Second
)

// Reconciler manages the switches of NetworkDevices.
type Reconciler struct {
	Client client.Client
	// Recorder reports drift as events on the NetworkDevice; nil records none.
	Recorder events.EventRecorder
	// Drivers maps networkOS to a driver; nil uses switchdriver.Default. Tests hand in their own.
	Drivers *switchdriver.Registry
	// Concurrency bounds how many switches are worked at once, across every NetworkDevice
	// (--fabric-concurrency). Each switch gets one batch at a time regardless.
	Concurrency int
	// RetryMin and RetryMax bound the backoff after a switch failed; Timeout bounds one
	// switch's session.
	RetryMin, RetryMax, Timeout time.Duration
	// WatchFilter is --watch-filter: with a value, only NetworkDevices labelled with it are
	// configured; another manager's switches are never reached.
	WatchFilter string
	// PassQuiet is the least time between two passes over one NetworkDevice's switches (zero
	// means DefaultPassQuiet, negative none): a change after a quiet spell is applied at once,
	// and the NIC changes of a burst (a thousand hosts joining) that come within it are applied
	// together, in one batch per switch and one status write, not in one pass each.
	PassQuiet time.Duration
	// HostReportInterval is how often hosts are asked again while one behind a configured port
	// has not reported its network configured (switches that hear from hosts); zero:
	// DefaultHostReportInterval.
	HostReportInterval time.Duration
	// ReadAgainAfter is how long a switch read and left in line is not logged in to again by a
	// pass that wants nothing new of it (see inline.go); zero or negative: every pass reads
	// every switch. The manager sets half its --sync-period.
	ReadAgainAfter time.Duration

	once    sync.Once
	inLine  inLine
	reports hostReports
	slots   chan struct{}
	locks   sync.Map // switch key -> *sync.Mutex
	passes  waits.Rewrites
	// records are the status.switches written last, until the cache shows them.
	records cachelag.Writes[[]netv1.SwitchStatus]
	// secrets are the credentials Secrets the NetworkDevices name, each watched by name.
	secrets *credentialSecrets
	// attachments says the cluster serves BMO's HostNetworkAttachment kind, so hosts' attachments
	// are applied.
	attachments bool
	// bareMetalSwitches says the cluster serves BMO's BareMetalSwitch kind.
	bareMetalSwitches bool
}

// +kubebuilder:rbac:groups=network.metalwire.io,resources=networkdevices,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=network.metalwire.io,resources=networkdevices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=network.metalwire.io,resources=nics,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts;baremetalswitches;hostnetworkattachments,verbs=get;list;watch

func (r *Reconciler) init() {
	r.once.Do(func() {
		if r.Drivers == nil {
			r.Drivers = switchdriver.Default
		}
		if r.Concurrency <= 0 {
			r.Concurrency = DefaultConcurrency
		}
		if r.RetryMin <= 0 {
			r.RetryMin = defaultRetryFirst
		}
		if r.RetryMax <= 0 {
			r.RetryMax = defaultRetryLast
		}
		if r.Timeout <= 0 {
			r.Timeout = defaultTimeout
		}
		r.slots = make(chan struct{}, r.Concurrency)
	})
}

// Reconcile brings every switch of one NetworkDevice in line with what its hosts need.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	r.init()
	key := req.String()
	nd := &netv1.NetworkDevice{}
	if err := r.Client.Get(ctx, req.NamespacedName, nd); err != nil {
		if apierrors.IsNotFound(err) {
			r.passes.Forget(key)
			r.records.Forget(key)
			r.secrets.use(req.NamespacedName, nil)
			metrics.ForgetNetworkDevice(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !nd.DeletionTimestamp.IsZero() || !watchfilter.Matches(nd, r.WatchFilter) {
		r.passes.Forget(key)
		r.secrets.use(req.NamespacedName, nil)
		return ctrl.Result{}, nil
	}
	if r.PassQuiet >= 0 {
		if hold := r.passes.Hold(key, true, cmp.Or(r.PassQuiet, DefaultPassQuiet), time.Now()); hold > 0 {
			ctrl.LoggerFrom(ctx).V(1).Info("pass held", "for", hold)
			return ctrl.Result{RequeueAfter: hold}, nil
		}
	}
	// The record of what the switches carry is the one this manager last wrote, also when the
	// cache does not show it yet: a pass that started from an older record would forget a port
	// configured since, and never reset it once its host leaves.
	if written, ok := r.records.Unseen(key, nd.ResourceVersion); ok {
		nd.Status.Switches = copySwitches(written)
	}
	r.secrets.use(req.NamespacedName, r.secretsNamed(ctx, nd))
	// One write, of the status alone (the controller writes nothing else of the NetworkDevice):
	// its answer gives the version it made, which the record of the switches waits for. Cluster
	// API's patch helper writes conditions and the rest of status apart and hands no version
	// back, so a cache showing only the conditions, or the previous pass's write, would pass
	// for this one and a pass would start from a record that lacks the ports set since.
	before := nd.DeepCopy()
	defer func() {
		if equality.Semantic.DeepEqual(before.Status, nd.Status) {
			return
		}
		written := nd.DeepCopy()
		if err := r.Client.Status().Patch(ctx, written, client.MergeFrom(before)); err != nil {
			reterr = errors.Join(reterr, fmt.Errorf("writing the status of NetworkDevice %s: %w", key, err))
			return
		}
		r.records.WroteAt(key, written.ResourceVersion, copySwitches(nd.Status.Switches))
	}()

	// Read only: the cache's own objects, not a copy of every NIC per reconcile.
	nics := &netv1.NICList{}
	if err := r.Client.List(ctx, nics, client.InNamespace(nd.Namespace), client.MatchingFields{fabricindex.NICByNetworkDevice: nd.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	fromAttachments, overridden, notes, err := r.attachmentWants(ctx, nd, nics.Items)
	if err != nil {
		return ctrl.Result{}, err
	}
	desired := fabric.Desired(append(PortWants(nd, nics.Items), fromAttachments...))
	r.setAttachmentsApplied(nd, len(fromAttachments), overridden, notes)

	// The switches of spec, then those removed from it that still carry what the controller
	// configured: they are reset to nothing wanted, through the spec they had.
	work := make([]switchWork, 0, len(nd.Spec.Switches))
	for _, sw := range nd.Spec.Switches {
		work = append(work, switchWork{sw: sw, want: desired[sw.Name], prev: previousStatus(nd, sw.Name)})
	}
	work = append(work, removedSwitches(nd)...)
	results := make([]netv1.SwitchStatus, len(work))
	hostKeys := make([]*fabric.HostKeyError, len(work))
	hosts := make([]*switchReports, len(work))
	dryRun := nd.Annotations[netv1.DryRunAnnotation] == "true"
	var wg sync.WaitGroup
	for i, w := range work {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], hostKeys[i], hosts[i] = r.syncSwitch(ctx, nd, w.sw, w.want, w.prev, dryRun)
		}()
	}
	wg.Wait()
	nd.Status.Switches = nd.Status.Switches[:0]
	for i, st := range results {
		if i >= len(nd.Spec.Switches) {
			if st.Reachable && len(st.Ports) == 0 && len(st.VLANs) == 0 {
				continue // reset: the removed switch's record goes
			}
			st.Removed = true
		}
		nd.Status.Switches = append(nd.Status.Switches, st)
	}
	r.reportDrift(nd, dryRun)
	res := r.setConditions(nd, hostKeys)
	if again := r.setHostsCondition(ctx, nd, hosts); again > 0 && (res.RequeueAfter == 0 || again < res.RequeueAfter) {
		res.RequeueAfter = again
	}
	return res, nil
}

// switchWork is one switch to bring in line: how to reach it, what it should carry, and the
// record of what the controller configured there.
type switchWork struct {
	sw   netv1.Switch
	want fabric.State
	prev netv1.SwitchStatus
}

// removedSwitches are the switches recorded in status but gone from spec.switches that still
// carry ports or VLANs the controller configured; nothing is wanted of them any more. A record
// without the spec it was configured with (written before configuredWith existed) cannot be
// reached and is dropped.
func removedSwitches(nd *netv1.NetworkDevice) []switchWork {
	var out []switchWork
	for _, prev := range nd.Status.Switches {
		if nd.SwitchNamed(prev.Name) != nil || prev.ConfiguredWith == nil || (len(prev.Ports) == 0 && len(prev.VLANs) == 0) {
			continue
		}
		out = append(out, switchWork{sw: *prev.ConfiguredWith, want: fabric.State{Ports: map[string]fabric.Port{}}, prev: prev})
	}
	return out
}

// PortWants lists the switch ports hosts need, from the NIC statuses the clusternetwork
// controller writes; a bonded card's port is a member of its bond (nd names the MLAG pairs).
func PortWants(nd *netv1.NetworkDevice, nics []netv1.NIC) []fabric.PortWant {
	var wants []fabric.PortWant
	for _, nic := range nics {
		if nic.Status.ClusterNetwork == "" {
			continue
		}
		for i, a := range nic.Status.NICs {
			if a == nil || i >= len(nic.Spec.NICs) {
				continue
			}
			card := &nic.Spec.NICs[i]
			sp := card.NetworkDevice.Switch
			need := fabric.CardNeed{Switch: sp.Name, Port: sp.Port.String(), Mode: fabric.ModeAccess, Down: a.PortStatus == netv1.PortDown, HostMAC: card.MAC}
			if a.PortMode == netv1.PortModeTrunk {
				need.Mode = fabric.ModeTrunk
			}
			if sn := card.SmartNIC; sn != nil {
				need.SmartNIC = &fabric.CardSwitch{Switch: sn.Switch, HostPort: sn.HostPort, UplinkPort: sn.UplinkPort}
			} else {
				need.LAG = lagWant(nd, sp.Name, a.LAG)
			}
			// A trunk of several networks lists them all (network and vlanID name the first).
			for _, n := range append([]netv1.NetworkStatus{{Name: a.Network, VLANID: a.VLANID}}, a.Networks...) {
				need.Networks = append(need.Networks, fabric.CardNetwork{Name: n.Name, VLAN: int(n.VLANID), ACL: aclWant(a, n.Name)})
			}
			wants = append(wants, need.Wants()...)
		}
	}
	return wants
}

func copySwitches(in []netv1.SwitchStatus) []netv1.SwitchStatus {
	out := make([]netv1.SwitchStatus, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

func previousStatus(nd *netv1.NetworkDevice, name string) netv1.SwitchStatus {
	for _, s := range nd.Status.Switches {
		if s.Name == name {
			return s
		}
	}
	return netv1.SwitchStatus{Name: name}
}

// syncSwitch reads one switch back and applies the difference, one batch at a time per switch.
// On failure the switch keeps its previous record: what it carries is unknown, so nothing is
// forgotten. In dry run nothing is sent and the record stays as it was; the batch the switch
// would get is in plannedChanges.
func (r *Reconciler) syncSwitch(ctx context.Context, nd *netv1.NetworkDevice, sw netv1.Switch, want fabric.State, prev netv1.SwitchStatus, dryRun bool) (netv1.SwitchStatus, *fabric.HostKeyError, *switchReports) {
	key := nd.Namespace + "/" + nd.Name + "/" + sw.Name
	lock, _ := r.locks.LoadOrStore(key, &sync.Mutex{})
	lock.(*sync.Mutex).Lock()
	defer lock.(*sync.Mutex).Unlock()
	// The switch as it is reached: a BareMetalSwitch's address, OS and credentials resolved.
	reached, reachErr := r.effectiveSwitch(ctx, nd.Namespace, sw)
	credentials, known := r.credentialsVersion(ctx, nd.Namespace, reached)
	known = known && reachErr == nil
	if !dryRun && known && prev.Reachable && r.inLine.fresh(key, nd, reached, credentials, want, r.ReadAgainAfter, time.Now()) {
		return prev, nil, nil
	}
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		prev.Reachable, prev.LastError = false, ctx.Err().Error()
		return prev, nil, &switchReports{sw: sw.Name, err: ctx.Err()}
	}
	defer func() { <-r.slots }()

	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	labels := []string{nd.Namespace, nd.Name, sw.Name}
	pass, err := r.apply(ctx, nd, reached, reachErr, want, prev, dryRun)
	r.inLine.record(key, nd, reached, credentials, want, known && err == nil && !dryRun && pass.hosts == nil && len(pass.drifted) == 0, time.Now())
	if err != nil {
		metrics.FabricErrors.WithLabelValues(labels...).Inc()
		ctrl.LoggerFrom(ctx).Info("switch not in line", "switch", sw.Name, "error", err.Error())
		out := prev
		out.Name, out.Reachable, out.LastError = sw.Name, false, err.Error()
		var hk *fabric.HostKeyError
		if errors.As(err, &hk) {
			return out, hk, nil
		}
		return out, nil, &switchReports{sw: sw.Name, err: err}
	}
	out := netv1.SwitchStatus{Name: sw.Name, Reachable: true, Version: pass.version, Ports: ConfiguredPorts(want), VLANs: vlanIDs(want), ACLs: ConfiguredACLs(want)}
	if dryRun {
		out = *prev.DeepCopy()
		out.Name, out.Reachable, out.LastError, out.Version = sw.Name, true, "", pass.version
		out.PlannedChanges = []string{}
		for _, c := range pass.batch {
			out.PlannedChanges = append(out.PlannedChanges, c.String())
		}
	}
	out.Drifted = r.driftedPorts(nd, sw.Name, prev.Drifted, pass.drifted, !dryRun && nd.Spec.DriftPolicy != netv1.DriftReport)
	if !dryRun && (len(out.Ports) > 0 || len(out.VLANs) > 0) {
		// The connection it was configured through, to reset it should the switch leave spec:
		// resolved, so that a switch taken from a BareMetalSwitch is reset even once that is gone.
		out.ConfiguredWith = pass.sw.DeepCopy()
		out.ConfiguredWith.BareMetalSwitchRef = nil
	}
	return out, nil, pass.hosts
}

// pass is what one pass over a switch read and did.
type pass struct {
	// sw is the switch as reached: a BareMetalSwitch's address, OS and credentials resolved.
	sw      netv1.Switch
	version string
	// drifted are the configured ports the read-back found changed at the switch.
	drifted []fabric.DriftedPort
	// batch is what was sent (or, in dry run, would be).
	batch fabric.Batch
	// hosts is what the hosts behind the ports reported, for switches that hear from them.
	hosts *switchReports
}

// apply brings one switch in line. sw is the switch as reached (effectiveSwitch), reachErr why
// it could not be resolved.
func (r *Reconciler) apply(ctx context.Context, nd *netv1.NetworkDevice, sw netv1.Switch, reachErr error, want fabric.State, prev netv1.SwitchStatus, dryRun bool) (pass, error) {
	if reachErr != nil {
		return pass{}, reachErr
	}
	drv, err := r.Drivers.For(string(sw.NetworkOS))
	if err != nil {
		return pass{}, err
	}
	ep, err := r.endpoint(ctx, nd, sw, drv)
	if err != nil {
		return pass{}, err
	}
	start := time.Now()
	sess, err := drv.Connect(ctx, ep)
	if err != nil {
		return pass{}, err
	}
	defer func() { _ = sess.Close() }()
	info, err := sess.Info(ctx)
	if err != nil {
		return pass{}, fmt.Errorf("reading the switch's version: %w", err)
	}
	if err := canApply(drv, sw, want); err != nil {
		return pass{}, err
	}
	rec := recordOf(prev)
	names := slices.Concat(rec.Ports, rec.LAGs, rec.ACLs)
	for n := range want.Ports {
		names = append(names, n)
	}
	for n := range want.LAGs {
		names = append(names, n)
	}
	for n := range want.ACLs {
		names = append(names, n)
	}
	have, err := sess.Read(ctx, names)
	if err != nil {
		return pass{}, fmt.Errorf("reading ports back: %w", err)
	}
	idle := int(sw.IdleVLAN)
	if idle == 0 {
		idle = 1
	}
	out := pass{sw: sw, version: info.Version, drifted: fabric.Drift(portsOf(prev.Ports), have)}
	out.batch = fabric.Diff(want, have, rec, idle)
	if nd.Spec.DriftPolicy == netv1.DriftReport {
		out.batch = fabric.WithoutRepairs(out.batch, out.drifted, want, idle)
	}
	if dryRun {
		return out, nil
	}
	if len(out.batch) > 0 {
		if err := sess.Apply(ctx, out.batch); err != nil {
			return pass{}, fmt.Errorf("applying %d change(s): %w", len(out.batch), err)
		}
	}
	if out.hosts = r.readHostReports(ctx, nd.Namespace+"/"+nd.Name+"/"+sw.Name, sess, want); out.hosts != nil {
		out.hosts.sw = sw.Name
	}
	if len(out.batch) == 0 {
		return out, nil
	}
	labels := []string{nd.Namespace, nd.Name, sw.Name}
	metrics.FabricBatches.WithLabelValues(labels...).Inc()
	metrics.FabricChanges.WithLabelValues(labels...).Add(float64(len(out.batch)))
	metrics.FabricBatchDuration.WithLabelValues(labels...).Observe(time.Since(start).Seconds())
	ctrl.LoggerFrom(ctx).Info("switch configured", "switch", sw.Name, "changes", len(out.batch))
	return out, nil
}

// endpoint builds how to reach a switch, with credentials read from its Secret.
func (r *Reconciler) endpoint(ctx context.Context, nd *netv1.NetworkDevice, sw netv1.Switch, drv fabric.Driver) (fabric.Endpoint, error) {
	ep := fabric.Endpoint{Switch: sw.Name, Address: sw.Address, Port: int(sw.Port), HostKey: sw.HostKey, Bridge: sw.Bridge, OpenFlowRemote: sw.OpenFlowRemote, IdleVLAN: int(sw.IdleVLAN)}
	if ep.IdleVLAN == 0 {
		ep.IdleVLAN = 1
	}
	if sw.EquinixMetal != nil {
		ep.Project, ep.Metro = sw.EquinixMetal.ProjectID, sw.EquinixMetal.Metro
	}
	if a := sw.Aggregates; a != nil {
		ep.Aggregates = &fabric.Aggregates{First: int(a.First), Last: int(a.Last), Prefix: a.Prefix}
	}
	if pair, self, peer := nd.SONiCMCLAGOf(sw.Name); pair != nil {
		ep.MCLAG = &fabric.MCLAGDomain{Pair: pair.Name, Domain: int(pair.Domain), Peer: peer.Switch,
			SourceAddress: self.SourceAddress, PeerAddress: peer.SourceAddress, PeerLink: self.PeerLink}
	}
	if ep.Port == 0 {
		ep.Port = drv.DefaultPort()
	}
	if sw.CredentialsRef == nil {
		return ep, nil
	}
	secret, err := r.secrets.get(ctx, client.ObjectKey{Namespace: nd.Namespace, Name: sw.CredentialsRef.Name})
	if err != nil {
		return ep, fmt.Errorf("credentialsRef: reading Secret %s: %w", sw.CredentialsRef.Name, err)
	}
	c, err := CredentialsFrom(secret)
	if err != nil {
		return ep, fmt.Errorf("credentialsRef: %w", err)
	}
	ep.Credentials = c
	return ep, nil
}

// vlan32 narrows a VLAN id, which comes from the API's int32 fields and lies in 1-4094.
func vlan32(v int) int32 { return int32(v) } //nolint:gosec // VLAN ids are at most 4094

func vlanIDs(want fabric.State) []int32 {
	out := make([]int32, 0, len(want.VLANs))
	for _, v := range want.VLANs {
		out = append(out, vlan32(v.ID))
	}
	return out
}

// setConditions sets Reachable and HostKeyTrusted and says when to try failed switches again:
// the longer a switch has been failing, the longer the wait, between RetryMin and RetryMax.
func (r *Reconciler) setConditions(nd *netv1.NetworkDevice, hostKeys []*fabric.HostKeyError) ctrl.Result {
	var failed []string
	for _, s := range nd.Status.Switches {
		if !s.Reachable {
			failed = append(failed, fmt.Sprintf("switch %s: %s", s.Name, s.LastError))
		}
	}
	var untrusted []string
	for _, hk := range hostKeys {
		if hk != nil {
			untrusted = append(untrusted, hk.Error())
		}
	}
	if len(untrusted) == 0 {
		r.set(nd, netv1.ConditionHostKeyTrusted, metav1.ConditionTrue, netv1.ReasonHostKeyTrusted, "every SSH switch showed its pinned host key, or none uses SSH")
	} else {
		r.set(nd, netv1.ConditionHostKeyTrusted, metav1.ConditionFalse, netv1.ReasonHostKeyUnknown, listed(untrusted))
	}
	if len(failed) == 0 {
		r.set(nd, netv1.ConditionReachable, metav1.ConditionTrue, netv1.ReasonReachable, fmt.Sprintf("all %d switch(es) configured", len(nd.Status.Switches)))
		return ctrl.Result{}
	}
	prev := conditions.Get(nd, netv1.ConditionReachable)
	r.set(nd, netv1.ConditionReachable, metav1.ConditionFalse, netv1.ReasonUnreachable, listed(failed))
	wait := r.RetryMin
	if prev != nil && prev.Status == metav1.ConditionFalse {
		wait = max(wait, min(time.Since(prev.LastTransitionTime.Time), r.RetryMax))
	}
	return ctrl.Result{RequeueAfter: wait}
}

func (r *Reconciler) set(nd *netv1.NetworkDevice, typ string, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(nd, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: nd.Generation})
}

// listed joins a condition's lines with "; ", at most maxListed of them and how many more: a
// condition message must stay under the API's 32 KiB however many switches, ports or hosts it
// speaks of (status.switches has every one).
func listed(lines []string) string {
	const maxListed = 20
	if len(lines) <= maxListed {
		return strings.Join(lines, "; ")
	}
	return fmt.Sprintf("%s; and %d more (see status.switches)", strings.Join(lines[:maxListed], "; "), len(lines)-maxListed)
}

// resync lets through the informer's periodic resync: an update event of an unchanged object.
var resync = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion()
}}

// SetupWithManager watches NetworkDevices, the NICs cabled to them and the Secrets their
// switches' credentials are in.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	r.init()
	if err := fabricindex.Setup(ctx, mgr); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("a client for the credentials Secrets: %w", err)
	}
	r.secrets = newCredentialSecrets(cs)
	r.secrets.ctx = ctx
	b := ctrl.NewControllerManagedBy(mgr)
	if r.bareMetalSwitches = served(mgr.GetRESTMapper(), "BareMetalSwitch"); r.bareMetalSwitches {
		if _, err := mgr.GetCache().GetInformer(ctx, &bmov1.BareMetalSwitch{}, cache.BlockUntilSynced(false)); err != nil {
			return err
		}
		b = b.Watches(&bmov1.BareMetalSwitch{}, handler.EnqueueRequestsFromMapFunc(r.allDevices(mgr.GetClient())))
	}
	if r.attachments = served(mgr.GetRESTMapper(), "HostNetworkAttachment"); r.attachments {
		// Made now, so it lists before the manager says it is ready (the kind is not in
		// controller.Informers: clusters without it must run too).
		if _, err := mgr.GetCache().GetInformer(ctx, &bmov1.HostNetworkAttachment{}, cache.BlockUntilSynced(false)); err != nil {
			return err
		}
		// A host claimed or released, its interfaces changed, or an attachment changed: the
		// ports of the devices concerned change.
		b = b.Watches(&bmov1.BareMetalHost{}, handler.EnqueueRequestsFromMapFunc(r.hostToDevices(mgr.GetClient())),
			builder.WithPredicates(attachmentInputsChanged)).
			Watches(&bmov1.HostNetworkAttachment{}, handler.EnqueueRequestsFromMapFunc(r.allDevices(mgr.GetClient())))
	} else {
		ctrl.LoggerFrom(ctx).Info("HostNetworkAttachment is not served by this cluster (baremetal-operator before v0.14): hosts' attachments are not applied")
	}
	return b.
		// Its own status writes start no pass: only its spec (generation), labels (the watch
		// filter), annotations and the periodic resync (--sync-period, which reads every switch
		// back and puts right what was changed by hand) do.
		For(&netv1.NetworkDevice{}, builder.WithPredicates(watchfilter.Predicate(r.WatchFilter),
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}, resync))).
		Watches(&netv1.NIC{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			nic := o.(*netv1.NIC)
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: nic.Namespace, Name: nic.Spec.NetworkDeviceRef}}}
		})).
		// A credentials Secret created, fixed or rotated starts a pass of the devices naming it.
		WatchesRawSource(source.Channel(r.secrets.events, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Named("networkdevice").
		Complete(r)
}
