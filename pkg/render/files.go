package render

import (
	"errors"
	"fmt"
	"strings"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// Reading the inputs of `metalwire render` (and of the golden tests) from manifest files.

// Template is what a template manifest renders from: a Metal3DataTemplate's metaData and
// networkData, or a Metal3PreprovisioningDataTemplate's preprovisioningNetworkData (no metaData).
type Template struct {
	Kind      string
	Name      string
	Namespace string

	MetaData    *infrav1.MetaData
	NetworkData *infrav1.NetworkData
	// OSNetConfig is a Metal3DataTemplate's own os-net-config template (metalwire), or nil.
	OSNetConfig *infrav1.OSNetConfigTemplate
}

// Template kinds DecodeTemplate reads.
const (
	KindDataTemplate                = "Metal3DataTemplate"
	KindPreprovisioningDataTemplate = "Metal3PreprovisioningDataTemplate"
)

// Preprovisioning reports whether the template is a Metal3PreprovisioningDataTemplate.
func (t *Template) Preprovisioning() bool { return t.Kind == KindPreprovisioningDataTemplate }

// Pools lists the pools the template takes addresses from (see the package functions).
func (t *Template) Pools(f *Facts) ([]PoolRef, error) {
	if t.Preprovisioning() {
		return PreprovisioningPools(t.NetworkData, f)
	}
	refs, err := Pools(t.MetaData, t.NetworkData, f)
	if err != nil {
		return nil, err
	}
	return OSNetConfigPools(t.OSNetConfig, refs), nil
}

// RenderOSNetConfig writes the host's os-net-config files as the data controller does: from
// the template's own osNetConfig when it has one, else from the rendered network data.
func (t *Template) RenderOSNetConfig(net *NetworkData, f *Facts) (*OSNetConfig, error) {
	if t.OSNetConfig != nil {
		return OSNetConfigFromTemplate(t.OSNetConfig, f)
	}
	return net.OSNetConfig(f.NICs)
}

// Networking renders the template's network data, with messages naming its own fields.
func (t *Template) Networking(f *Facts) (*NetworkData, error) {
	if t.Preprovisioning() {
		return PreprovisioningNetworking(t.NetworkData, f)
	}
	return Networking(t.NetworkData, f)
}

// DecodeTemplate reads a Metal3DataTemplate or Metal3PreprovisioningDataTemplate manifest.
// Unknown fields are refused, so a typo (vlanId for vlanID, ipAddesses) is reported instead of
// silently rendering less.
func DecodeTemplate(data []byte) (*Template, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a YAML manifest: %w", err)
	}
	if head.Kind != KindDataTemplate && head.Kind != KindPreprovisioningDataTemplate {
		return nil, fmt.Errorf("kind is %q; give a %s or %s manifest", head.Kind, KindDataTemplate, KindPreprovisioningDataTemplate)
	}
	if want := infrav1.GroupVersion.String(); head.APIVersion != want {
		return nil, fmt.Errorf("apiVersion is %q; metalwire render reads %s (convert older manifests with metalwire migrate)", head.APIVersion, want)
	}
	if head.Kind == KindPreprovisioningDataTemplate {
		p := &infrav1.Metal3PreprovisioningDataTemplate{}
		if err := decodeStrict(data, p); err != nil {
			return nil, fmt.Errorf("%s: %w", head.Kind, err)
		}
		return &Template{Kind: head.Kind, Name: p.Name, Namespace: p.Namespace, NetworkData: p.Spec.PreprovisioningNetworkData}, nil
	}
	d := &infrav1.Metal3DataTemplate{}
	if err := decodeStrict(data, d); err != nil {
		return nil, fmt.Errorf("%s: %w", head.Kind, err)
	}
	return &Template{Kind: head.Kind, Name: d.Name, Namespace: d.Namespace, MetaData: d.Spec.MetaData, NetworkData: d.Spec.NetworkData, OSNetConfig: d.Spec.OSNetConfig}, nil
}

// DecodeHost reads a BareMetalHost manifest. Fields metalwire does not model are ignored: a
// host manifest carries many (bmc, rootDeviceHints, ...).
func DecodeHost(data []byte) (*bmov1.BareMetalHost, error) {
	h := &bmov1.BareMetalHost{}
	if err := yaml.Unmarshal(data, h); err != nil {
		return nil, fmt.Errorf("BareMetalHost: %s", cleanYAMLError(err))
	}
	if h.Kind != "BareMetalHost" {
		return nil, fmt.Errorf("kind is %q; give a BareMetalHost manifest", h.Kind)
	}
	if h.Name == "" {
		return nil, fmt.Errorf("BareMetalHost: metadata.name is empty; name the host")
	}
	return h, nil
}

// DecodePools reads the addresses pools gave a host, keyed by pool name:
//
//	provisioning:
//	  address: 192.168.111.20
//	  prefix: 24
//	  gateway: 192.168.111.1
//	  dnsServers: [192.168.111.1]
func DecodePools(data []byte) (map[string]PoolAddress, error) {
	pools := map[string]PoolAddress{}
	if err := decodeStrict(data, &pools); err != nil {
		return nil, fmt.Errorf("pools: %w; write one entry per pool name with address, prefix, gateway and dnsServers", err)
	}
	return pools, nil
}

// PoolsByName keys addresses given by pool name (as in a --pools file) by the identity of each
// pool the template references, whatever its API group and kind.
func PoolsByName(byName map[string]PoolAddress, refs []PoolRef) map[PoolRef]PoolAddress {
	out := make(map[PoolRef]PoolAddress, len(refs))
	for _, ref := range refs {
		if a, ok := byName[ref.Name]; ok {
			out[ref] = a
		}
	}
	return out
}

// decodeStrict decodes YAML as the API server would: field names are case-sensitive (vlanId is
// not vlanID) and unknown or repeated fields are refused rather than dropped.
func decodeStrict(data []byte, into any) error {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return errors.New(cleanYAMLError(err))
	}
	strict, err := kjson.UnmarshalStrict(j, into)
	if err != nil {
		return errors.New(cleanYAMLError(err))
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = cleanYAMLError(e)
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

// cleanYAMLError drops the decoder's plumbing ("error unmarshaling JSON: while decoding JSON:").
func cleanYAMLError(err error) string {
	s := err.Error()
	for _, p := range []string{"error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}
