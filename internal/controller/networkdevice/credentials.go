package networkdevice

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/event"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// credentialSecrets reads the Secrets that NetworkDevices name in credentialsRef, and tells the
// controller when one changes.
//
// The manager's cache holds only the Secrets labelled for baremetal-operator, and a switch's
// Secret carries no such label: the user makes it by hand, as the docs show. Caching every Secret
// of the cluster to find the few a fabric names would hold every token and key of the cluster in
// the manager's memory. So each Secret a NetworkDevice names gets a watch of its own, restricted
// to that one name by a field selector; its store answers reads, and its events start a pass of
// every NetworkDevice naming it (a Secret created late, fixed or rotated is used at once, not at
// the next retry). A watch stops once no NetworkDevice names its Secret.
type credentialSecrets struct {
	client kubernetes.Interface
	// events carries a NetworkDevice to reconcile: one naming a Secret that changed.
	events chan event.GenericEvent
	// ctx bounds every watch: the manager's run.
	ctx context.Context

	mu sync.Mutex
	// watches by Secret, and the Secrets each NetworkDevice names.
	watches map[types.NamespacedName]*secretWatch
	names   map[types.NamespacedName][]types.NamespacedName
}

// secretWatch is one Secret's watch.
type secretWatch struct {
	store  toolscache.Store
	synced toolscache.InformerSynced
	stop   context.CancelFunc
	// users are the NetworkDevices naming the Secret.
	users map[types.NamespacedName]bool
}

func newCredentialSecrets(client kubernetes.Interface) *credentialSecrets {
	return &credentialSecrets{
		client:  client,
		events:  make(chan event.GenericEvent, 64),
		ctx:     context.Background(),
		watches: map[types.NamespacedName]*secretWatch{},
		names:   map[types.NamespacedName][]types.NamespacedName{},
	}
}

// secretsNamed lists the Secrets the switches of nd name, in its namespace (a BareMetalSwitch's
// included).
func (r *Reconciler) secretsNamed(ctx context.Context, nd *netv1.NetworkDevice) []types.NamespacedName {
	var out []types.NamespacedName
	for _, sw := range nd.Spec.Switches {
		if sw.BareMetalSwitchRef != nil {
			if eff, err := r.effectiveSwitch(ctx, nd.Namespace, sw); err == nil {
				sw = eff
			}
		}
		if sw.CredentialsRef != nil {
			key := types.NamespacedName{Namespace: nd.Namespace, Name: sw.CredentialsRef.Name}
			if !slices.Contains(out, key) {
				out = append(out, key)
			}
		}
	}
	// Switches removed from spec are reset through the spec they were configured with.
	for _, st := range nd.Status.Switches {
		if st.ConfiguredWith != nil && st.ConfiguredWith.CredentialsRef != nil {
			key := types.NamespacedName{Namespace: nd.Namespace, Name: st.ConfiguredWith.CredentialsRef.Name}
			if !slices.Contains(out, key) {
				out = append(out, key)
			}
		}
	}
	return out
}

// use records that device names exactly secrets now: watches start for Secrets new to it, and
// stop for Secrets nobody names any more. A device gone or ignored names none.
func (c *credentialSecrets) use(device types.NamespacedName, secrets []types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.names[device] {
		if slices.Contains(secrets, s) {
			continue
		}
		if w := c.watches[s]; w != nil {
			delete(w.users, device)
			if len(w.users) == 0 {
				w.stop()
				delete(c.watches, s)
			}
		}
	}
	if len(secrets) == 0 {
		delete(c.names, device)
		return
	}
	c.names[device] = secrets
	for _, s := range secrets {
		w := c.watches[s]
		if w == nil {
			w = c.watch(s)
			c.watches[s] = w
		}
		w.users[device] = true
	}
}

// watch starts the watch of one Secret.
func (c *credentialSecrets) watch(key types.NamespacedName) *secretWatch {
	ctx, stop := context.WithCancel(c.ctx)
	byName := fields.OneTermEqualSelector(metav1.ObjectNameField, key.Name).String()
	lw := toolscache.NewFilteredListWatchFromClient(c.client.CoreV1().RESTClient(), "secrets", key.Namespace,
		func(o *metav1.ListOptions) { o.FieldSelector = byName })
	w := &secretWatch{stop: stop, users: map[types.NamespacedName]bool{}}
	changed := func(any) { c.notify(ctx, key) }
	var informer toolscache.Controller
	w.store, informer = toolscache.NewInformerWithOptions(toolscache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.Secret{},
		Handler: toolscache.ResourceEventHandlerFuncs{
			AddFunc:    changed,
			UpdateFunc: func(_, obj any) { changed(obj) },
			DeleteFunc: changed,
		},
	})
	w.synced = informer.HasSynced
	go informer.RunWithContext(ctx)
	return w
}

