package equinixmetal_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/switchdriver/equinixmetal"
	"github.com/metalwire/metalwire/internal/switchdriver/equinixmetal/metalfake"
	"github.com/metalwire/metalwire/pkg/fabric"
)

const token = "tok-3b1f9e-secret-do-not-log"

// rig is a fake project with one device in metro da and VXLANs 1001-1003 there (3999 only in sv).
type rig struct {
	t    *testing.T
	api  *metalfake.API
	drv  *equinixmetal.Driver
	ep   fabric.Endpoint
	dev  string
	rec  fabric.Record
	errs []error
}

func newRig(t *testing.T) *rig {
	api := metalfake.New(t, token)
	for _, v := range []int{1001, 1002, 1003} {
		api.AddVXLAN(v, "da")
	}
	api.AddVXLAN(3999, "sv")
	r := &rig{t: t, api: api, drv: &equinixmetal.Driver{PollInterval: 2 * time.Millisecond}}
	r.ep = fabric.Endpoint{Switch: "metal", Address: api.URL, Project: api.Project, Metro: "da", IdleVLAN: 1,
		Credentials: fabric.Credentials{Token: token}}
	r.dev = api.AddDevice("node-0", "da")
	t.Cleanup(func() {
		for _, err := range r.errs {
			if strings.Contains(err.Error(), token) {
				t.Errorf("an error carries the API token: %v", err)
			}
		}
	})
	return r
}

func (r *rig) port(name string) string { return r.dev + "/" + name }

// pass does what the fabric controller does with a switch: read back, diff, apply; it returns
// the changes sent and the error.
func (r *rig) pass(ctx context.Context, want fabric.State) (fabric.Batch, error) {
	r.t.Helper()
	sess, err := r.drv.Connect(ctx, r.ep)
	if err != nil {
		r.errs = append(r.errs, err)
		return nil, err
	}
	defer func() { _ = sess.Close() }()
	names := append([]string{}, r.rec.Ports...)
	for n := range want.Ports {
		names = append(names, n)
	}
	have, err := sess.Read(ctx, names)
	if err != nil {
		r.errs = append(r.errs, err)
		return nil, err
	}
	b := fabric.Diff(want, have, r.rec, 1)
	if len(b) == 0 {
		return nil, nil
	}
	if err := sess.Apply(ctx, b); err != nil {
		r.errs = append(r.errs, err)
		return b, err
	}
	r.rec = fabric.RecordOf(want)
	return b, nil
}

func (r *rig) mustPass(want fabric.State) {
	r.t.Helper()
	if _, err := r.pass(context.Background(), want); err != nil {
		r.t.Fatalf("pass: %v", err)
	}
	// A second pass finds nothing to do: the read-back equals what was set.
	before := r.api.BatchesCreated()
	r.api.ResetCalls()
	b, err := r.pass(context.Background(), want)
	if err != nil || len(b) != 0 || len(r.api.Calls()) != 0 || r.api.BatchesCreated() != before {
		r.t.Fatalf("second pass: changes %v, calls %v, err %v; want none", b, r.api.Calls(), err)
	}
}

func (r *rig) expect(typ string, vlans map[string][]int, native map[string]int) {
	r.t.Helper()
	gotType, gotVLANs, gotNative := r.api.DeviceState(r.dev)
	if gotType != typ || !reflect.DeepEqual(gotVLANs, vlans) || !reflect.DeepEqual(gotNative, native) {
		r.t.Fatalf("device is %s with VLANs %v native %v; want %s with %v native %v", gotType, gotVLANs, gotNative, typ, vlans, native)
	}
}

func state(ports ...fabric.Port) fabric.State {
	st := fabric.State{Ports: map[string]fabric.Port{}}
	seen := map[int]bool{}
	for _, p := range ports {
		st.Ports[p.Name] = p
		for _, v := range append([]int{p.VLAN}, p.Trunk...) {
			if v != 0 && !seen[v] {
				seen[v] = true
				st.VLANs = append(st.VLANs, fabric.VLAN{ID: v})
			}
		}
	}
	return st
}

func trunk(name string, vlans ...int) fabric.Port {
	return fabric.Port{Name: name, Mode: fabric.ModeTrunk, Trunk: vlans}
}

func access(name string, vlan int) fabric.Port {
	return fabric.Port{Name: name, Mode: fabric.ModeAccess, VLAN: vlan}
}

func none() map[string][]int   { return map[string][]int{} }
func noNative() map[string]int { return map[string]int{} }

