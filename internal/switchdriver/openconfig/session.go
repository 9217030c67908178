package openconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Session is one gRPC connection to a switch.
type Session struct {
	conn    *grpc.ClientConn
	client  gnmi.GNMIClient
	ep      fabric.Endpoint
	timeout time.Duration
	version string
	// sets counts the Set calls sent (the idempotence measure).
	sets int
}

var _ fabric.Session = &Session{}

// Changes is the number of Set calls this session sent.
func (s *Session) Changes() int { return s.sets }

// Close ends the connection.
func (s *Session) Close() error { return s.conn.Close() }

// Info is the gNMI version the switch serves; gNMI has no standard path for the OS version.
func (s *Session) Info(context.Context) (fabric.Info, error) {
	return fabric.Info{Version: "gNMI " + s.version}, nil
}

// The paths metalwire reads and writes.
func interfacesPath() *gnmi.Path { return &gnmi.Path{Elem: []*gnmi.PathElem{{Name: "interfaces"}}} }

func vlansPath() *gnmi.Path {
	return &gnmi.Path{Elem: []*gnmi.PathElem{
		{Name: "network-instances"}, {Name: "network-instance", Key: map[string]string{"name": "default"}}, {Name: "vlans"},
	}}
}

func vlanPath(id int) *gnmi.Path {
	p := vlansPath()
	p.Elem = append(p.Elem, &gnmi.PathElem{Name: "vlan", Key: map[string]string{"vlan-id": strconv.Itoa(id)}})
	return p
}

