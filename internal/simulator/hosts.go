package simulator

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HostOptions shape the hosts CreateHosts makes.
type HostOptions struct {
	// Labels and Annotations are put on every host (for example the pre-provisioning reference
	// annotation, or labels a Metal3Machine's hostSelector matches).
	Labels      map[string]string
	Annotations map[string]string
	// Offline creates hosts with spec.online false; by default they are online, as in Metal3's
	// examples.
	Offline bool
}

// HostName is the name CreateHosts gives host i.
func HostName(i int) string { return fmt.Sprintf("host-%d", i) }

// CreateHosts registers n hosts, host-0 to host-<n-1>, in namespace ns, each with a BMC
// credentials Secret, as someone enrolling servers would. Hosts that already exist are left as
// they are, so dev mode can be restarted on the same control plane. It returns the hosts' names.
func (s *Simulator) CreateHosts(ctx context.Context, ns string, n int, opts HostOptions) ([]string, error) {
	names := make([]string, 0, n)
	for i := range n {
		name := HostName(i)
		if err := s.createHost(ctx, ns, name, i, opts); err != nil {
			return names, err
		}
		names = append(names, name)
	}
	return names, nil
}

func (s *Simulator) createHost(ctx context.Context, ns, name string, i int, opts HostOptions) error {
	credentials := name + "-bmc-secret"
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: credentials, Namespace: ns, Labels: map[string]string{"environment.metal3.io": "baremetal"}},
		StringData: map[string]string{"username": "admin", "password": "simulated"},
	}
	if err := s.Client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating BMC credentials %s/%s: %w", ns, credentials, err)
	}

	u := newHostObject()
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(maps.Clone(opts.Labels))
	u.SetAnnotations(maps.Clone(opts.Annotations))
	// Fields BMO has and our typed subset does not (bmc, bootMode, rootDeviceHints) are written
	// unstructured; BMO-aware tools see a complete host.
	u.Object["spec"] = map[string]any{
		"online":         !opts.Offline,
		"bootMode":       "UEFI",
		"bootMACAddress": MAC(name, PXEInterface),
		"bmc": map[string]any{
			"address":                        fmt.Sprintf("redfish-virtualmedia+https://192.168.111.%d/redfish/v1/Systems/1", 10+i%240),
			"credentialsName":                credentials,
			"disableCertificateVerification": true,
		},
		"rootDeviceHints": map[string]any{"deviceName": "/dev/sda"},
	}
	if err := s.Client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating BareMetalHost %s/%s: %w", ns, name, err)
	}
	return nil
}
