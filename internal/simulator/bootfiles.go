package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
)

// The files a host boots with, as Ironic's config drive names them.
const (
	MetaDataFile        = "meta_data.json"
	NetworkDataFile     = "network_data.json"
	UserDataFile        = "user_data"
	PreprovNetworkFile  = "preprov_network_data.json"
	DeprovisionedMarker = "DEPROVISIONED"
)

// HostDir is where a host's files go below dir: hosts/<name> for the default namespace, and
// hosts/<namespace>_<name> otherwise ("_" cannot occur in a Kubernetes name, so two hosts never
// share a folder).
func HostDir(dir, namespace, name string) string {
	if namespace == "default" || namespace == "" {
		return filepath.Join(dir, "hosts", name)
	}
	return filepath.Join(dir, "hosts", namespace+"_"+name)
}

// missingSecretError says which Secret a host waits for; the host stays where it is until the
// Secret appears (the simulator watches Secrets).
type missingSecretError struct {
	field, namespace, name string
}

func (e *missingSecretError) Error() string {
	return fmt.Sprintf("%s: Secret %s/%s not found; create it or fix the reference", e.field, e.namespace, e.name)
}

// secretValue reads the first of keys present in the Secret ref names. A nil ref gives nil.
func (s *Simulator) secretValue(ctx context.Context, field string, host *bmov1.BareMetalHost, ref *corev1.SecretReference, keys ...string) ([]byte, error) {
	if ref == nil || ref.Name == "" {
		return nil, nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = host.Namespace
	}
	secret := &corev1.Secret{}
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &missingSecretError{field: field, namespace: ns, name: ref.Name}
		}
		return nil, err
	}
	for _, k := range keys {
		if v, ok := secret.Data[k]; ok {
			return v, nil
		}
	}
	return nil, fmt.Errorf("%s: Secret %s/%s has no key %q; BMO reads the data from that key", field, ns, ref.Name, keys[0])
}

// DefaultMetaData is the metaData BMO gives every host before the metaData Secret's keys are laid
// over it.
func DefaultMetaData(host *bmov1.BareMetalHost) map[string]any {
	return map[string]any{
		"uuid":             string(host.UID),
		"metal3-namespace": host.Namespace,
		"metal3-name":      host.Name,
		"local-hostname":   host.Name,
		"local_hostname":   host.Name,
		"name":             host.Name,
	}
}

// MetaDataJSON is the host's meta_data.json: BMO's defaults (DefaultMetaData) overlaid by the
// map of the metaData Secret's metaData key (raw; empty for none).
func MetaDataJSON(host *bmov1.BareMetalHost, raw []byte) ([]byte, error) {
	meta := DefaultMetaData(host)
	if len(raw) > 0 {
		overlay := map[string]any{}
		if err := yaml.Unmarshal(raw, &overlay); err != nil {
			return nil, fmt.Errorf("is not a YAML or JSON map: %w", err)
		}
		for k, v := range overlay {
			meta[k] = v
		}
	}
	return json.MarshalIndent(meta, "", "  ")
}

// bootFiles gathers what the host boots with from the Secrets its spec names, as BMO hands them
// to Ironic: metaData is BMO's defaults overlaid by the metaData Secret's map; networkData and
// userData are passed on, networkData converted from YAML to JSON.
func (s *Simulator) bootFiles(ctx context.Context, host *bmov1.BareMetalHost) (map[string][]byte, error) {
	files := map[string][]byte{}

	raw, err := s.secretValue(ctx, "spec.metaData", host, host.Spec.MetaData, "metaData")
	if err != nil {
		return nil, err
	}
	if files[MetaDataFile], err = MetaDataJSON(host, raw); err != nil {
		return nil, fmt.Errorf("spec.metaData: Secret %s key metaData %w", host.Spec.MetaData.Name, err)
	}

	raw, err = s.secretValue(ctx, "spec.networkData", host, host.Spec.NetworkData, "networkData")
	if err != nil {
		return nil, err
	}
	if len(raw) > 0 {
		if files[NetworkDataFile], err = yamlToJSON("spec.networkData", raw); err != nil {
			return nil, err
		}
	}

	raw, err = s.secretValue(ctx, "spec.userData", host, host.Spec.UserData, "userData", "value")
	if err != nil {
		return nil, err
	}
	if len(raw) > 0 {
		files[UserDataFile] = raw
	}
	return files, nil
}

// preprovisioningNetworkData reads the Secret named by spec.preprovisioningNetworkDataName. It
// returns nil when the host names none.
func (s *Simulator) preprovisioningNetworkData(ctx context.Context, host *bmov1.BareMetalHost) ([]byte, error) {
	name := host.Spec.PreprovisioningNetworkDataName
	if name == "" {
		return nil, nil
	}
	raw, err := s.secretValue(ctx, "spec.preprovisioningNetworkDataName", host, &corev1.SecretReference{Name: name}, "networkData")
	if err != nil {
		return nil, err
	}
	return yamlToJSON("spec.preprovisioningNetworkDataName", raw)
}

func yamlToJSON(field string, raw []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%s: networkData is not YAML or JSON: %w", field, err)
	}
	return json.MarshalIndent(v, "", "  ")
}

// writeFiles writes a host's files into its folder; other files there are left alone.
func writeFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// markDeprovisioned keeps the files of a host that was deprovisioned, so they can still be read,
// and adds a marker saying they are no longer what the host runs with.
func markDeprovisioned(dir string, at time.Time) error {
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil
	}
	note := fmt.Sprintf("deprovisioned at %s; the other files are what the host last booted with\n", at.UTC().Format(time.RFC3339))
	return os.WriteFile(filepath.Join(dir, DeprovisionedMarker), []byte(note), 0o600)
}

// BootNetwork is what a host's network data file (NetworkDataFile or PreprovNetworkFile) says
// of its networks and links: enough to show and check which addresses a host booted with.
type BootNetwork struct {
	Networks []struct {
		ID        Scalar `json:"id"`
		IPAddress Scalar `json:"ip_address"`
	} `json:"networks"`
	Links []struct {
		ID   Scalar `json:"id"`
		Type Scalar `json:"type"`
	} `json:"links"`
}

// Scalar is a JSON string, or any other JSON scalar as its text. Network data written by hand
// as YAML can turn a name into another type (an id "n" reads as false); Ironic passes it on as
// it is, and so does the simulator, so reading it must not fail.
type Scalar string

// UnmarshalJSON takes a string as is and any other value as its JSON text.
func (s *Scalar) UnmarshalJSON(data []byte) error {
	var str string
	if err := json.Unmarshal(data, &str); err == nil {
		*s = Scalar(str)
		return nil
	}
	*s = Scalar(data)
	return nil
}

// ReadBootNetwork reads file from a host's folder (HostDir). A file that is not there is an
// error wrapping fs.ErrNotExist.
func ReadBootNetwork(hostDir, file string) (*BootNetwork, error) {
	raw, err := os.ReadFile(filepath.Join(hostDir, file))
	if err != nil {
		return nil, err
	}
	n := &BootNetwork{}
	if err := json.Unmarshal(raw, n); err != nil {
		return nil, fmt.Errorf("%s is not network_data.json: %w", file, err)
	}
	return n, nil
}

// Addresses maps each network with a static address to it, by network id.
func (n *BootNetwork) Addresses() map[string]string {
	out := map[string]string{}
	for _, nw := range n.Networks {
		if nw.IPAddress != "" {
			out[string(nw.ID)] = string(nw.IPAddress)
		}
	}
	return out
}
