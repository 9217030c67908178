package metalfake_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/equinix/equinix-sdk-go/services/metalv1"

	"github.com/metalwire/metalwire/internal/switchdriver/equinixmetal/metalfake"
)

// The fake answers as the API does when a client breaks its rules; the driver's tests rely on it.
//
//nolint:bodyclose // the SDK reads and closes every body before it returns
func TestFakeEnforcesTheAPIRules(t *testing.T) {
	api := metalfake.New(t, "tok")
	api.AddVXLAN(1001, "da")
	api.AddVXLAN(2001, "sv")
	dev := api.AddDevice("node-0", "da")
	cfg := metalv1.NewConfiguration()
	cfg.Servers = metalv1.ServerConfigurations{{URL: api.URL}}
	cfg.AddDefaultHeader("X-Auth-Token", "tok")
	c := metalv1.NewAPIClient(cfg)
	ctx := context.Background()
	d, _, err := c.DevicesApi.FindDeviceById(ctx, dev).Execute()
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]string{}
	for _, p := range d.GetNetworkPorts() {
		ports[p.GetName()] = p.GetId()
	}
	assign := func(port string, vlan string, native bool) (*metalv1.PortVlanAssignmentBatch, *http.Response, error) {
		st := metalv1.PORTVLANASSIGNMENTBATCHVLANASSIGNMENTSINNERSTATE_ASSIGNED
		return c.PortsApi.CreatePortVlanAssignmentBatch(ctx, ports[port]).PortVlanAssignmentBatchCreateInput(metalv1.PortVlanAssignmentBatchCreateInput{
			VlanAssignments: []metalv1.PortVlanAssignmentBatchCreateInputVlanAssignmentsInner{{Vlan: &vlan, State: &st, Native: &native}},
		}).Execute()
	}
	refused := func(what string, resp *http.Response, err error, msg string) {
		t.Helper()
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: got %v; want 422 %q", what, err, msg)
		}
	}
	// follow reads a batch to its end and returns the states it went through.
	follow := func(b *metalv1.PortVlanAssignmentBatch, port string) []string {
		states := []string{string(b.GetState())}
		for len(states) < 10 && b.GetState() != "completed" && b.GetState() != "failed" {
			b, _, err = c.PortsApi.FindPortVlanAssignmentBatchByPortIdAndBatchId(ctx, ports[port], b.GetId()).Execute()
			if err != nil {
				t.Fatal(err)
			}
			states = append(states, string(b.GetState()))
		}
		return states
	}

	_, resp, err := assign("bond0", "2001", false)
	refused("a VXLAN of another metro", resp, err, "Virtual network 2001 was not found in metro da")
	_, resp, err = assign("eth1", "1001", false)
	refused("VLANs on a bonded eth port", resp, err, "cannot carry virtual networks while the device is layer3")

	if _, _, err = c.PortsApi.DisbondPort(ctx, ports["eth1"]).Execute(); err != nil {
		t.Fatalf("disbond eth1: %v", err)
	}
	b, _, err := assign("eth1", "1001", false)
	if err != nil {
		t.Fatalf("assign on hybrid eth1: %v", err)
	}
	if got := strings.Join(follow(b, "eth1"), " "); got != "queued in_progress completed" {
		t.Errorf("batch states %q; want queued in_progress completed", got)
	}
	_, resp, err = assign("eth1", "1001", false)
	refused("a duplicate attach", resp, err, "already assigned")
	_, resp, err = c.PortsApi.BondPort(ctx, ports["eth1"]).Execute()
	refused("bond while the member carries VLANs", resp, err, "unassign them before bonding")

	api.FailNextBatch("boom")
	un := metalv1.PORTVLANASSIGNMENTBATCHVLANASSIGNMENTSINNERSTATE_UNASSIGNED
	b, _, err = c.PortsApi.CreatePortVlanAssignmentBatch(ctx, ports["eth1"]).PortVlanAssignmentBatchCreateInput(metalv1.PortVlanAssignmentBatchCreateInput{
		VlanAssignments: []metalv1.PortVlanAssignmentBatchCreateInputVlanAssignmentsInner{{Vlan: metalv1.PtrString("1001"), State: &un}},
	}).Execute()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(follow(b, "eth1"), " "); got != "queued in_progress failed" {
		t.Errorf("batch states %q; want queued in_progress failed", got)
	}
	if typ, vlans, _ := api.DeviceState(dev); typ != "hybrid" || len(vlans["eth1"]) != 1 {
		t.Errorf("a failed batch changed the device: %s %v", typ, vlans)
	}

	// Back to layer3 then layer2-bonded with a VLAN: convert/layer-3 refuses while it carries it.
	_, _, _ = c.PortsApi.CreatePortVlanAssignmentBatch(ctx, ports["eth1"]).PortVlanAssignmentBatchCreateInput(metalv1.PortVlanAssignmentBatchCreateInput{
		VlanAssignments: []metalv1.PortVlanAssignmentBatchCreateInputVlanAssignmentsInner{{Vlan: metalv1.PtrString("1001"), State: &un}},
	}).Execute()
	list, _, _ := c.PortsApi.FindPortVlanAssignmentBatches(ctx, ports["eth1"]).Execute()
	last := list.GetBatches()[len(list.GetBatches())-1]
	follow(&last, "eth1")
	if _, _, err = c.PortsApi.BondPort(ctx, ports["eth1"]).Execute(); err != nil {
		t.Fatalf("bond eth1 once its VLANs are gone: %v", err)
	}
	if _, _, err = c.PortsApi.ConvertLayer2(ctx, ports["bond0"]).PortAssignInput(metalv1.PortAssignInput{}).Execute(); err != nil {
		t.Fatalf("convert to layer 2: %v", err)
	}
	b, _, err = assign("bond0", "1001", true)
	if err != nil {
		t.Fatal(err)
	}
	follow(b, "bond0")
	_, resp, err = c.PortsApi.ConvertLayer3(ctx, ports["bond0"]).PortConvertLayer3Input(metalv1.PortConvertLayer3Input{}).Execute()
	refused("convert to layer 3 while bond0 carries VLANs", resp, err, "VLANs must first be unassigned")

	cfg.DefaultHeader["X-Auth-Token"] = "other"
	if _, resp, err = metalv1.NewAPIClient(cfg).ProjectsApi.FindProjectById(ctx, api.Project).Execute(); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong token: got %v; want 401", err)
	}
}