// TestEveryNetworkTypeAndBack walks one device through every network type, each time the way the
// API requires, and back to layer3.
func TestEveryNetworkTypeAndBack(t *testing.T) {
	r := newRig(t)
	steps := []struct {
		name   string
		want   fabric.State
		typ    string
		vlans  map[string][]int
		native map[string]int
		calls  []string
	}{{
		name: "hybrid: eth1 leaves the bond and carries two VLANs tagged",
		want: state(trunk(r.port("eth1"), 1001, 1002)), typ: "hybrid",
		vlans: map[string][]int{"eth1": {1001, 1002}}, native: noNative(),
		calls: []string{"disbond eth1", "batch eth1 1001=assigned 1002=assigned"},
	}, {
		name: "back to layer3: VLANs unassigned before eth1 is bonded again",
		want: state(), typ: "layer3", vlans: none(), native: noNative(),
		calls: []string{"batch eth1 1001=unassigned 1002=unassigned", "bond eth1"},
	}, {
		name: "hybrid-bonded: VLANs tagged on bond0, still layer 3",
		want: state(trunk(r.port("bond0"), 1001)), typ: "hybrid-bonded",
		vlans: map[string][]int{"bond0": {1001}}, native: noNative(),
		calls: []string{"batch bond0 1001=assigned"},
	}, {
		name: "layer2-bonded: a native VLAN needs bond0 in layer 2, so the VLAN goes first",
		want: state(access(r.port("bond0"), 1002)), typ: "layer2-bonded",
		vlans: map[string][]int{"bond0": {1002}}, native: map[string]int{"bond0": 1002},
		calls: []string{"batch bond0 1001=unassigned", "convert/layer-2 bond0", "batch bond0 1002=assigned(native)"},
	}, {
		name: "within layer2-bonded only the batch that differs",
		want: state(fabric.Port{Name: r.port("bond0"), Mode: fabric.ModeTrunk, VLAN: 1002, Trunk: []int{1003}}), typ: "layer2-bonded",
		vlans: map[string][]int{"bond0": {1002, 1003}}, native: map[string]int{"bond0": 1002},
		calls: []string{"batch bond0 1003=assigned"},
	}, {
		name: "layer2-individual: through layer3, converted to layer 2, then both ports out of the bond",
		want: state(access(r.port("eth0"), 1001), trunk(r.port("eth1"), 1002, 1003)), typ: "layer2-individual",
		vlans: map[string][]int{"eth0": {1001}, "eth1": {1002, 1003}}, native: map[string]int{"eth0": 1001},
		calls: []string{"batch bond0 1002=unassigned 1003=unassigned", "convert/layer-3 bond0", "convert/layer-2 bond0",
			"disbond bond0 (bulk_disable)", "batch eth0 1001=assigned(native)", "batch eth1 1002=assigned 1003=assigned"},
	}, {
		name: "hybrid from layer2-individual: every VLAN off, bonded, layer 3, then eth1 out",
		want: state(trunk(r.port("eth1"), 1003)), typ: "hybrid",
		vlans: map[string][]int{"eth1": {1003}}, native: noNative(),
		calls: []string{"batch eth0 1001=unassigned", "batch eth1 1002=unassigned 1003=unassigned", "bond bond0 (bulk_enable)",
			"convert/layer-3 bond0", "disbond eth1", "batch eth1 1003=assigned"},
	}, {
		name: "back to layer3 from hybrid",
		want: state(), typ: "layer3", vlans: none(), native: noNative(),
		calls: []string{"batch eth1 1003=unassigned", "bond eth1"},
	}}
	for _, s := range steps {
		r.api.ResetCalls()
		if _, err := r.pass(context.Background(), s.want); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := r.api.Calls(); !reflect.DeepEqual(got, s.calls) {
			t.Errorf("%s: calls\n got %q\nwant %q", s.name, got, s.calls)
		}
		r.expect(s.typ, s.vlans, s.native)
		r.mustPass(s.want)
	}
}

func TestUnknownVXLANIsRefusedBeforeAnythingIsSent(t *testing.T) {
	r := newRig(t)
	_, err := r.pass(context.Background(), state(trunk(r.port("eth1"), 1001, 3999)))
	if err == nil || !strings.Contains(err.Error(), "VLAN 3999 is not a virtual network") || !strings.Contains(err.Error(), "metro da") ||
		!strings.Contains(err.Error(), "does not create VLANs") {
		t.Fatalf("error %v; want one naming VLAN 3999, metro da and what to do", err)
	}
	if calls := r.api.Calls(); len(calls) != 0 {
		t.Errorf("calls %q were sent; want none", calls)
	}
	r.expect("layer3", none(), noNative())
}

