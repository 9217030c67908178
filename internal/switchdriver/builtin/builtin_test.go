package builtin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// Every networkOS value the NetworkDevice CRD accepts has a driver in the manager, so a switch
// admitted by the API server is never left with "no switch driver".
func TestEveryAcceptedNetworkOSHasADriver(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "crd", "bases", "network.metalwire.io_networkdevices.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	schema := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	networkOS := schema.Properties["spec"].Properties["switches"].Items.Schema.Properties["networkOS"]
	if len(networkOS.Enum) == 0 {
		t.Fatal("the CRD lists no networkOS values")
	}
	for _, v := range networkOS.Enum {
		var name string
		if err := json.Unmarshal(v.Raw, &name); err != nil {
			t.Fatal(err)
		}
		if name == string(netv1.NetworkOSSimulated) {
			continue // dev mode's stand-in: by design only metalwire dev has a driver for it
		}
		d, err := switchdriver.For(name)
		if err != nil {
			t.Errorf("networkOS %s: %v", name, err)
			continue
		}
		if d.NetworkOS() != name {
			t.Errorf("networkOS %s is served by a driver of %s", name, d.NetworkOS())
		}
	}
}

// What each shipped driver says it can do (fabric.ACLSetter, fabric.PortStateSetter) is what
// the clusternetwork controller believes before it offers a host (fabric.OSesWithoutACLs,
// fabric.OSesWithoutPortState): a host is never offered to a switch that then refuses the batch,
// nor refused by a switch that could serve it.
func TestDriversAndTheRefusalListsAgree(t *testing.T) {
	for _, name := range switchdriver.Default.Names() {
		d, err := switchdriver.For(name)
		if err != nil {
			t.Fatal(err)
		}
		acl, _ := d.(fabric.ACLSetter)
		if got, want := acl != nil && acl.SetsACLs(), fabric.OSesWithoutACLs[name] == ""; got != want {
			t.Errorf("networkOS %s binds access lists: %v; fabric.OSesWithoutACLs says %q", name, got, fabric.OSesWithoutACLs[name])
		}
		state, _ := d.(fabric.PortStateSetter)
		if got, want := state != nil && state.SetsPortState(), fabric.OSesWithoutPortState[name] == ""; got != want {
			t.Errorf("networkOS %s shuts ports: %v; fabric.OSesWithoutPortState says %q", name, got, fabric.OSesWithoutPortState[name])
		}
	}
	for name := range fabric.OSesWithoutACLs {
		if _, err := switchdriver.For(name); err != nil {
			t.Errorf("fabric.OSesWithoutACLs lists %s, which has no driver", name)
		}
	}
}