// interfaceConfigPath is an interface's config container (its enabled leaf: the port state).
func interfaceConfigPath(port string) *gnmi.Path {
	return &gnmi.Path{Elem: []*gnmi.PathElem{
		{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": port}}, {Name: "config"},
	}}
}

func switchedVLANPath(port string) *gnmi.Path {
	return &gnmi.Path{Elem: []*gnmi.PathElem{
		{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": port}},
		{Name: "ethernet"}, {Name: "switched-vlan"}, {Name: "config"},
	}}
}

// Read gets the interfaces and the default network instance's VLANs.
func (s *Session) Read(ctx context.Context, ports []string) (fabric.State, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	t, err := s.get(ctx)
	if err != nil {
		return fabric.State{}, err
	}
	st, err := t.state(s.ep, ports)
	if err != nil {
		return fabric.State{}, fmt.Errorf("switch %s: reading the gNMI answer: %w", s.ep.Switch, err)
	}
	if st.ACLs, err = s.readACLs(ctx, ports); err != nil {
		return fabric.State{}, err
	}
	return st, nil
}

// get reads /interfaces and the default network instance's VLANs, and /lacp when the switch
// declares aggregates (a switch that serves no openconfig-lacp answers it NotFound: no LACP).
func (s *Session) get(ctx context.Context) (tree, error) {
	paths := []*gnmi.Path{interfacesPath(), vlansPath()}
	resp, err := s.client.Get(ctx, &gnmi.GetRequest{Path: paths, Type: gnmi.GetRequest_CONFIG, Encoding: gnmi.Encoding_JSON_IETF})
	if err != nil {
		return tree{}, fmt.Errorf("switch %s: gNMI Get: %w", s.ep.Switch, callError(err))
	}
	var lacp *gnmi.GetResponse
	if s.ep.Aggregates != nil {
		lacp, err = s.client.Get(ctx, &gnmi.GetRequest{Path: []*gnmi.Path{lacpPath()}, Type: gnmi.GetRequest_CONFIG, Encoding: gnmi.Encoding_JSON_IETF})
		if err != nil && status.Code(err) != codes.NotFound {
			return tree{}, fmt.Errorf("switch %s: gNMI Get /lacp: %w", s.ep.Switch, callError(err))
		}
	}
	got := map[string][]byte{}
	for _, r := range []*gnmi.GetResponse{resp, lacp} {
		for _, n := range r.GetNotification() {
			for _, u := range n.GetUpdate() {
				p := append(append([]*gnmi.PathElem{}, n.GetPrefix().GetElem()...), u.GetPath().GetElem()...)
				got[last(p)] = u.GetVal().GetJsonIetfVal()
			}
		}
	}
	t, err := parseTree(got["interfaces"], got["vlans"], got["lacp"])
	if err != nil {
		return tree{}, fmt.Errorf("switch %s: reading the gNMI answer: %w", s.ep.Switch, err)
	}
	return t, nil
}

func last(p []*gnmi.PathElem) string {
	if len(p) == 0 {
		return ""
	}
	return p[len(p)-1].GetName()
}

// Apply reads the ports, bonds and access lists the batch names (refusing the batch if a port
// or a bond's member is missing), drops what the switch already shows and sends the rest as one
// Set: VLANs and lists removed and lists unbound (delete), ports' switched-vlan config and lists'
// acl-sets replaced, VLANs added, lists bound and ports' config/enabled set (update: false for
// portStatus down, true otherwise and for a reset), bonds as lacp.go says; the switch applies a
// Set all or nothing.
func (s *Session) Apply(ctx context.Context, batch fabric.Batch) error {
	if len(batch) == 0 {
		return nil
	}
	var names, lags, acls []string
	add := func(list *[]string, n string) {
		if !slices.Contains(*list, n) {
			*list = append(*list, n)
		}
	}
	for _, c := range batch {
		switch c.Op {
		case fabric.OpAccessPort, fabric.OpTrunkPort, fabric.OpResetPort:
			add(&names, c.Port.Name)
		case fabric.OpEnsureLAG, fabric.OpRemoveLAG:
			add(&lags, c.LAG.Name)
			for _, m := range c.LAG.Members {
				add(&names, m)
			}
		case fabric.OpEnsureVLAN, fabric.OpRemoveVLAN:
		case fabric.OpEnsureACL, fabric.OpRemoveACL:
			add(&acls, c.ACL.Name)
		default:
			return fmt.Errorf("switch %s: change %s: %w (networkOS %s has no %s yet)", s.ep.Switch, c, fabric.ErrUnsupported, NetworkOS, c.Op)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	t, err := s.get(ctx)
	if err != nil {
		return err
	}
	have, err := t.state(s.ep, slices.Concat(names, lags))
	if err != nil {
		return fmt.Errorf("switch %s: reading the gNMI answer: %w", s.ep.Switch, err)
	}
	if have.ACLs, err = s.readACLs(ctx, acls); err != nil {
		return err
	}
	var missing []string
	for _, n := range names {
		if _, ok := have.Ports[n]; !ok {
			missing = append(missing, strconv.Quote(n))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("switch %s: no interface %s on the switch; nothing was changed", s.ep.Switch, strings.Join(missing, ", "))
	}
	b := &setBuilder{req: &gnmi.SetRequest{}, taken: map[string]string{}, joining: map[string]bool{}}
	for _, c := range batch {
		if c.Op == fabric.OpEnsureLAG && !fabric.InPlace(c, have) {
			for _, m := range c.LAG.Members {
				b.joining[m] = true
			}
		}
	}
	for i, c := range batch {
		if fabric.InPlace(c, have) {
			continue
		}
		var err error
		switch c.Op {
		case fabric.OpEnsureLAG, fabric.OpRemoveLAG:
			err = b.lag(s.ep, t, have, i, c)
		case fabric.OpEnsureACL, fabric.OpRemoveACL:
			err = addACLChange(b.req, have, i, c)
		default:
			err = b.change(i, c)
		}
		if err != nil {
			return fmt.Errorf("switch %s: %w", s.ep.Switch, err)
		}
	}
	req := b.req
	if len(req.Delete)+len(req.Replace)+len(req.Update) == 0 {
		return nil
	}
	s.sets++
	if _, err := s.client.Set(ctx, req); err != nil {
		return fmt.Errorf("switch %s: gNMI Set of %d change(s) refused, nothing changed: %w", s.ep.Switch, len(req.Delete)+len(req.Replace)+len(req.Update), callError(err))
	}
	return nil
}

// setBuilder collects a batch's Set, and the aggregates its bonds take (by bond) and the ports
// it puts in bonds.
type setBuilder struct {
	req     *gnmi.SetRequest
	taken   map[string]string
	joining map[string]bool
}

// jsonVal is a JSON_IETF value.
func jsonVal(v any) *gnmi.TypedValue {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings, numbers and bools always marshal
	}
	return &gnmi.TypedValue{Value: &gnmi.TypedValue_JsonIetfVal{JsonIetfVal: b}}
}

// change adds one VLAN or port change to the Set.
func (b *setBuilder) change(i int, c fabric.Change) error {
	req := b.req
	p := c.Port
	switch c.Op {
	case fabric.OpAccessPort, fabric.OpTrunkPort, fabric.OpResetPort:
		// The port's state rides with its VLANs: merged into its config (name and type stay),
		// up for a reset.
		enabled := c.Op == fabric.OpResetPort || !p.Down
		req.Update = append(req.Update, &gnmi.Update{Path: interfaceConfigPath(p.Name), Val: jsonVal(map[string]any{"enabled": enabled})})
	}
	switch c.Op {
	case fabric.OpEnsureVLAN:
		cfg := vlanPath(c.VLAN.ID)
		cfg.Elem = append(cfg.Elem, &gnmi.PathElem{Name: "config"})
		name := c.VLAN.Name
		if name == "" {
			name = fmt.Sprintf("vlan%d", c.VLAN.ID)
		}
		req.Update = append(req.Update, &gnmi.Update{Path: cfg, Val: jsonVal(map[string]any{"vlan-id": c.VLAN.ID, "name": name})})
	case fabric.OpRemoveVLAN:
		req.Delete = append(req.Delete, vlanPath(c.VLAN.ID))
	case fabric.OpAccessPort, fabric.OpTrunkPort:
		req.Replace = append(req.Replace, &gnmi.Update{Path: switchedVLANPath(p.Name), Val: jsonVal(switchedConfig(p))})
	case fabric.OpResetPort:
		if p.VLAN < 1 {
			return fmt.Errorf("change %d (%s): networkOS %s puts an idle port in an access VLAN; set the NetworkDevice's idleVLAN", i, c, NetworkOS)
		}
		req.Replace = append(req.Replace, &gnmi.Update{Path: switchedVLANPath(p.Name), Val: jsonVal(map[string]any{"interface-mode": "ACCESS", "access-vlan": p.VLAN})})
	}
	return nil
}

// readACLs gets /acl and reads the named lists from it. A switch with nothing under /acl may
// answer NotFound: no lists.
func (s *Session) readACLs(ctx context.Context, names []string) (map[string]fabric.ACL, error) {
	resp, err := s.client.Get(ctx, &gnmi.GetRequest{Path: []*gnmi.Path{aclPath()}, Type: gnmi.GetRequest_CONFIG, Encoding: gnmi.Encoding_JSON_IETF})
	if status.Code(err) == codes.NotFound {
		return map[string]fabric.ACL{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("switch %s: gNMI Get /acl: %w", s.ep.Switch, callError(err))
	}
	var raw []byte
	for _, n := range resp.GetNotification() {
		for _, u := range n.GetUpdate() {
			raw = u.GetVal().GetJsonIetfVal()
		}
	}
	acls, err := parseACLs(raw, names)
	if err != nil {
		return nil, fmt.Errorf("switch %s: reading the gNMI answer: %w", s.ep.Switch, err)
	}
	return acls, nil
}
