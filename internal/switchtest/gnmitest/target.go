// Package gnmitest is a gNMI target for tests: a gRPC server (github.com/openconfig/gnmi's
// GNMIServer) over mutual TLS that asks for a username and password in each call's metadata and
// keeps an OpenConfig configuration. Every Set is applied to a copy of the configuration with
// ygot (ytypes.SetNode and DeleteNode against the schema of package oc) and validated against
// the YANG schema before it replaces the configuration, all or nothing: a Set the schema refuses
// fails with the schema's message and changes nothing. Get returns RFC 7951 JSON (JSON_IETF).
package gnmitest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/ygot/ygot"
	"github.com/openconfig/ygot/ytypes"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/metalwire/metalwire/internal/switchtest/gnmitest/oc"
)

// Target is a running gNMI target.
type Target struct {
	gnmi.UnimplementedGNMIServer

	// Host and Port are where it listens (127.0.0.1).
	Host string
	Port int
	// Username and Password are asked for in each call's metadata.
	Username, Password string
	// CAPEM signed the target's certificate and the client's; ClientCertPEM and ClientKeyPEM are
	// a client certificate the target accepts.
	CAPEM, ClientCertPEM, ClientKeyPEM []byte

	schema *ytypes.Schema
	srv    *grpc.Server

	mu   sync.Mutex
	root *oc.Device
	sets int
}

// Start runs a target with the given interfaces and the "default" network instance until the
// test ends.
func Start(t testing.TB, ports ...string) *Target {
	t.Helper()
	pki, err := newPKI()
	if err != nil {
		t.Fatal(err)
	}
	schema, err := oc.Schema()
	if err != nil {
		t.Fatal(err)
	}
	root := schema.Root.(*oc.Device)
	root.GetOrCreateNetworkInstances().GetOrCreateNetworkInstance("default").GetOrCreateConfig().Name = ygot.String("default")
	for _, p := range ports {
		root.GetOrCreateInterfaces().GetOrCreateInterface(p).GetOrCreateConfig().Name = ygot.String(p)
	}
	tg := &Target{Username: "gnmi-admin", Password: "pw-" + pki.serial, CAPEM: pki.caPEM,
		ClientCertPEM: pki.clientCertPEM, ClientKeyPEM: pki.clientKeyPEM, schema: schema, root: root}

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pki.caPEM)
	serverCert, err := tls.X509KeyPair(pki.serverCertPEM, pki.serverKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	tg.srv = grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{serverCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		MinVersion:   tls.VersionTLS12,
	})))
	gnmi.RegisterGNMIServer(tg.srv, tg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tg.Host, tg.Port = "127.0.0.1", ln.Addr().(*net.TCPAddr).Port
	go func() { _ = tg.srv.Serve(ln) }()
	t.Cleanup(tg.srv.Stop)
	return tg
}

// Sets is the number of Set calls the target accepted.
func (tg *Target) Sets() int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.sets
}

// Config returns a copy of the configuration.
func (tg *Target) Config() *oc.Device {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	cp, err := ygot.DeepCopy(tg.root)
	if err != nil {
		panic(err)
	}
	return cp.(*oc.Device)
}

// Edit changes the configuration as an operator would by hand, outside metalwire.
func (tg *Target) Edit(f func(root *oc.Device)) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	f(tg.root)
}

