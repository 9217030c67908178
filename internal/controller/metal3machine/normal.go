package metal3machine

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/metrics"
)

// maxClaimAttempts bounds how many hosts one reconcile tries after losing races for the first.
const maxClaimAttempts = 5

// errCacheBehind says the cache has not yet seen a change this controller made; a retry soon
// will.
var errCacheBehind = errors.New("cache behind the API server")

func (r *Reconciler) reconcileNormal(ctx context.Context, m3m *infrav1.Metal3Machine, machine *clusterv1.Machine, cluster *clusterv1.Cluster) (ctrl.Result, error) {
	notAssociated := func(reason, message string) {
		setCondition(m3m, infrav1.AssociateBareMetalHostCondition, metav1.ConditionFalse, reason, message)
	}
	switch {
	case machine == nil:
		notAssociated(infrav1.WaitingForMetal3MachineOwnerRefReason,
			"waiting for a Cluster API Machine to own this Metal3Machine (metadata.ownerReferences); check that a Machine's spec.infrastructureRef names it")
		return ctrl.Result{}, nil
	case cluster == nil:
		notAssociated(infrav1.WaitingForClusterInfrastructureReadyReason,
			fmt.Sprintf("waiting for the Cluster of Machine %s: its label %s is %q and no such Cluster exists in namespace %s",
				machine.Name, clusterv1.ClusterNameLabel, machine.Labels[clusterv1.ClusterNameLabel], machine.Namespace))
		return ctrl.Result{}, nil
	}

	host, err := r.associatedHost(ctx, m3m)
	if err != nil || host == nil && m3m.Annotations[infrav1.HostAnnotation] != "" {
		return ctrl.Result{}, err
	}
	if host == nil {
		// Conditions a host is claimed under: checked only before the claim, so that a later
		// change (the Cluster re-marked unprovisioned) cannot strand a claimed host.
		switch {
		case !ptr.Deref(cluster.Status.Initialization.InfrastructureProvisioned, false):
			notAssociated(infrav1.WaitingForClusterInfrastructureReadyReason,
				fmt.Sprintf("waiting for Cluster %s's infrastructure (its Metal3Cluster) to be provisioned", cluster.Name))
			return ctrl.Result{}, nil
		case userDataRef(m3m, machine) == nil:
			notAssociated(infrav1.WaitingForBootstrapDataReason,
				fmt.Sprintf("waiting for bootstrap data: Machine %s has no spec.bootstrap.dataSecretName yet (or set spec.userData)", machine.Name))
			return ctrl.Result{}, nil
		}
	}

	data, waitingFor, err := r.hostData(ctx, m3m, machine)
	if err != nil {
		return ctrl.Result{}, err
	}
	cn, cnName, err := r.clusterNetworkOf(ctx, cluster)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case cnName != "" && cn == nil:
		msg := fmt.Sprintf("Metal3Cluster %s names ClusterNetwork %q in spec.clusterNetwork, which does not exist in namespace %s; create it or correct the field",
			cluster.Spec.InfrastructureRef.Name, cnName, cluster.Namespace)
		setCondition(m3m, SwitchPortsReadyCondition, metav1.ConditionFalse, ClusterNetworkNotFoundReason, msg)
		if host == nil {
			notAssociated(ClusterNetworkNotFoundReason, msg)
		} else {
			// The claimed host is provisioned into its networks only once they are known.
			setCondition(m3m, BareMetalHostProvisionedCondition, metav1.ConditionFalse, ClusterNetworkNotFoundReason, msg)
		}
		return ctrl.Result{RequeueAfter: r.HostRecheck}, nil
	case cn != nil && host == nil:
		// A host is claimed without its image: it is provisioned only once its ports are ready.
		waitingFor = "waiting for the host's switch ports"
	}
	// One function shapes the host for the claim and for every later reconcile, so that a
	// machine whose data is known claims and provisions its host in a single write.
	shape := func(h *bmov1.BareMetalHost) {
		shapeHost(h, m3m, cluster.Name, data, waitingFor == "")
	}

	if host == nil {
		var why string
		var invalid *invalidInputError
		host, why, err = r.claimHost(ctx, m3m, machine, cn, shape)
		switch {
		case errors.Is(err, errCacheBehind):
			return ctrl.Result{RequeueAfter: time.Second}, nil
		case errors.As(err, &invalid):
			notAssociated(invalid.reason, invalid.err.Error())
			return ctrl.Result{}, reconcile.TerminalError(invalid.err)
		case err != nil:
			notAssociated(infrav1.AssociateBareMetalHostFailedReason, err.Error())
			return ctrl.Result{}, err
		case host == nil:
			reason := infrav1.AssociateBareMetalHostFailedReason
			if cn != nil {
				reason = NoNetworkHostReason
			}
			// Hosts becoming free wake waiting machines; the recheck is a safety net.
			requeue := ctrl.Result{RequeueAfter: r.HostRecheck}
			old := conditions.Get(m3m, infrav1.AssociateBareMetalHostCondition)
			if old != nil && old.Message == why {
				return requeue, nil
			}
			// The words of a lasting wait (which hosts are claimed, by whom) change with every
			// claim of a scale-up: they are rewritten at most once per quiet period.
			onlyWords := old != nil && old.Status == metav1.ConditionFalse && old.Reason == reason
			if hold := r.waitWords.Hold(string(m3m.UID), onlyWords, r.QuietWaits, time.Now()); hold > 0 {
				return ctrl.Result{RequeueAfter: min(hold, r.HostRecheck)}, nil
			}
			r.Recorder.Eventf(m3m, nil, corev1.EventTypeWarning, infrav1.AssociateBareMetalHostFailedReason, "ClaimHost", "%s", why)
			notAssociated(reason, why)
			return requeue, nil
		}
		r.waitWords.Forget(string(m3m.UID))
		r.Recorder.Eventf(m3m, host, corev1.EventTypeNormal, infrav1.AssociateBareMetalHostSuccessReason, "ClaimHost", "claimed BareMetalHost %s", host.Name)
		metrics.HostsAssociated.Inc()
	}

	if m3m.Annotations == nil {
		m3m.Annotations = map[string]string{}
	}
	m3m.Annotations[infrav1.HostAnnotation] = host.Namespace + "/" + host.Name
	m3m.Spec.ProviderID = providerID(host, m3m)
	portsWaiting := ""
	if cn != nil {
		var gaveBack bool
		portsWaiting, gaveBack, err = r.reconcilePorts(ctx, m3m, host, cn)
		switch {
		case err != nil:
			return ctrl.Result{}, err
		case gaveBack:
			// The next reconcile picks another host; the cache must first see the release.
			return ctrl.Result{RequeueAfter: time.Second}, nil
		case portsWaiting != "":
			waitingFor = portsWaiting
		}
	}
	if waitingFor == "" {
		m3m.Status.UserData, m3m.Status.MetaData, m3m.Status.NetworkData = data.UserData, data.MetaData, data.NetworkData
	}

	desired := host.DeepCopy()
	shape(desired)
	if !equality.Semantic.DeepEqual(host.Spec, desired.Spec) || !equality.Semantic.DeepEqual(host.ObjectMeta, desired.ObjectMeta) {
		if err := r.Client.Patch(ctx, desired, client.MergeFrom(host)); err != nil {
			return ctrl.Result{}, fmt.Errorf("updating BareMetalHost %s: %w", host.Name, err)
		}
		host = desired
	}

	r.reportHost(m3m, host, waitingFor, portsWaiting)
	if !provisioned(host) {
		return ctrl.Result{}, nil
	}
	return r.setNodeProviderID(ctx, m3m, cluster, host)
}

