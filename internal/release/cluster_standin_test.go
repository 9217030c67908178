package release

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/internal/testenv"
)

// certManagerAPI is cert-manager's Issuer and Certificate kinds as far as clusterctl and our
// components use them (every field kept). Installed without clusterctl's labels, clusterctl
// takes cert-manager as installed by the user ("externally managed"): init finds its API
// answering and upgrade leaves it alone. What cert-manager's controllers would do is done by
// clusterStandIn.
const certManagerAPI = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: issuers.cert-manager.io
spec:
  group: cert-manager.io
  names: {kind: Issuer, listKind: IssuerList, plural: issuers, singular: issuer}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: certificates.cert-manager.io
spec:
  group: cert-manager.io
  names: {kind: Certificate, listKind: CertificateList, plural: certificates, singular: certificate}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// buildManager builds the manager binary as `make image` does (cmd/manager, static): the
// stand-in kubelet runs it as the Deployment's container.
func buildManager(t *testing.T) string {
	t.Helper()
	binary := filepath.Join(t.TempDir(), "manager")
	build := exec.Command("go", "build", "-trimpath", "-o", binary, "./cmd/manager")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/manager: %v\n%s", err, out)
	}
	return binary
}

// podRun is one manager process the stand-in kubelet ran for a Deployment.
type podRun struct {
	Deployment types.UID
	Image      string
	Args       []string
	Started    time.Time
	// Stopped is when it exited; StopTook how long after SIGTERM; Killed whether it had to be
	// killed after the Pod's grace period; Err its exit error.
	Stopped  time.Time
	StopTook time.Duration
	Killed   bool
	Err      error

	cmd   *exec.Cmd
	exit  chan error
	probe string
	ready bool
	log   string
}

// clusterStandIn does on the test API server, every 200 ms until the test ends, what the parts
// of a real management cluster that the test API server lacks would do for metalwire's
// components:
//   - cert-manager: it issues every Certificate into its Secret (envtest's serving certificate,
//     valid for the address the CRDs call, with its CA as ca.crt) and, as cainjector, puts that
//     CA into the caBundle of every CRD whose cert-manager.io/inject-ca-from names the
//     Certificate;
//   - the Deployment controller and the kubelet: while the manager Deployment exists, asks for a
//     replica and the Secret its Pod mounts exists, it runs the manager binary with the
//     container's arguments (as the ServiceAccount, through kubeconfig), the Secret "mounted" in
//     a directory; it stops it with SIGTERM (SIGKILL after the Pod's
//     terminationGracePeriodSeconds) when the Deployment is scaled to zero, replaced or deleted;
//     and it reports replicas and the Available condition in the Deployment's status.
type clusterStandIn struct {
	env        *testenv.Env
	binary     string
	kubeconfig string // reaches the API server as the ServiceAccount
	namespace  string // the manager Deployment's
	dir        string // the Pods' files (removed after the Pods stop)

	mu   sync.Mutex
	runs []*podRun
	errs []error
}

// startClusterStandIn runs the stand-in until the test ends; a Pod still running is stopped then.
func startClusterStandIn(t *testing.T, env *testenv.Env, binary, kubeconfig, namespace string) *clusterStandIn {
	t.Helper()
	// Made before the cleanup below is registered, so removed after it stopped every Pod.
	s := &clusterStandIn{env: env, binary: binary, kubeconfig: kubeconfig, namespace: namespace, dir: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			s.step(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, r := range s.runs {
			if r.Stopped.IsZero() {
				s.stop(r, 10*time.Second)
			}
			if t.Failed() {
				if out, err := os.ReadFile(r.log); err == nil {
					t.Logf("manager %s (%s) log:\n%s", r.Image, r.Deployment, tail(string(out), 60))
				}
			}
		}
	})
	return s
}

// Runs returns what the stand-in kubelet ran, in order.
func (s *clusterStandIn) Runs() []podRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]podRun, 0, len(s.runs))
	for _, r := range s.runs {
		out = append(out, *r)
	}
	return out
}

// Errors returns what the stand-in could not do (a write refused, a manager that would not start).
func (s *clusterStandIn) Errors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.errs)
}

func (s *clusterStandIn) step(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, err := range []error{s.issueCertificates(ctx), s.injectCA(ctx), s.runDeployment(ctx)} {
		if err != nil && ctx.Err() == nil && !slices.ContainsFunc(s.errs, func(e error) bool { return e.Error() == err.Error() }) {
			s.errs = append(s.errs, err)
		}
	}
}

func certificates(ctx context.Context, c client.Client) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("cert-manager.io/v1")
	list.SetKind("CertificateList")
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("cert-manager stand-in: listing Certificates: %w", err)
	}
	return list.Items, nil
}