func (tg *Target) authorize(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	if first(md.Get("username")) != tg.Username || first(md.Get("password")) != tg.Password {
		return status.Error(codes.Unauthenticated, "authentication failed: bad username or password")
	}
	return nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// Capabilities names the models and the JSON_IETF encoding.
func (tg *Target) Capabilities(ctx context.Context, _ *gnmi.CapabilityRequest) (*gnmi.CapabilityResponse, error) {
	if err := tg.authorize(ctx); err != nil {
		return nil, err
	}
	return &gnmi.CapabilityResponse{
		SupportedModels: []*gnmi.ModelData{
			{Name: "openconfig-interfaces", Organization: "OpenConfig working group"},
			{Name: "openconfig-vlan", Organization: "OpenConfig working group"},
			{Name: "openconfig-acl", Organization: "OpenConfig working group"},
			{Name: "openconfig-if-aggregate", Organization: "OpenConfig working group"},
			{Name: "openconfig-lacp", Organization: "OpenConfig working group"},
		},
		SupportedEncodings: []gnmi.Encoding{gnmi.Encoding_JSON_IETF},
		GNMIVersion:        "0.10.0",
	}, nil
}

// Get returns each path's subtree as JSON_IETF.
func (tg *Target) Get(ctx context.Context, req *gnmi.GetRequest) (*gnmi.GetResponse, error) {
	if err := tg.authorize(ctx); err != nil {
		return nil, err
	}
	tg.mu.Lock()
	defer tg.mu.Unlock()
	resp := &gnmi.GetResponse{}
	for _, p := range req.GetPath() {
		path := join(req.GetPrefix(), p)
		nodes, err := ytypes.GetNode(tg.schema.RootSchema(), tg.root, path)
		if err != nil {
			return nil, status.Errorf(codes.NotFound, "path %s: %v", pathString(path), err)
		}
		for _, n := range nodes {
			gs, ok := n.Data.(ygot.GoStruct)
			if !ok {
				return nil, status.Errorf(codes.Unimplemented, "path %s is a leaf; ask for its container", pathString(path))
			}
			js, err := ygot.Marshal7951(gs, &ygot.RFC7951JSONConfig{AppendModuleName: true})
			if err != nil {
				return nil, status.Errorf(codes.Internal, "path %s: %v", pathString(path), err)
			}
			resp.Notification = append(resp.Notification, &gnmi.Notification{Update: []*gnmi.Update{{
				Path: path, Val: &gnmi.TypedValue{Value: &gnmi.TypedValue_JsonIetfVal{JsonIetfVal: js}},
			}}})
		}
	}
	return resp, nil
}

// Set applies deletes, replaces and updates, in that order as the gNMI specification says, to a
// copy of the configuration, validates the copy against the schema and keeps it only if valid.
func (tg *Target) Set(ctx context.Context, req *gnmi.SetRequest) (*gnmi.SetResponse, error) {
	if err := tg.authorize(ctx); err != nil {
		return nil, err
	}
	tg.mu.Lock()
	defer tg.mu.Unlock()
	cp, err := ygot.DeepCopy(tg.root)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "copying the configuration: %v", err)
	}
	cand := cp.(*oc.Device)
	resp := &gnmi.SetResponse{Prefix: req.GetPrefix()}
	rs := tg.schema.RootSchema()
	for _, p := range req.GetDelete() {
		path := join(req.GetPrefix(), p)
		if err := ytypes.DeleteNode(rs, cand, path); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "delete %s: %v", pathString(path), err)
		}
		resp.Response = append(resp.Response, &gnmi.UpdateResult{Path: p, Op: gnmi.UpdateResult_DELETE})
	}
	for _, u := range req.GetReplace() {
		path := join(req.GetPrefix(), u.GetPath())
		if err := ytypes.DeleteNode(rs, cand, path); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "replace %s: %v", pathString(path), err)
		}
		if err := ytypes.SetNode(rs, cand, path, u.GetVal(), &ytypes.InitMissingElements{}); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "replace %s: %v", pathString(path), err)
		}
		resp.Response = append(resp.Response, &gnmi.UpdateResult{Path: u.GetPath(), Op: gnmi.UpdateResult_REPLACE})
	}
	for _, u := range req.GetUpdate() {
		path := join(req.GetPrefix(), u.GetPath())
		if err := ytypes.SetNode(rs, cand, path, u.GetVal(), &ytypes.InitMissingElements{}); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "update %s: %v", pathString(path), err)
		}
		resp.Response = append(resp.Response, &gnmi.UpdateResult{Path: u.GetPath(), Op: gnmi.UpdateResult_UPDATE})
	}
	if err := cand.ΛValidate(); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "the configuration does not validate against the schema: %v", err)
	}
	tg.root = cand
	tg.sets++
	return resp, nil
}

func join(prefix, p *gnmi.Path) *gnmi.Path {
	if prefix == nil {
		return p
	}
	return &gnmi.Path{Elem: append(append([]*gnmi.PathElem{}, prefix.GetElem()...), p.GetElem()...)}
}

func pathString(p *gnmi.Path) string {
	s, err := ygot.PathToString(p)
	if err != nil {
		return fmt.Sprint(p.GetElem())
	}
	return s
}

// Leaf returns the value of a leaf of the configuration as text ("1001", "[1001 1002]",
// "ACCESS", "false"), or "" when it is not set: what a test compares with what it asked for.
func (tg *Target) Leaf(path string) string {
	p, err := ygot.StringToStructuredPath(path)
	if err != nil {
		panic(err)
	}
	tg.mu.Lock()
	defer tg.mu.Unlock()
	nodes, err := ytypes.GetNode(tg.schema.RootSchema(), tg.root, p)
	if err != nil || len(nodes) == 0 || nodes[0].Data == nil {
		return ""
	}
	tv, err := ygot.EncodeTypedValue(nodes[0].Data, gnmi.Encoding_JSON)
	if err != nil || tv == nil {
		return ""
	}
	if ll := tv.GetLeaflistVal(); ll != nil {
		if len(ll.GetElement()) == 0 {
			return ""
		}
		parts := make([]string, len(ll.GetElement()))
		for i, e := range ll.GetElement() {
			parts[i] = scalar(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return scalar(tv)
}

func scalar(tv *gnmi.TypedValue) string {
	switch v := tv.GetValue().(type) {
	case *gnmi.TypedValue_UintVal:
		return fmt.Sprint(v.UintVal)
	case *gnmi.TypedValue_IntVal:
		return fmt.Sprint(v.IntVal)
	case *gnmi.TypedValue_StringVal:
		return v.StringVal
	case *gnmi.TypedValue_BoolVal:
		return fmt.Sprint(v.BoolVal)
	}
	return tv.String()
}
