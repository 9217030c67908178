package equinixmetal

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/equinix/equinix-sdk-go/services/metalv1"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// session is one pass over a project. It keeps nothing beyond the pass.
type session struct {
	api  *metalv1.APIClient
	ep   fabric.Endpoint
	poll time.Duration

	projectName string
	// vxlans are the project's virtual networks in the metro, by VXLAN id.
	vxlans map[int]bool
}

// device is one device as read: its network type, what its ports carry, and their ids.
type device struct {
	id    string
	state DeviceState
	ports map[string]string // port name -> port UUID
}

//nolint:bodyclose // the SDK reads and closes every response body before it returns
func (s *session) loadProject(ctx context.Context) error {
	p, resp, err := s.api.ProjectsApi.FindProjectById(ctx, s.ep.Project).Execute()
	if err != nil {
		return apiError(fmt.Sprintf("switch %s: reading project %s", s.ep.Switch, s.ep.Project), resp, err,
			"check equinixMetal.projectID and that the token's user is a member of the project")
	}
	s.projectName = p.GetName()
	return nil
}

// Info implements fabric.Session.
func (s *session) Info(context.Context) (fabric.Info, error) {
	return fabric.Info{Version: fmt.Sprintf("Equinix Metal project %s (%s), metro %s", s.projectName, s.ep.Project, s.ep.Metro)}, nil
}

// Close implements fabric.Session.
func (s *session) Close() error { return nil }

// loadVXLANs reads the project's virtual networks in the metro.
//
//nolint:bodyclose // the SDK reads and closes every response body before it returns
func (s *session) loadVXLANs(ctx context.Context) error {
	list, resp, err := s.api.VLANsApi.FindVirtualNetworks(ctx, s.ep.Project).Metro(s.ep.Metro).Execute()
	if err != nil {
		return apiError(fmt.Sprintf("switch %s: listing the virtual networks of project %s in metro %s", s.ep.Switch, s.ep.Project, s.ep.Metro), resp, err, "")
	}
	s.vxlans = map[int]bool{}
	for _, vn := range list.GetVirtualNetworks() {
		if code := vn.GetMetroCode(); code != "" && !strings.EqualFold(code, s.ep.Metro) {
			continue
		}
		s.vxlans[int(vn.GetVxlan())] = true
	}
	return nil
}

// Read implements fabric.Session: the VLANs are the project's virtual networks in the metro;
// each named port reports what it carries. A batch still running on a device's port is
// followed first, so the read is of a settled device.
func (s *session) Read(ctx context.Context, ports []string) (fabric.State, error) {
	if err := s.loadVXLANs(ctx); err != nil {
		return fabric.State{}, err
	}
	st := fabric.State{Ports: map[string]fabric.Port{}}
	for _, id := range slices.Sorted(maps.Keys(s.vxlans)) {
		st.VLANs = append(st.VLANs, fabric.VLAN{ID: id})
	}
	byDevice := map[string][]string{}
	for _, name := range ports {
		dev, port, err := SplitPort(name)
		if err != nil {
			return fabric.State{}, err
		}
		byDevice[dev] = append(byDevice[dev], port)
	}
	for _, id := range slices.Sorted(maps.Keys(byDevice)) {
		d, err := s.settledDevice(ctx, id)
		if err != nil {
			return fabric.State{}, err
		}
		for _, port := range byDevice[id] {
			if _, ok := d.ports[port]; ok {
				st.Ports[id+"/"+port] = fabricPort(id+"/"+port, d.state.Ports[port], s.ep.IdleVLAN)
			}
		}
	}
	return st, nil
}

