// Package metalfake is a local fake of the Equinix Metal API for tests, on net/http/httptest. The
// service shut down on 2026-06-30; its published contract is the OpenAPI description shipped in
// the equinix-sdk-go module, and every request the fake gets and every response it sends is
// validated against that description (kin-openapi). A request or response that does not match
// fails the test.
//
// It serves the calls the equinix-metal driver makes (projects, virtual networks, devices and
// their events, ports: bond, disbond, convert, VLAN assignment batches) and enforces the API's rules: no bond
// while a member port carries VLANs, convert to layer 3 only once VLANs are unassigned, VLANs
// only on a port that can carry them, batches that go queued -> in_progress -> completed (or
// failed), a duplicate attach refused with 422, an unknown VXLAN refused with 422.
package metalfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/metalwire/metalwire/internal/testenv"
	"github.com/metalwire/metalwire/internal/testneeds"
)

// SpecPath is the OpenAPI description's path inside the equinix-sdk-go module.
const SpecPath = "spec/services/metalv1/oas3.fetched/openapi3.yaml"

var (
	specOnce sync.Once
	spec     *openapi3.T
	specErr  error
)

// loadSpec reads the OpenAPI description from the module directory, once per test binary.
func loadSpec() (*openapi3.T, error) {
	specOnce.Do(func() {
		dir, err := testenv.ModuleDir("github.com/equinix/equinix-sdk-go")
		if err != nil {
			specErr = err
			return
		}
		loader := openapi3.NewLoader()
		loader.IsExternalRefsAllowed = true
		spec, specErr = loader.LoadFromFile(filepath.Join(dir, SpecPath))
	})
	return spec, specErr
}

// API is one fake Metal API with one project.
type API struct {
	t      testing.TB
	srv    *httptest.Server
	router routers.Router
	// URL is the API's base URL, to put in a switch's address.
	URL string
	// Token is the only token it accepts.
	Token string
	// Project is the project's UUID.
	Project string

	mu      sync.Mutex
	vns     []vn
	devices map[string]*Device
	ports   map[string]*Port
	batches map[string]*batch
	order   []string
	calls   []string
	seq     int
	hold    bool
	failMsg string
	created int
	behind  *behind
}

type behind struct {
	port string
	item item
}

type vn struct {
	id    string
	vxlan int
	metro string
}

// Device is a fake device and its three ports.
type Device struct {
	ID, Hostname, Metro string
	// Type is the device's network type.
	Type  string
	Ports map[string]*Port
	// events, oldest first.
	events []event
	// eventReads counts the reads of the device's events.
	eventReads int
}

type event struct {
	id, typ, state, body string
	at                   time.Time
}

// Port is a fake device port.
type Port struct {
	ID, Name string
	device   *Device
	Bonded   bool
	VLANs    []int
	Native   int
}

type batch struct {
	id, port string
	state    string
	items    []item
	errs     []string
	reads    int
	fail     string
}

type item struct {
	vlan     int
	assigned bool
	native   bool
}

// New starts a fake API that accepts token, with one project; it stops when the test ends.
func New(t testing.TB, token string) *API {
	t.Helper()
	doc, err := loadSpec()
	if err != nil {
		testneeds.Missing(t, "the Metal API's OpenAPI description in the equinix-sdk-go module: %v", err)
	}
	a := &API{t: t, Token: token, Project: "0c2a5f3e-4b6d-4e7f-8a9b-1c2d3e4f5a6b", devices: map[string]*Device{}, ports: map[string]*Port{}, batches: map[string]*batch{}}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	a.URL = a.srv.URL + "/metal/v1"
	own := *doc
	own.Servers = openapi3.Servers{{URL: a.URL}}
	if a.router, err = gorillamux.NewRouter(&own); err != nil {
		t.Fatalf("routing the Metal API's OpenAPI description: %v", err)
	}
	return a
}

func (a *API) uuid() string {
	a.seq++
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", a.seq, a.seq)
}

// AddVXLAN adds a virtual network of the project in metro.
func (a *API) AddVXLAN(vxlan int, metro string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.vns = append(a.vns, vn{id: a.uuid(), vxlan: vxlan, metro: metro})
}

