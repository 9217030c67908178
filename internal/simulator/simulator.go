package simulator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/cachepolicy"
	"github.com/metalwire/metalwire/internal/controller/fieldindex"
)

// Transition is one host changing provisioning state.
type Transition struct {
	Host     types.NamespacedName
	From, To bmov1.ProvisioningState
}

// Simulator plays BMO's part for BareMetalHosts: see the package comment.
type Simulator struct {
	// Client writes host status and creates hosts.
	Client client.Client
	// Reader reads hosts and Secrets; it should be uncached (the manager's API reader) so each
	// step starts from what the API server holds. SetupWithManager fills it in when nil.
	Reader client.Reader
	// Dir is where host files go (hosts/<host>/...); empty writes none.
	Dir string
	// Delays between states; zero values take DefaultDelays.
	Delays Delays
	// OnTransition, when set, hears of every state change (dev mode prints them).
	OnTransition func(Transition)
	// RenderedSecrets, when set, is the manager's metadata-only cache of the Secrets a
	// Metal3Data renders (manager.Manager.RenderedSecrets), which its Secret cache does not
	// hold: a host waiting for its metaData or networkData Secret is woken by it too.
	RenderedSecrets cache.Cache

	mu      sync.Mutex
	entered map[types.NamespacedName]entered
}

// entered records when the simulator saw a host enter a state. It is kept in memory rather than
// in status.lastUpdated because that has one-second resolution; after a restart a host's delay
// starts again, which only makes it slower.
type entered struct {
	state bmov1.ProvisioningState
	at    time.Time
}

// secretRefsField indexes hosts by the names of the Secrets whose arrival moves them on.
const secretRefsField = "simulator.metalwire.io/secret-refs"

// SetupWithManager runs the simulator in mgr: it watches BareMetalHosts, and Secrets so that a
// host waiting for one moves on as soon as it exists.
func (s *Simulator) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if s.Client == nil {
		s.Client = mgr.GetClient()
	}
	if s.Reader == nil {
		s.Reader = mgr.GetAPIReader()
	}
	if s.Delays == (Delays{}) {
		s.Delays = DefaultDelays
	}
	if err := fieldindex.Register(ctx, mgr.GetFieldIndexer(), fieldindex.Index{Object: &bmov1.BareMetalHost{}, Field: secretRefsField, Keys: secretRefs}); err != nil {
		return fmt.Errorf("simulator: indexing hosts by Secret: %w", err)
	}
	toHosts := s.hostsForSecret(mgr.GetClient())
	b := ctrl.NewControllerManagedBy(mgr).
		Named("bmo-simulator").
		For(&bmov1.BareMetalHost{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(toHosts))
	if s.RenderedSecrets != nil {
		b = b.WatchesRawSource(source.Kind(s.RenderedSecrets, cachepolicy.RenderedSecret(),
			handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, o *metav1.PartialObjectMetadata) []ctrl.Request { return toHosts(ctx, o) })))
	}
	return b.Complete(s)
}

// secretRefs lists the Secrets (same namespace) a host's next step may wait for.
func secretRefs(o client.Object) []string {
	h, ok := o.(*bmov1.BareMetalHost)
	if !ok {
		return nil
	}
	var names []string
	if h.Spec.PreprovisioningNetworkDataName != "" {
		names = append(names, h.Spec.PreprovisioningNetworkDataName)
	}
	for _, ref := range []*corev1.SecretReference{h.Spec.UserData, h.Spec.MetaData, h.Spec.NetworkData} {
		if ref != nil && ref.Name != "" && (ref.Namespace == "" || ref.Namespace == h.Namespace) {
			names = append(names, ref.Name)
		}
	}
	return names
}

func (s *Simulator) hostsForSecret(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		hosts := &bmov1.BareMetalHostList{}
		if err := c.List(ctx, hosts, client.InNamespace(o.GetNamespace()), client.MatchingFields{secretRefsField: o.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "BMO stand-in: listing hosts that use a Secret", "secret", o.GetName())
			return nil
		}
		reqs := make([]ctrl.Request, 0, len(hosts.Items))
		for i := range hosts.Items {
			reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&hosts.Items[i])})
		}
		return reqs
	}
}

// newHostObject is an empty unstructured BareMetalHost: the simulator reads and writes hosts
// unstructured so that every field BMO has, modelled by us or not, is kept.
func newHostObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(bmov1.GroupVersion.WithKind("BareMetalHost"))
	return u
}