// Apply implements fabric.Session. Every change is checked first: VLANs must exist in the
// metro, port names must be a device's bond0/eth0/eth1 and each device's ports must make a
// network type. Then each device is taken to its target type, one API call at a time.
// ensure-vlan only checks (metalwire brings its own VLANs); remove-vlan does nothing.
func (s *session) Apply(ctx context.Context, batch fabric.Batch) error {
	if s.vxlans == nil {
		if err := s.loadVXLANs(ctx); err != nil {
			return err
		}
	}
	want := map[string]map[string]*PortVLANs{}
	for _, c := range batch {
		switch c.Op {
		case fabric.OpEnsureVLAN:
			if !s.vxlans[c.VLAN.ID] {
				return s.unknownVXLAN(c.VLAN.ID)
			}
		case fabric.OpRemoveVLAN:
		case fabric.OpAccessPort, fabric.OpTrunkPort, fabric.OpResetPort:
			dev, port, err := SplitPort(c.Port.Name)
			if err != nil {
				return err
			}
			pv := PortVLANs{}
			if c.Op != fabric.OpResetPort {
				pv = vlansOf(c.Port)
			}
			for _, v := range pv.VLANs {
				if !s.vxlans[v] {
					return s.unknownVXLAN(v)
				}
			}
			if want[dev] == nil {
				want[dev] = map[string]*PortVLANs{}
			}
			want[dev][port] = &pv
		default:
			return fmt.Errorf("switch %s: %s: %w", s.ep.Switch, c, fabric.ErrUnsupported)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if err := s.applyDevice(ctx, id, want[id]); err != nil {
			return err
		}
	}
	return nil
}

func (s *session) unknownVXLAN(id int) error {
	return fmt.Errorf("switch %s: VLAN %d is not a virtual network (VXLAN) of project %s in metro %s; metalwire does not create VLANs: create it in the project (metal virtual-network create --vxlan %d --metro %s) or pin the network to a VXLAN that exists",
		s.ep.Switch, id, s.ep.Project, s.ep.Metro, id, s.ep.Metro)
}

// applyDevice takes one device to carry the ports in changes, the others as they are.
func (s *session) applyDevice(ctx context.Context, id string, changes map[string]*PortVLANs) error {
	d, err := s.settledDevice(ctx, id)
	if err != nil {
		return err
	}
	target := DeviceState{Ports: map[string]PortVLANs{}}
	for _, port := range []string{Bond0, Eth0, Eth1} {
		if _, ok := d.ports[port]; !ok && changes[port] != nil {
			return fmt.Errorf("device %s has no port %s; fix the NIC naming %s/%s", id, port, id, port)
		}
		if c := changes[port]; c != nil {
			target.Ports[port] = *c
		} else {
			target.Ports[port] = d.state.Ports[port]
		}
	}
	if target.Type, err = TargetType(id, target.Ports); err != nil {
		return err
	}
	for _, step := range Plan(d.state, target) {
		if err := s.do(ctx, d, step); err != nil {
			return fmt.Errorf("device %s: taking it from %s to %s: %w", id, d.state.Type, target.Type, err)
		}
	}
	return nil
}

// do makes one call of a plan.
//
//nolint:bodyclose // the SDK reads and closes every response body before it returns
func (s *session) do(ctx context.Context, d *device, step Step) error {
	portID := d.ports[step.Port]
	what := fmt.Sprintf("port %s/%s: %s", d.id, step.Port, step.Kind)
	var resp *http.Response
	var err error
	switch step.Kind {
	case StepBond:
		_, resp, err = s.api.PortsApi.BondPort(ctx, portID).BulkEnable(step.Bulk).Execute()
	case StepDisbond:
		_, resp, err = s.api.PortsApi.DisbondPort(ctx, portID).BulkDisable(step.Bulk).Execute()
	case StepConvertL2:
		_, resp, err = s.api.PortsApi.ConvertLayer2(ctx, portID).PortAssignInput(metalv1.PortAssignInput{}).Execute()
	case StepConvertL3:
		_, resp, err = s.api.PortsApi.ConvertLayer3(ctx, portID).PortConvertLayer3Input(metalv1.PortConvertLayer3Input{}).Execute()
	case StepBatch:
		return s.batch(ctx, d, step)
	}
	if err != nil {
		return apiError(what, resp, err, "the API refused this network type change; check the device's network settings in the Metal console, then the next pass retries")
	}
	return nil
}

// batch sends one VLAN assignment batch and follows it. An attach the API refuses as already
// done counts as done when the port reads back carrying it.
//
//nolint:bodyclose // the SDK reads and closes every response body before it returns
func (s *session) batch(ctx context.Context, d *device, step Step) error {
	portID := d.ports[step.Port]
	what := fmt.Sprintf("port %s/%s", d.id, step.Port)
	in := metalv1.PortVlanAssignmentBatchCreateInput{}
	for _, a := range step.Assignments {
		state := metalv1.PORTVLANASSIGNMENTBATCHVLANASSIGNMENTSINNERSTATE_UNASSIGNED
		if a.Assigned {
			state = metalv1.PORTVLANASSIGNMENTBATCHVLANASSIGNMENTSINNERSTATE_ASSIGNED
		}
		in.VlanAssignments = append(in.VlanAssignments, metalv1.PortVlanAssignmentBatchCreateInputVlanAssignmentsInner{
			Vlan: metalv1.PtrString(strconv.Itoa(a.VLAN)), State: &state, Native: metalv1.PtrBool(a.Native),
		})
	}
	b, resp, err := s.api.PortsApi.CreatePortVlanAssignmentBatch(ctx, portID).PortVlanAssignmentBatchCreateInput(in).Execute()
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusUnprocessableEntity && s.alreadyDone(ctx, d, step) {
			return nil
		}
		return apiError(what+": creating a VLAN assignment batch ("+step.String()+")", resp, err,
			"check the port's network type and the VLANs named, then the next pass retries")
	}
	return s.follow(ctx, what, portID, b)
}

// alreadyDone reads a port back after a refused batch: the batch was already done when the port
// carries exactly what it asked.
//
//nolint:bodyclose // the SDK reads and closes every response body before it returns
func (s *session) alreadyDone(ctx context.Context, d *device, step Step) bool {
	p, _, err := s.api.PortsApi.FindPortById(ctx, d.ports[step.Port]).Execute()
	if err != nil {
		return false
	}
	got := portVLANs(p)
	for _, a := range step.Assignments {
		if slices.Contains(got.VLANs, a.VLAN) != a.Assigned || (a.Assigned && a.Native != (got.Native == a.VLAN)) {
			return false
		}
	}
	return true
}