// notify starts a pass of every NetworkDevice naming the Secret.
func (c *credentialSecrets) notify(ctx context.Context, key types.NamespacedName) {
	c.mu.Lock()
	var users []types.NamespacedName
	if w := c.watches[key]; w != nil {
		for u := range w.users {
			users = append(users, u)
		}
	}
	c.mu.Unlock()
	for _, u := range users {
		nd := &netv1.NetworkDevice{ObjectMeta: metav1.ObjectMeta{Namespace: u.Namespace, Name: u.Name}}
		select {
		case c.events <- event.GenericEvent{Object: nd}:
		case <-ctx.Done():
			return
		}
	}
}

// get returns a Secret from its watch, once the watch has listed it (at most until ctx ends).
// The Secret must be named by a NetworkDevice (use) first.
func (c *credentialSecrets) get(ctx context.Context, key types.NamespacedName) (*corev1.Secret, error) {
	c.mu.Lock()
	w := c.watches[key]
	c.mu.Unlock()
	if w == nil {
		return nil, fmt.Errorf("the Secret %s is named by no NetworkDevice", key)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if !toolscache.WaitForCacheSync(ctx.Done(), w.synced) {
		return nil, fmt.Errorf("the Secret %s could not be listed (is the manager allowed to list and watch Secrets in namespace %s?)", key.Name, key.Namespace)
	}
	obj, ok, err := w.store.GetByKey(key.String())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	}
	return obj.(*corev1.Secret), nil
}

// CredentialsFrom reads switch credentials from a basic-auth, ssh-auth or tls Secret. A gNMI
// switch takes both kinds: a basic-auth Secret may carry the CA that signed the switch's
// certificate (ca.crt), a tls Secret a username and password.
func CredentialsFrom(s *corev1.Secret) (fabric.Credentials, error) {
	d := s.Data
	switch s.Type {
	case corev1.SecretTypeBasicAuth:
		return fabric.Credentials{Username: string(d[corev1.BasicAuthUsernameKey]), Password: string(d[corev1.BasicAuthPasswordKey]), CAPEM: d["ca.crt"]}, nil
	case corev1.SecretTypeSSHAuth:
		return fabric.Credentials{Username: string(d[corev1.BasicAuthUsernameKey]), PrivateKey: d[corev1.SSHAuthPrivateKey]}, nil
	case corev1.SecretTypeTLS:
		return fabric.Credentials{CertPEM: d[corev1.TLSCertKey], KeyPEM: d[corev1.TLSPrivateKeyKey], CAPEM: d["ca.crt"],
			Username: string(d[corev1.BasicAuthUsernameKey]), Password: string(d[corev1.BasicAuthPasswordKey])}, nil
	case corev1.SecretTypeOpaque, "":
		// baremetal-operator's BareMetalSwitch credentials: username, and password or
		// ssh-privatekey, in a Secret of any type.
		if len(d[corev1.BasicAuthUsernameKey]) > 0 && (len(d[corev1.SSHAuthPrivateKey]) > 0 || len(d[corev1.BasicAuthPasswordKey]) > 0) {
			return fabric.Credentials{Username: string(d[corev1.BasicAuthUsernameKey]), Password: string(d[corev1.BasicAuthPasswordKey]), PrivateKey: d[corev1.SSHAuthPrivateKey]}, nil
		}
		// A cloud API's token (networkOS equinix-metal).
		if len(d["token"]) > 0 {
			return fabric.Credentials{Token: strings.TrimSpace(string(d["token"]))}, nil
		}
		return fabric.Credentials{}, fmt.Errorf("the Secret %s of type %q has neither username with password or ssh-privatekey (a BareMetalSwitch's) nor token (a cloud API's)", s.Name, s.Type)
	}
	return fabric.Credentials{}, fmt.Errorf("the Secret %s is of type %q; use kubernetes.io/basic-auth, kubernetes.io/ssh-auth or kubernetes.io/tls (or Opaque: username with password or ssh-privatekey, as a BareMetalSwitch's; token, as a cloud API's)", s.Name, s.Type)
}