// issueCertificates writes each Certificate's Secret once, as cert-manager's selfSigned issuer
// would (tls.crt, tls.key, ca.crt).
func (s *clusterStandIn) issueCertificates(ctx context.Context) error {
	certs, err := certificates(ctx, s.env.Client)
	if err != nil {
		return err
	}
	dir := s.env.Webhooks.LocalServingCertDir
	for _, c := range certs {
		if c.GetDeletionTimestamp() != nil {
			continue
		}
		name, _, _ := unstructured.NestedString(c.Object, "spec", "secretName")
		key := client.ObjectKey{Namespace: c.GetNamespace(), Name: name}
		if err := s.env.Client.Get(ctx, key, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			continue // issued already (or unreadable: retried next time)
		}
		crt, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
		if err != nil {
			return err
		}
		tlsKey, err := os.ReadFile(filepath.Join(dir, "tls.key"))
		if err != nil {
			return err
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
				Annotations: map[string]string{"cert-manager.io/certificate-name": c.GetName()}},
			Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": crt, "tls.key": tlsKey, "ca.crt": s.env.Webhooks.LocalServingCAData},
		}
		err = s.env.Client.Create(ctx, secret)
		// clusterctl checks cert-manager with a throw-away namespace and deletes it at once;
		// cert-manager meets the same refusal and drops the Certificate with its namespace.
		if err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsNotFound(err) &&
			!apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return fmt.Errorf("cert-manager stand-in: issuing %s: %w", key, err)
		}
	}
	return nil
}

// injectCA sets the conversion webhook's caBundle of every CRD that asks for it, as cainjector
// does: only that field, and only once the Certificate's Secret exists.
func (s *clusterStandIn) injectCA(ctx context.Context) error {
	crds := &unstructured.UnstructuredList{}
	crds.SetAPIVersion("apiextensions.k8s.io/v1")
	crds.SetKind("CustomResourceDefinitionList")
	if err := s.env.Client.List(ctx, crds); err != nil {
		return fmt.Errorf("cainjector stand-in: %w", err)
	}
	certs, err := certificates(ctx, s.env.Client)
	if err != nil {
		return err
	}
	for i := range crds.Items {
		crd := &crds.Items[i]
		from := crd.GetAnnotations()["cert-manager.io/inject-ca-from"]
		if from == "" {
			continue
		}
		idx := slices.IndexFunc(certs, func(c unstructured.Unstructured) bool { return c.GetNamespace()+"/"+c.GetName() == from })
		if idx < 0 {
			continue
		}
		secretName, _, _ := unstructured.NestedString(certs[idx].Object, "spec", "secretName")
		secret := &corev1.Secret{}
		if err := s.env.Client.Get(ctx, client.ObjectKey{Namespace: certs[idx].GetNamespace(), Name: secretName}, secret); err != nil {
			continue
		}
		want := base64.StdEncoding.EncodeToString(secret.Data["ca.crt"])
		have, found, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
		if _, ok, _ := unstructured.NestedMap(crd.Object, "spec", "conversion", "webhook", "clientConfig"); !ok || (found && have == want) {
			continue
		}
		patch := fmt.Appendf(nil, `{"spec":{"conversion":{"webhook":{"clientConfig":{"caBundle":%q}}}}}`, want)
		if err := s.env.Client.Patch(ctx, crd, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return fmt.Errorf("cainjector stand-in: %s: %w", crd.GetName(), err)
		}
	}
	return nil
}