// hostData gathers what the host boots with. waitingFor says what is still missing, or is "".
func (r *Reconciler) hostData(ctx context.Context, m3m *infrav1.Metal3Machine, machine *clusterv1.Machine) (hostData, string, error) {
	user := userDataRef(m3m, machine)
	if user == nil {
		return hostData{}, fmt.Sprintf("waiting for bootstrap data: Machine %s has no spec.bootstrap.dataSecretName (or set spec.userData)", machine.Name), nil
	}
	meta, network, ok, err := r.resolveData(ctx, m3m)
	switch {
	case err != nil:
		return hostData{}, "", err
	case !ok:
		return hostData{}, conditionMessage(m3m, infrav1.Metal3MachineDataReadyCondition), nil
	}
	user, waitingFor, err := r.vlanUserData(ctx, m3m, user, network)
	if err != nil || waitingFor != "" {
		return hostData{}, waitingFor, err
	}
	return hostData{UserData: user, MetaData: meta, NetworkData: network}, "", nil
}

// reportHost copies what Cluster API reads from the host (addresses, provisioned) and sets the
// conditions Ready is summarised from: the host is claimed, and how far it is provisioned. Both
// are set here, once the host is shaped, so that a reconcile failing on the way leaves Ready as
// it was. portsWaiting, when set, is the switch ports' wait the host's provisioning waits for:
// it is said in the ports' own words.
func (r *Reconciler) reportHost(m3m *infrav1.Metal3Machine, host *bmov1.BareMetalHost, waitingFor, portsWaiting string) {
	m3m.Status.Addresses = addresses(host)
	setCondition(m3m, infrav1.AssociateBareMetalHostCondition, metav1.ConditionTrue, infrav1.AssociateBareMetalHostSuccessReason, "")
	c := hostProvisionedCondition(host, waitingFor)
	if portsWaiting != "" {
		c = metav1.Condition{Type: BareMetalHostProvisionedCondition, Status: metav1.ConditionFalse, Reason: WaitingForSwitchPortsReason, Message: portsWaiting}
	}
	if c.Reason == HostErrorReason && conditionMessage(m3m, BareMetalHostProvisionedCondition) != c.Message {
		r.Recorder.Eventf(m3m, host, corev1.EventTypeWarning, HostErrorReason, "Provision", "%s", c.Message)
	}
	setCondition(m3m, c.Type, c.Status, c.Reason, c.Message)
	if provisioned(host) && !ptr.Deref(m3m.Status.Initialization.Provisioned, false) {
		m3m.Status.Initialization.Provisioned = ptr.To(true)
		m3m.Status.LastUpdated = ptr.To(metav1.Now())
		r.Recorder.Eventf(m3m, host, corev1.EventTypeNormal, "Provisioned", "Provision", "host %s is provisioned", host.Name)
	}
}

