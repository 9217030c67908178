package hostnic

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/fabricindex"
	"github.com/metalwire/metalwire/internal/controller/mapping"
	"github.com/metalwire/metalwire/internal/controller/skeleton"
	"github.com/metalwire/metalwire/internal/controller/watchfilter"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// ControllerName names the controller.
const ControllerName = "hostnic"

// generatedFrom is the value of GeneratedFromLabel on the NICs this controller makes.
const generatedFrom = "baremetalhost"

// Reconciler keeps one generated NIC object per BareMetalHost whose switch data names a known
// switch, named after the host.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// WatchFilter is --watch-filter: only hosts labelled with it are looked at.
	WatchFilter string

	// unknown remembers, per host, the unknown switch ids last reported, so an event is recorded
	// when they change rather than at every reconcile of the host.
	unknown sync.Map
}

// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts;baremetalswitches,verbs=get;list;watch
// +kubebuilder:rbac:groups=network.metalwire.io,resources=nics,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=network.metalwire.io,resources=networkdevices,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch

// Reconcile makes, updates or deletes the host's generated NIC object, in the reconcilers' one
// shape (skeleton). The host is BMO's: no finalizer of ours, and the skeleton's patch finds
// nothing of it changed, so it is never written here.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return skeleton.Reconcile(ctx, req, skeleton.Kind[*bmov1.BareMetalHost]{
		Client: r.Client, WatchFilter: r.WatchFilter,
		New: func() *bmov1.BareMetalHost { return &bmov1.BareMetalHost{} },
		Gone: func(ctx context.Context, key types.NamespacedName) (ctrl.Result, error) {
			r.unknown.Delete(key.String())
			return ctrl.Result{}, r.removeGenerated(ctx, key.Namespace, key.Name)
		},
		Normal: r.reconcileNormal,
		Delete: func(ctx context.Context, s *skeleton.Scope[*bmov1.BareMetalHost]) (ctrl.Result, error) {
			r.unknown.Delete(client.ObjectKeyFromObject(s.Object).String())
			return ctrl.Result{}, r.removeGenerated(ctx, s.Object.Namespace, s.Object.Name)
		},
	})
}

// reconcileNormal makes the host's NIC object from its switch data, or removes ours when a
// person wrote one or the data names no known switch.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *skeleton.Scope[*bmov1.BareMetalHost]) (ctrl.Result, error) {
	host := s.Object
	key := client.ObjectKeyFromObject(host).String()
	nics := &netv1.NICList{}
	if err := r.Client.List(ctx, nics, client.InNamespace(host.Namespace), client.MatchingFields{fabricindex.NICByNode: host.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the NICs of host %s: %w", host.Name, err)
	}
	var ours *netv1.NIC
	for i := range nics.Items {
		if nics.Items[i].Labels[netv1.GeneratedFromLabel] != generatedFrom {
			// A person described this host's cabling: theirs wins, ours goes.
			return ctrl.Result{}, r.removeGenerated(ctx, host.Namespace, host.Name)
		}
		ours = &nics.Items[i]
	}
	devices := &netv1.NetworkDeviceList{}
	if err := r.Client.List(ctx, devices, client.InNamespace(host.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing NetworkDevices: %w", err)
	}
	var switches []fabric.KnownSwitch
	for _, d := range devices.Items {
		for _, sw := range d.Spec.Switches {
			mac := sw.MACAddress
			if sw.BareMetalSwitchRef != nil { // the switch's MAC is the BareMetalSwitch's
				bms := &bmov1.BareMetalSwitch{}
				err := r.Client.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: sw.BareMetalSwitchRef.Name}, bms)
				switch {
				case err == nil:
					mac = bms.Spec.MACAddress
				case !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err):
					return ctrl.Result{}, fmt.Errorf("reading BareMetalSwitch %s: %w", sw.BareMetalSwitchRef.Name, err)
				}
			}
			switches = append(switches, fabric.KnownSwitch{Device: d.Name, Name: sw.Name, MAC: mac})
		}
	}
	cards, unknown := fabric.Cabling(interfacesOf(host), switches)
	if ids := strings.Join(unknown, ", "); ids != "" && r.Recorder != nil {
		if last, _ := r.unknown.Swap(key, ids); last != ids {
			r.Recorder.Eventf(host, nil, corev1.EventTypeWarning, "UnknownSwitch", "MakeNIC",
				"host %s names switch %s (LLDP or spec.networkInterfaces[].switchPort), which no NetworkDevice of namespace %s declares: set that switch's spec.switches[].macAddress",
				host.Name, ids, host.Namespace)
		}
	} else {
		r.unknown.Delete(key)
	}
	want := desiredNIC(host, cards)
	if want != nil {
		want.Labels = watchfilter.Carry(want.Labels, host)
	}
	if ours != nil && ours.Labels[netv1.SelectedForLabel] != "" && (want == nil || !reflect.DeepEqual(ours.Spec, want.Spec)) {
		// The host is in a cluster: its ports carry the cluster's networks through this NIC
		// object. Changing or deleting it now would take them away; it follows the host's data
		// once the host leaves.
		if r.Recorder != nil {
			r.Recorder.Eventf(host, nil, corev1.EventTypeWarning, "NICKept", "MakeNIC",
				"the switch data of host %s changed while it is selected for ClusterNetwork %s; NIC %s is kept as it is until the host leaves",
				host.Name, ours.Labels[netv1.SelectedForLabel], ours.Name)
		}
		return ctrl.Result{}, nil
	}
	switch {
	case want == nil:
		return ctrl.Result{}, r.removeGenerated(ctx, host.Namespace, host.Name)
	case ours == nil:
		if err := controllerutil.SetOwnerReference(host, want, r.Client.Scheme()); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Client.Create(ctx, want); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return ctrl.Result{}, fmt.Errorf("a NIC named %s exists for another host; the NIC of host %s cannot be made: rename one", want.Name, host.Name)
			}
			return ctrl.Result{}, fmt.Errorf("creating the NIC of host %s: %w", host.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("NIC made from the host's switch data", "nic", want.Name, "networkDevice", want.Spec.NetworkDeviceRef, "cards", len(want.Spec.NICs))
	case !reflect.DeepEqual(ours.Spec, want.Spec):
		base := ours.DeepCopy()
		ours.Spec = want.Spec
		if err := r.Client.Patch(ctx, ours, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, fmt.Errorf("updating the NIC of host %s: %w", host.Name, err)
		}
	}
	return ctrl.Result{}, nil
}