// runDeployment keeps one manager process running per manager Deployment that asks for one.
func (s *clusterStandIn) runDeployment(ctx context.Context) error {
	deployments := &appsv1.DeploymentList{}
	if err := s.env.Client.List(ctx, deployments, client.InNamespace(s.namespace)); err != nil {
		return fmt.Errorf("deployment stand-in: %w", err)
	}
	var d *appsv1.Deployment
	for i := range deployments.Items {
		if deployments.Items[i].DeletionTimestamp == nil {
			d = &deployments.Items[i]
		}
	}
	var running *podRun
	for _, r := range s.runs {
		if r.Stopped.IsZero() {
			running = r
		}
	}
	if running != nil {
		select {
		case err := <-running.exit:
			running.Stopped, running.Err = time.Now(), err
			return fmt.Errorf("the manager %s exited on its own: %w (log %s)", running.Image, err, running.log)
		default:
		}
	}
	wanted := d != nil && (d.Spec.Replicas == nil || *d.Spec.Replicas > 0)
	if running != nil && (!wanted || d.UID != running.Deployment) {
		grace := 30 * time.Second
		if d != nil && d.UID == running.Deployment && d.Spec.Template.Spec.TerminationGracePeriodSeconds != nil {
			grace = time.Duration(*d.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
		}
		s.stop(running, grace)
		running = nil
	}
	if d == nil {
		return nil
	}
	if running == nil && wanted {
		var err error
		if running, err = s.start(ctx, d); err != nil {
			return err
		}
	}
	if running != nil && !running.ready {
		running.ready = probeReady(running.probe)
	}
	return s.reportStatus(ctx, d, running)
}

// start runs the Deployment's manager container once the Secret it mounts exists.
func (s *clusterStandIn) start(ctx context.Context, d *appsv1.Deployment) (*podRun, error) {
	spec := d.Spec.Template.Spec
	var container *corev1.Container
	for i := range spec.Containers {
		if spec.Containers[i].Name == "manager" {
			container = &spec.Containers[i]
		}
	}
	if container == nil {
		return nil, fmt.Errorf("deployment %s has no manager container", d.Name)
	}
	podDir, err := os.MkdirTemp(s.dir, "pod-")
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(podDir, "serving-certs")
	for _, v := range spec.Volumes {
		if v.Secret == nil {
			continue
		}
		secret := &corev1.Secret{}
		err := s.env.Client.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: v.Secret.SecretName}, secret)
		if apierrors.IsNotFound(err) {
			return nil, nil // the Pod waits for its volume (ContainerCreating)
		}
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(certDir, 0o700); err != nil {
			return nil, err
		}
		for k, data := range secret.Data {
			if err := os.WriteFile(filepath.Join(certDir, k), data, 0o600); err != nil {
				return nil, err
			}
		}
	}
	probe, err := freeLocalAddr()
	if err != nil {
		return nil, err
	}
	// The container's arguments, then what differs outside a Pod: the kubeconfig, the
	// namespace a Pod would know from its ServiceAccount, ports of this machine, and where
	// the Secret is "mounted".
	args := append(slices.Clone(container.Args), "--kubeconfig="+s.kubeconfig, "--leader-election-namespace="+d.Namespace,
		"--health-probe-bind-address="+probe, "--metrics-bind-address=0",
		fmt.Sprintf("--webhook-port=%d", s.env.Webhooks.LocalServingPort), "--webhook-cert-dir="+certDir)
	logPath := filepath.Join(podDir, "manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(s.binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), "POD_NAMESPACE="+d.Namespace, "POD_NAME="+d.Name+"-0", "POD_UID="+string(uuid.NewUUID()))
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	r := &podRun{Deployment: d.UID, Image: container.Image, Args: args, Started: time.Now(), cmd: cmd, exit: make(chan error, 1), probe: probe, log: logPath}
	go func() {
		r.exit <- cmd.Wait()
		_ = logFile.Close()
	}()
	s.runs = append(s.runs, r)
	return r, nil
}

// stop sends SIGTERM and waits for the exit, killing the process after grace, as the kubelet does.
func (s *clusterStandIn) stop(r *podRun, grace time.Duration) {
	begin := time.Now()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.exit:
		r.Err = err
	case <-time.After(grace):
		r.Killed = true
		_ = r.cmd.Process.Kill()
		r.Err = <-r.exit
	}
	r.Stopped = time.Now()
	r.StopTook = r.Stopped.Sub(begin)
}

// reportStatus writes what the Deployment controller would: the replicas that run and whether
// the Deployment is Available (its Pod ready).
func (s *clusterStandIn) reportStatus(ctx context.Context, d *appsv1.Deployment, r *podRun) error {
	want := appsv1.DeploymentStatus{ObservedGeneration: d.Generation}
	available := corev1.ConditionFalse
	if r != nil {
		want.Replicas, want.UpdatedReplicas = 1, 1
		if r.ready {
			want.ReadyReplicas, want.AvailableReplicas = 1, 1
			available = corev1.ConditionTrue
		}
	}
	want.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: available, Reason: "StandIn"}}
	have := d.Status
	if have.Replicas == want.Replicas && have.ReadyReplicas == want.ReadyReplicas && have.ObservedGeneration == want.ObservedGeneration &&
		len(have.Conditions) == 1 && have.Conditions[0].Status == available {
		return nil
	}
	now := metav1.Now()
	want.Conditions[0].LastUpdateTime, want.Conditions[0].LastTransitionTime = now, now
	d.Status = want
	if err := s.env.Client.Status().Update(ctx, d); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deployment stand-in: status of %s: %w", d.Name, err)
	}
	return nil
}

func probeReady(addr string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func freeLocalAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// installYAML creates every object of a multi-document YAML.
func installYAML(ctx context.Context, c client.Client, text string) error {
	var errs []error
	for _, doc := range strings.Split(text, "\n---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			return err
		}
		if len(obj.Object) == 0 {
			continue
		}
		if err := c.Create(ctx, obj); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err))
		}
	}
	return errors.Join(errs...)
}