// AddDevice adds a device in metro in layer3 (eth0 and eth1 in bond0) and returns its id.
func (a *API) AddDevice(hostname, metro string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := &Device{ID: a.uuid(), Hostname: hostname, Metro: metro, Type: "layer3", Ports: map[string]*Port{}}
	for _, name := range []string{"bond0", "eth0", "eth1"} {
		p := &Port{ID: a.uuid(), Name: name, device: d, Bonded: true}
		d.Ports[name] = p
		a.ports[p.ID] = p
	}
	a.devices[d.ID] = d
	return d.ID
}

// AddEvent records an event of the device: typ as the API names it
// ("network_configuration_success", or "user.<state>" for what a host posts to its
// user_state_url), state and body (the message).
func (a *API) AddEvent(device, typ, state, body string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := a.devices[device]
	d.events = append(d.events, event{id: a.uuid(), typ: typ, state: state, body: body, at: time.Now().UTC()})
}

// EventReads counts the reads of the device's events so far.
func (a *API) EventReads(device string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.devices[device].eventReads
}

// DeviceState is a copy of a device's network type and its ports' VLANs ("bond0" -> [1001]),
// with the native VLAN of each port.
func (a *API) DeviceState(id string) (typ string, vlans map[string][]int, native map[string]int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := a.devices[id]
	vlans, native = map[string][]int{}, map[string]int{}
	for name, p := range d.Ports {
		if len(p.VLANs) > 0 {
			vlans[name] = append([]int(nil), p.VLANs...)
		}
		if p.Native != 0 {
			native[name] = p.Native
		}
	}
	return d.Type, vlans, native
}

// Hold keeps new batches in_progress until Hold(false): a pass that ends while it follows one
// leaves it running, as a manager that restarts mid-batch does.
func (a *API) Hold(on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hold = on
}

// FailNextBatch makes the next batch created end failed with msg, changing nothing.
func (a *API) FailNextBatch(msg string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failMsg = msg
}

// AssignBehind makes another client assign vlan (native or not) to the device's port just before
// the next batch request for that port arrives, so the request finds it already done.
func (a *API) AssignBehind(device, port string, vlan int, native bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.behind = &behind{port: a.devices[device].Ports[port].ID, item: item{vlan: vlan, assigned: true, native: native}}
}

// BatchesCreated counts the batches created so far.
func (a *API) BatchesCreated() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.created
}

// Calls lists the changing calls so far, "POST bond0 convert/layer-2", in order.
func (a *API) Calls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.calls...)
}

// ResetCalls forgets the calls so far.
func (a *API) ResetCalls() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = nil
}

// recorder keeps a response to validate it before it is sent.
type recorder struct {
	status int
	header http.Header
	body   bytes.Buffer
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	route, params, err := a.router.FindRoute(r)
	if err != nil {
		a.t.Errorf("Metal API fake: %s %s is no operation of the OpenAPI description: %v", r.Method, r.URL.Path, err)
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: func(context.Context, *openapi3filter.AuthenticationInput) error { return nil }}}
	if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
		a.t.Errorf("Metal API fake: request %s %s does not match the OpenAPI description: %v", r.Method, r.URL.Path, err)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"errors":["request does not match the API description"]}`))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := &recorder{header: http.Header{"Content-Type": {"application/json"}}}
	if r.Header.Get("X-Auth-Token") != a.Token {
		rec.reply(http.StatusUnauthorized, map[string]any{"error": "Invalid authentication token"})
	} else {
		a.mu.Lock()
		a.handle(rec, r, route.Path, params, body)
		a.mu.Unlock()
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.status, Header: rec.header,
		Body: io.NopCloser(bytes.NewReader(rec.body.Bytes()))}
	if err := openapi3filter.ValidateResponse(r.Context(), out); err != nil {
		a.t.Errorf("Metal API fake: its response to %s %s does not match the OpenAPI description: %v", r.Method, r.URL.Path, err)
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body.Bytes())
}

func (rec *recorder) reply(status int, v any) {
	rec.status = status
	if err := json.NewEncoder(&rec.body).Encode(v); err != nil {
		panic(fmt.Sprintf("Metal API fake: encoding a reply: %v", err))
	}
}

func (rec *recorder) refuse(status int, msg string, args ...any) {
	rec.reply(status, map[string]any{"errors": []string{fmt.Sprintf(msg, args...)}})
}