func TestBatchFailingHalfWayIsReportedAndFinishedNextPass(t *testing.T) {
	r := newRig(t)
	want := state(access(r.port("bond0"), 1001))
	r.api.FailNextBatch("Port bond0: switch rejected the VLAN configuration")
	_, err := r.pass(context.Background(), want)
	if err == nil || !strings.Contains(err.Error(), "port "+r.port("bond0")) ||
		!strings.Contains(err.Error(), "switch rejected the VLAN configuration") || !strings.Contains(err.Error(), "failed") {
		t.Fatalf("error %v; want the port, the API's message and the failed batch", err)
	}
	// Half-way: converted to layer 2, no VLAN yet.
	r.expect("layer2-bonded", none(), noNative())
	r.api.ResetCalls()
	r.mustPassAfterFailure(want)
	if got, wantCalls := r.api.Calls(), []string{"batch bond0 1001=assigned(native)"}; !reflect.DeepEqual(got, wantCalls) {
		t.Errorf("the next pass sent %q; want only what was missing, %q", got, wantCalls)
	}
	r.expect("layer2-bonded", map[string][]int{"bond0": {1001}}, map[string]int{"bond0": 1001})
}

func (r *rig) mustPassAfterFailure(want fabric.State) {
	r.t.Helper()
	if _, err := r.pass(context.Background(), want); err != nil {
		r.t.Fatalf("pass after the failure: %v", err)
	}
}

func TestRestartMidBatchFollowsTheSameBatch(t *testing.T) {
	r := newRig(t)
	want := state(trunk(r.port("eth1"), 1001, 1002))
	r.api.Hold(true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := r.pass(ctx, want)
	if err == nil || !strings.Contains(err.Error(), "still in_progress") {
		t.Fatalf("error %v; want the batch still in progress when the pass ended", err)
	}
	if n := r.api.BatchesCreated(); n != 1 {
		t.Fatalf("%d batches created; want 1", n)
	}
	// A new driver (the manager restarted) finds the batch and follows it; no second batch.
	r.drv = &equinixmetal.Driver{PollInterval: 2 * time.Millisecond}
	r.api.Hold(false)
	r.api.ResetCalls()
	if _, err := r.pass(context.Background(), want); err != nil {
		t.Fatalf("pass after the restart: %v", err)
	}
	if n := r.api.BatchesCreated(); n != 1 {
		t.Errorf("%d batches created; want the first one followed, not a second (calls %q)", n, r.api.Calls())
	}
	r.expect("hybrid", map[string][]int{"eth1": {1001, 1002}}, noNative())
	r.mustPass(want)
}

func TestAttachAlreadyDoneCountsAsDone(t *testing.T) {
	r := newRig(t)
	r.mustPass(state(trunk(r.port("bond0"), 1001)))
	r.api.AssignBehind(r.dev, "bond0", 1002, false)
	if _, err := r.pass(context.Background(), state(trunk(r.port("bond0"), 1001, 1002))); err != nil {
		t.Fatalf("an attach the API refused as already done is done: %v", err)
	}
	r.expect("hybrid-bonded", map[string][]int{"bond0": {1001, 1002}}, noNative())
}

func TestRefusedTokenSaysWhatToDoAndNotTheToken(t *testing.T) {
	r := newRig(t)
	r.ep.Credentials.Token = "wrong-" + token
	_, err := r.pass(context.Background(), state())
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "refused the token") ||
		!strings.Contains(err.Error(), "Invalid authentication token") {
		t.Fatalf("error %v; want the 401, the API's message and what to do", err)
	}
}

func TestPortsThatMakeNoNetworkTypeAreRefused(t *testing.T) {
	r := newRig(t)
	for _, tc := range []struct {
		want fabric.State
		msg  string
	}{
		{state(trunk(r.port("eth0"), 1001)), "eth0 cannot carry VLANs alone"},
		{state(trunk(r.port("bond0"), 1001), trunk(r.port("eth1"), 1002)), "bond0 and on eth0/eth1 at once"},
		{state(trunk(r.dev+"/eth7", 1001)), "use bond0, eth0 or eth1"},
	} {
		r.rec = fabric.Record{}
		if _, err := r.pass(context.Background(), tc.want); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("error %v; want %q", err, tc.msg)
		}
	}
	if calls := r.api.Calls(); len(calls) != 0 {
		t.Errorf("calls %q were sent; want none", calls)
	}
}