// follow reads a batch until it is completed or failed.
//
//nolint:bodyclose // the SDK reads and closes every response body before it returns
func (s *session) follow(ctx context.Context, what, portID string, b *metalv1.PortVlanAssignmentBatch) error {
	for {
		switch b.GetState() {
		case metalv1.PORTVLANASSIGNMENTBATCHSTATE_COMPLETED:
			return nil
		case metalv1.PORTVLANASSIGNMENTBATCHSTATE_FAILED:
			msg := strings.Join(b.GetErrorMessages(), "; ")
			if msg == "" {
				msg = "no message"
			}
			return fmt.Errorf("%s: VLAN assignment batch %s failed: %s; fix the cause (the port's network type, the VLANs' metro), the next pass sends what is still missing", what, b.GetId(), msg)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: VLAN assignment batch %s still %s when the pass ended; the next pass follows it", what, b.GetId(), b.GetState())
		case <-time.After(s.poll):
		}
		next, resp, err := s.api.PortsApi.FindPortVlanAssignmentBatchByPortIdAndBatchId(ctx, portID, b.GetId()).Execute()
		if err != nil && ctx.Err() != nil {
			// The pass ended while the batch was read: as above, it was last seen running.
			return fmt.Errorf("%s: VLAN assignment batch %s still %s when the pass ended; the next pass follows it", what, b.GetId(), b.GetState())
		}
		if err != nil {
			return apiError(fmt.Sprintf("%s: reading VLAN assignment batch %s", what, b.GetId()), resp, err, "")
		}
		b = next
	}
}

// settledDevice follows the batches still running on the device's ports (a pass that ended,
// or a manager that restarted, while they ran), then reads the device.
//
//nolint:bodyclose // the SDK reads and closes every response body before it returns
func (s *session) settledDevice(ctx context.Context, id string) (*device, error) {
	d, err := s.readDevice(ctx, id)
	if err != nil {
		return nil, err
	}
	followed := false
	for _, port := range []string{Bond0, Eth0, Eth1} {
		portID, ok := d.ports[port]
		if !ok {
			continue
		}
		what := fmt.Sprintf("port %s/%s", id, port)
		list, resp, err := s.api.PortsApi.FindPortVlanAssignmentBatches(ctx, portID).Execute()
		if err != nil {
			return nil, apiError(what+": listing VLAN assignment batches", resp, err, "")
		}
		for _, b := range list.GetBatches() {
			if st := b.GetState(); st == metalv1.PORTVLANASSIGNMENTBATCHSTATE_QUEUED || st == metalv1.PORTVLANASSIGNMENTBATCHSTATE_IN_PROGRESS {
				followed = true
				if err := s.follow(ctx, what, portID, &b); err != nil {
					return nil, err
				}
			}
		}
	}
	if followed {
		return s.readDevice(ctx, id)
	}
	return d, nil
}

//nolint:bodyclose // the SDK reads and closes every response body before it returns
func (s *session) readDevice(ctx context.Context, id string) (*device, error) {
	dev, resp, err := s.api.DevicesApi.FindDeviceById(ctx, id).Execute()
	if err != nil {
		return nil, apiError("reading device "+id, resp, err, "check the NIC's device id and that the device is in project "+s.ep.Project)
	}
	d := &device{id: id, state: DeviceState{Type: Layer3, Ports: map[string]PortVLANs{}}, ports: map[string]string{}}
	for _, p := range dev.GetNetworkPorts() {
		name := p.GetName()
		d.ports[name] = p.GetId()
		d.state.Ports[name] = portVLANs(&p)
		if name == Bond0 && p.GetNetworkType() != "" {
			d.state.Type = NetworkType(p.GetNetworkType())
		}
	}
	return d, nil
}

func portVLANs(p *metalv1.Port) PortVLANs {
	out := PortVLANs{}
	for _, vn := range p.GetVirtualNetworks() {
		out.VLANs = append(out.VLANs, int(vn.GetVxlan()))
	}
	sort.Ints(out.VLANs)
	if nv, ok := p.GetNativeVirtualNetworkOk(); ok && nv.GetVxlan() != 0 {
		out.Native = int(nv.GetVxlan())
	}
	return out
}

// apiError says what failed, the API's own message and what to do. It never includes request
// headers, so the token stays out of it.
func apiError(what string, resp *http.Response, err error, todo string) error {
	var oe *metalv1.GenericOpenAPIError
	msg := err.Error()
	if errors.As(err, &oe) {
		if m, ok := oe.Model().(metalv1.Error); ok {
			msgs := m.GetErrors()
			if m.GetError() != "" {
				msgs = append(msgs, m.GetError())
			}
			if len(msgs) > 0 {
				msg = strings.Join(msgs, "; ")
			}
		}
	}
	if resp != nil {
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			todo = "the Metal API refused the token: put a valid API token with access to the project in the Secret's token key"
		}
		msg = fmt.Sprintf("the Metal API answered %d: %s", resp.StatusCode, msg)
	}
	if todo != "" {
		return fmt.Errorf("%s: %s; %s", what, msg, todo)
	}
	return fmt.Errorf("%s: %s", what, msg)
}