// Reconcile moves one host one step.
func (s *Simulator) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("stand-in", "BMO simulator")
	u := newHostObject()
	if err := s.Reader.Get(ctx, req.NamespacedName, u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !u.GetDeletionTimestamp().IsZero() {
		s.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	host := &bmov1.BareMetalHost{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, host); err != nil {
		return ctrl.Result{}, fmt.Errorf("reading host %s: %w", req, err)
	}
	if _, paused := host.Annotations[bmov1.PausedAnnotation]; paused {
		// BMO does nothing at all for a paused host, whatever the annotation's value.
		log.V(1).Info("BMO stand-in: host is paused")
		return ctrl.Result{}, nil
	}
	if _, detached := host.Annotations[bmov1.DetachedAnnotation]; detached {
		// BMO stops managing a detached host: its state stays as it is.
		if host.Status.OperationalStatus == bmov1.OperationalStatusDetached {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, s.patchStatus(ctx, u, func(st map[string]any) {
			st["operationalStatus"] = string(bmov1.OperationalStatusDetached)
		})
	}
	if host.Status.OperationalStatus == bmov1.OperationalStatusDetached {
		// Re-attached: BMO manages the host again from the state it was in.
		if err := s.patchStatus(ctx, u, func(st map[string]any) {
			st["operationalStatus"] = string(bmov1.OperationalStatusOK)
		}); err != nil {
			return ctrl.Result{}, err
		}
	}

	if changed, err := s.followPower(ctx, u, host); err != nil || changed {
		return ctrl.Result{}, err
	}

	// Only a registering host waits on the gate: the Secret is not read in any other state.
	gateOpen := true
	if host.Status.Provisioning.State == bmov1.StateRegistering {
		var err error
		if gateOpen, err = s.preprovisioningGate(ctx, host); err != nil {
			return ctrl.Result{}, err
		}
	}
	f := facts{
		state:    host.Status.Provisioning.State,
		inState:  s.timeInState(req.NamespacedName, host.Status.Provisioning.State),
		hasImage: (host.Spec.Image != nil && host.Spec.Image.URL != "") || (host.Spec.CustomDeploy != nil && host.Spec.CustomDeploy.Method != ""),
		online:   host.Spec.Online,
		consumed: host.Spec.ConsumerRef != nil,
		gateOpen: gateOpen,
	}
	st := next(f, s.Delays)
	if st.to == "" {
		log.V(1).Info("BMO stand-in: host stays", "state", f.state, "why", st.why)
		return ctrl.Result{RequeueAfter: st.after}, nil
	}
	return s.enter(ctx, u, host, st.to)
}

// enter does what BMO does on entering state to, then records the state.
func (s *Simulator) enter(ctx context.Context, u *unstructured.Unstructured, host *bmov1.BareMetalHost, to bmov1.ProvisioningState) (ctrl.Result, error) {
	key := client.ObjectKeyFromObject(host)
	dir := ""
	if s.Dir != "" {
		dir = HostDir(s.Dir, host.Namespace, host.Name)
	}
	from := host.Status.Provisioning.State
	var (
		hw        map[string]any
		poweredOn = false
		image     map[string]any // nil: leave status.provisioning.image as it is
		dropImage bool
	)
	switch to {
	case bmov1.StateRegistering:
	case bmov1.StateInspecting:
		// The ramdisk boots with the pre-provisioning network data, if the host has any.
		if err := s.writePreprovisioning(ctx, host, dir); err != nil {
			// BMO cannot register a node whose network data it cannot read: it says so and retries.
			return ctrl.Result{RequeueAfter: 5 * time.Second}, s.setError(ctx, u, "registration error", err.Error())
		}
		poweredOn = true
	case bmov1.StateAvailable:
		if from == bmov1.StateInspecting {
			hw = hardware(host.Name, host.Spec.BootMACAddress)
		}
		if from == bmov1.StateDeprovisioning {
			dropImage = true
			if dir != "" {
				if err := markDeprovisioned(dir, time.Now()); err != nil {
					return ctrl.Result{}, err
				}
			}
		}
	case bmov1.StateProvisioning:
		// BMO records the image it is writing; a custom deploy has none.
		image, _, _ = unstructured.NestedMap(u.Object, "spec", "image")
	case bmov1.StateProvisioned:
		files, err := s.bootFiles(ctx, host)
		var missing *missingSecretError
		switch {
		case errors.As(err, &missing):
			// BMO keeps retrying until the Secret exists; the Secret watch brings the host back.
			return ctrl.Result{}, s.setError(ctx, u, "provisioning error", err.Error())
		case err != nil:
			return ctrl.Result{RequeueAfter: 5 * time.Second}, s.setError(ctx, u, "provisioning error", err.Error())
		}
		if dir != "" {
			if err := replaceBootFiles(dir, files); err != nil {
				return ctrl.Result{}, err
			}
		}
		poweredOn = host.Spec.Online
	case bmov1.StateDeprovisioning:
		poweredOn = true
	}

	err := s.patchStatus(ctx, u, func(st map[string]any) {
		prov, _ := st["provisioning"].(map[string]any)
		if prov == nil {
			prov = map[string]any{}
		}
		prov["state"] = string(to)
		if prov["ID"] == nil || prov["ID"] == "" {
			prov["ID"] = nodeUUID(host.Namespace, host.Name)
		}
		if image != nil {
			prov["image"] = image
		}
		if dropImage {
			delete(prov, "image")
		}
		st["provisioning"] = prov
		st["operationalStatus"] = string(bmov1.OperationalStatusOK)
		st["errorMessage"] = ""
		delete(st, "errorType")
		st["poweredOn"] = poweredOn
		st["lastUpdated"] = metav1.Now().UTC().Format(time.RFC3339)
		if hw != nil {
			st["hardware"] = hw
		}
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	s.record(key, to)
	ctrl.LoggerFrom(ctx).Info("BMO stand-in: host changed state", "from", string(from), "to", string(to))
	if s.OnTransition != nil {
		s.OnTransition(Transition{Host: key, From: from, To: to})
	}
	// Come back for the next timed step; untimed steps are woken by watches.
	return ctrl.Result{RequeueAfter: time.Millisecond}, nil
}

// preprovisioningGate says whether the host may be inspected. As the pre-provisioning proposal
// asks of BMO: a host carrying the reference annotation waits until its spec names a Secret that
// exists; and, as BMO does, any host naming a pre-provisioning Secret waits for it.
func (s *Simulator) preprovisioningGate(ctx context.Context, host *bmov1.BareMetalHost) (bool, error) {
	_, annotated := host.Annotations[bmov1.PreprovisioningNetworkDataReferenceAnnotation]
	name := host.Spec.PreprovisioningNetworkDataName
	if name == "" {
		return !annotated, nil
	}
	err := s.Reader.Get(ctx, client.ObjectKey{Namespace: host.Namespace, Name: name}, &corev1.Secret{})
	if err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return true, nil
}

func (s *Simulator) writePreprovisioning(ctx context.Context, host *bmov1.BareMetalHost, dir string) error {
	if dir == "" {
		return nil
	}
	data, err := s.preprovisioningNetworkData(ctx, host)
	if err != nil || data == nil {
		return err
	}
	return writeFiles(dir, map[string][]byte{PreprovNetworkFile: data})
}

// replaceBootFiles writes a newly provisioned host's files, dropping those of an earlier
// provisioning that this one does not have.
func replaceBootFiles(dir string, files map[string][]byte) error {
	for _, name := range []string{MetaDataFile, NetworkDataFile, UserDataFile, DeprovisionedMarker} {
		if _, ok := files[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return writeFiles(dir, files)
}

// setError records why the host cannot move on, as BMO does in errorMessage.
func (s *Simulator) setError(ctx context.Context, u *unstructured.Unstructured, errType, msg string) error {
	return s.patchStatus(ctx, u, func(st map[string]any) {
		st["errorMessage"] = msg
		st["errorType"] = errType
	})
}

// patchStatus changes status through the status subresource with a merge patch that carries the
// resourceVersion, so a change made meanwhile by anyone else is never overwritten.
func (s *Simulator) patchStatus(ctx context.Context, u *unstructured.Unstructured, change func(map[string]any)) error {
	before := u.DeepCopy()
	st, _, _ := unstructured.NestedMap(u.Object, "status")
	if st == nil {
		st = map[string]any{}
	}
	change(st)
	if err := unstructured.SetNestedMap(u.Object, st, "status"); err != nil {
		return err
	}
	if err := s.Client.Status().Patch(ctx, u, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("writing status of host %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

func (s *Simulator) timeInState(key types.NamespacedName, state bmov1.ProvisioningState) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entered == nil {
		s.entered = map[types.NamespacedName]entered{}
	}
	e, ok := s.entered[key]
	if !ok || e.state != state {
		e = entered{state: state, at: time.Now()}
		s.entered[key] = e
	}
	return time.Since(e.at)
}

func (s *Simulator) record(key types.NamespacedName, state bmov1.ProvisioningState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entered == nil {
		s.entered = map[types.NamespacedName]entered{}
	}
	s.entered[key] = entered{state: state, at: time.Now()}
}

func (s *Simulator) forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entered, key)
}