// failureDomain is where Cluster API placed the machine: the Metal3Machine's own field if set,
// else the Machine's.
func failureDomain(m3m *infrav1.Metal3Machine, machine *clusterv1.Machine) string {
	if m3m.Spec.FailureDomain != "" {
		return m3m.Spec.FailureDomain
	}
	return machine.Spec.FailureDomain
}

func conditionMessage(m3m *infrav1.Metal3Machine, typ string) string {
	if c := conditions.Get(m3m, typ); c != nil {
		return c.Message
	}
	return ""
}

// associatedHost returns the host the machine's annotation names. With no annotation it returns
// nil and no error; with an annotation but no usable host it sets the conditions and returns nil.
func (r *Reconciler) associatedHost(ctx context.Context, m3m *infrav1.Metal3Machine) (*bmov1.BareMetalHost, error) {
	ann := m3m.Annotations[infrav1.HostAnnotation]
	if ann == "" {
		return nil, nil
	}
	key, err := parseHostAnnotation(ann, m3m.Namespace)
	if err != nil {
		setCondition(m3m, infrav1.AssociateBareMetalHostCondition, metav1.ConditionFalse, infrav1.AssociateBareMetalHostFailedReason, err.Error())
		return nil, nil
	}
	host := &bmov1.BareMetalHost{}
	if err := r.Client.Get(ctx, key, host); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
		msg := fmt.Sprintf("BareMetalHost %s, claimed by this machine, is gone; delete the Machine so that Cluster API replaces it", key)
		setCondition(m3m, infrav1.AssociateBareMetalHostCondition, metav1.ConditionFalse, infrav1.MissingBMHReason, msg)
		return nil, nil
	}
	if consumedBy(host, m3m) {
		return host, nil
	}
	// The cache may not have our claim yet: ask the API server before concluding anything.
	if err := r.APIReader.Get(ctx, key, host); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	switch {
	case consumedBy(host, m3m):
		return host, nil
	case host.Spec.ConsumerRef == nil:
		// Someone cleared the claim under us; take the host back if it is still ours to take.
		// Not if this machine gave it back itself (a switch-port error) and the cache has not
		// seen its own annotation change yet.
		live := &infrav1.Metal3Machine{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(m3m), live); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		if live.Annotations[infrav1.HostAnnotation] != ann || refusedHosts(live.Annotations).Has(host.Name) {
			return nil, nil
		}
		orig := host.DeepCopy()
		claim(host, m3m, m3m.Labels[clusterv1.ClusterNameLabel])
		if err := r.Client.Patch(ctx, host, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return nil, fmt.Errorf("re-claiming BareMetalHost %s: %w", key, err)
		}
		return host, nil
	default:
		msg := fmt.Sprintf("BareMetalHost %s is claimed by %s %s, not by this machine; delete this Machine so that Cluster API replaces it",
			key, host.Spec.ConsumerRef.Kind, host.Spec.ConsumerRef.Name)
		setCondition(m3m, infrav1.AssociateBareMetalHostCondition, metav1.ConditionFalse, HostClaimedElsewhereReason, msg)
		return nil, nil
	}
}

func parseHostAnnotation(ann, defaultNamespace string) (client.ObjectKey, error) {
	ns, name, set, err := infrav1.ParseHostAnnotation(ann, defaultNamespace)
	if err != nil || !set {
		return client.ObjectKey{}, fmt.Errorf("annotation %s: %q is not <namespace>/<name>; remove it to let the controller pick a host", infrav1.HostAnnotation, ann)
	}
	return client.ObjectKey{Namespace: ns, Name: name}, nil
}