// interfacesOf reads a host's interfaces: inspection's NICs with their LLDP, and the spec's
// switchPort of each (matched by MAC address, else by name).
func interfacesOf(host *bmov1.BareMetalHost) []fabric.HostInterface {
	if host.Status.HardwareDetails == nil {
		return nil
	}
	var out []fabric.HostInterface
	for _, n := range host.Status.HardwareDetails.NIC {
		in := fabric.HostInterface{Name: n.Name, MAC: n.MAC, SpeedMbps: n.SpeedGbps * 1000}
		if n.LLDP != nil {
			in.LLDP = &fabric.Neighbour{SwitchID: n.LLDP.SwitchID, SystemName: n.LLDP.SwitchSystemName, Port: n.LLDP.PortID}
		}
		for _, ni := range host.Spec.NetworkInterfaces {
			if ni.SwitchPort == nil {
				continue
			}
			if (ni.MACAddress != "" && strings.EqualFold(ni.MACAddress, n.MAC)) || (ni.MACAddress == "" && ni.Name == n.Name) {
				in.SwitchPort = &fabric.Neighbour{SwitchID: ni.SwitchPort.SwitchID, Port: ni.SwitchPort.PortID}
			}
		}
		out = append(out, in)
	}
	return out
}

// desiredNIC is the host's NIC object from its cabled cards: the NetworkDevice most of them
// are on (a NIC object names one), its cards on that device's switches. Nil when none is.
func desiredNIC(host *bmov1.BareMetalHost, cards []fabric.CabledCard) *netv1.NIC {
	count := map[string]int{}
	device := ""
	for _, c := range cards {
		count[c.Switch.Device]++
		if device == "" || count[c.Switch.Device] > count[device] {
			device = c.Switch.Device
		}
	}
	if device == "" {
		return nil
	}
	nic := &netv1.NIC{
		ObjectMeta: metav1.ObjectMeta{Namespace: host.Namespace, Name: host.Name, Labels: map[string]string{netv1.GeneratedFromLabel: generatedFrom}},
		Spec:       netv1.NICSpec{Node: host.Name, NetworkDeviceRef: device},
	}
	for _, c := range cards {
		if c.Switch.Device != device {
			continue
		}
		nic.Spec.NICs = append(nic.Spec.NICs, netv1.HostNIC{
			Name: c.Interface.Name, MAC: c.Interface.MAC,
			NetworkDevice: netv1.NICNetworkDevice{Switch: netv1.SwitchPortRef{Name: c.Switch.Name, Port: intstr.FromString(c.Port)}},
			Capability:    netv1.NICCapability{Speed: int32(c.Interface.SpeedMbps)}, //nolint:gosec // Mb/s of a NIC
		})
	}
	return nic
}

// nicsChanged lets through a host update whose inspected NICs changed.
var nicsChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	nics := func(o client.Object) []bmov1.NIC {
		if h, ok := o.(*bmov1.BareMetalHost); ok && h.Status.HardwareDetails != nil {
			return h.Status.HardwareDetails.NIC
		}
		return nil
	}
	return !reflect.DeepEqual(nics(e.ObjectOld), nics(e.ObjectNew))
}}

// removeGenerated deletes the host's generated NIC, if there is one; a hand-written NIC of that
// name is left alone.
func (r *Reconciler) removeGenerated(ctx context.Context, ns, host string) error {
	nic := &netv1.NIC{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: host}, nic); err != nil {
		return client.IgnoreNotFound(err)
	}
	if nic.Labels[netv1.GeneratedFromLabel] != generatedFrom {
		return nil
	}
	if err := r.Client.Delete(ctx, nic, client.Preconditions{UID: &nic.UID}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the generated NIC of host %s: %w", host, err)
	}
	return nil
}

// SetupWithManager watches hosts, the NICs naming them and the NetworkDevices of their
// namespace (a switch's macAddress added or fixed).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	if err := fabricindex.Setup(ctx, mgr); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		// BMO writes a host's status often; only its spec, labels and inspected NICs matter here.
		For(&bmov1.BareMetalHost{}, builder.WithPredicates(watchfilter.Predicate(r.WatchFilter),
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, nicsChanged))).
		// A NIC's status is written for every host joining a cluster: only its spec and labels
		// (hand-written or ours) matter here.
		Watches(&netv1.NIC{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: o.(*netv1.NIC).Spec.Node}}}
		}), builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&netv1.NetworkDevice{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return mapping.Listed(ctx, mgr.GetClient(), &bmov1.BareMetalHostList{}, "the hosts of NetworkDevice "+o.GetName()+"'s namespace", nil,
				client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy)
		}), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Named(ControllerName).
		Complete(r)
}
