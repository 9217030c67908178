package openvswitch

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/metalwire/metalwire/internal/switchdriver/openflow"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// Access lists on Open vSwitch are OpenFlow flows of table 0, each list's flows under its own
// cookie (fabric.ACLCookie), written and read through the bridge's OpenFlow endpoint: OVSDB has
// no flow table. Flows of any other cookie are never read as a list nor deleted.

// aclName matches the names fabric.ACLName gives lists: a Read asked about one reads flows.
var aclName = regexp.MustCompile(`^acl[0-9a-f]{10}$`)

// OpenFlowRemote is the OpenFlow endpoint of ep's bridge: ep.OpenFlowRemote when set, else the
// bridge's management socket beside a unix OVSDB socket (ovsdbRemote), as Open vSwitch places
// them (/var/run/openvswitch/db.sock and /var/run/openvswitch/BR.mgmt). The error says what to
// set when neither gives one; it is returned only when a list or a port's state is to be read
// or changed.
func OpenFlowRemote(ep fabric.Endpoint, ovsdbRemote string) (string, error) {
	if ep.OpenFlowRemote != "" {
		return ep.OpenFlowRemote, nil
	}
	if ep.Bridge == "" {
		return "", fmt.Errorf("switch %s: access lists and port state are set on one bridge: set the switch's bridge in the NetworkDevice", ep.Switch)
	}
	if path, ok := strings.CutPrefix(ovsdbRemote, "unix:"); ok {
		return "unix:" + filepath.Join(filepath.Dir(path), ep.Bridge+".mgmt"), nil
	}
	return "", fmt.Errorf("switch %s: access lists and port state are written through the bridge's OpenFlow endpoint, and the OVSDB remote %s is not a unix socket beside it: set spec.switches[].openFlowRemote (tcp:HOST:PORT after `ovs-vsctl set-controller %s ptcp:PORT`, or unix:PATH of %s.mgmt)",
		ep.Switch, ovsdbRemote, ep.Bridge, ep.Bridge)
}

// ofConn is an OpenFlow connection as conns keeps it between sessions.
type ofConn struct{ *openflow.Conn }

func (c ofConn) alive() bool { return c.Usable() }
func (c ofConn) Close()      { _ = c.Conn.Close() }

// conn is the session's OpenFlow connection: the one kept from the last session to the bridge
// (ofConns), else dialled, on first use.
func (s *Session) conn(ctx context.Context) (*openflow.Conn, error) {
	if s.of != nil {
		return s.of, nil
	}
	if s.openFlow == "" {
		return nil, s.noOpenFlow
	}
	if s.ofConns != nil {
		if c, ok := s.ofConns.take(s.openFlow); ok {
			s.of, s.ofUnproven = c.Conn, true
			return s.of, nil
		}
	}
	c, err := openflow.Dial(ctx, s.openFlow)
	if err != nil {
		return nil, fmt.Errorf("switch %s: %w", s.switchName, err)
	}
	s.of = c
	return c, nil
}

// ofRead runs read over the session's OpenFlow connection: a call that may run twice, a read or
// a port-mod (which sets a state, read first). A kept connection the switch closed while it was
// idle (ovs-vswitchd restarted, or dropped a connection that did not answer its probe) fails its
// first call: then a new one is dialled and read runs again. Every session's first OpenFlow
// call is such a call, so a bundle is never sent over a connection that has not answered in
// this session.
func (s *Session) ofRead(ctx context.Context, read func(*openflow.Conn) error) error {
	c, err := s.conn(ctx)
	if err != nil {
		return err
	}
	err = read(c)
	if err != nil && s.ofUnproven && ctx.Err() == nil {
		_ = s.of.Close()
		s.of, s.ofUnproven = nil, false
		if c, err = s.conn(ctx); err != nil {
			return err
		}
		err = read(c)
	}
	if err == nil {
		s.ofUnproven = false
	}
	return err
}

// aclNamesAsked are the names of lists among names (ports of those names excepted).
func aclNamesAsked(names []string, ports map[string]portRow) []string {
	var out []string
	for _, n := range names {
		if _, port := ports[n]; !port && aclName.MatchString(n) {
			out = append(out, n)
		}
	}
	return out
}

// readACLs reads metalwire's flows once and returns the asked lists that have flows, each as
// its cookie and flows (as openflow.Flows reads them back: what fabric.SameACL compares with the
// flows of the wanted list).
func (s *Session) readACLs(ctx context.Context, names []string) (map[string]fabric.ACL, error) {
	var flows []fabric.Flow
	if err := s.ofRead(ctx, func(c *openflow.Conn) (err error) {
		flows, err = c.Flows(ctx, fabric.CookiePrefix, fabric.CookiePrefixMask)
		return err
	}); err != nil {
		return nil, fmt.Errorf("switch %s: %w", s.switchName, err)
	}
	s.flows = flows
	return fabric.ACLsOfFlows(flows, names), nil
}

// checkACL refuses a list change that cannot be written before anything is sent: its cookie must
// be metalwire's and match its name, and an ensured list's rules must make flows.
func checkACL(c fabric.Change) error {
	a := c.ACL
	switch {
	case a.Cookie&fabric.CookiePrefixMask != fabric.CookiePrefix:
		return fmt.Errorf("cookie %#x is not metalwire's (use fabric.ACLCookie); flows of other cookies are never touched", a.Cookie)
	case a.Name != fabric.ACLNameOfCookie(a.Cookie):
		return fmt.Errorf("list name %q is not the name of cookie %#x (%s)", a.Name, a.Cookie, fabric.ACLNameOfCookie(a.Cookie))
	case c.Op == fabric.OpRemoveACL:
		return nil
	case a.Port == "":
		return fmt.Errorf("the list is bound to no port")
	}
	flows, err := a.FlowsOf()
	if err != nil {
		return err
	}
	for _, f := range flows {
		if f.Cookie != a.Cookie {
			return fmt.Errorf("flow %s carries another cookie than the list's %#x", f.OfctlSpec(), a.Cookie)
		}
	}
	return nil
}

// aclChanges are the batch's list changes, the last one of each list (a later change wins).
func aclChanges(batch fabric.Batch) []fabric.Change {
	var out []fabric.Change
	for _, c := range batch {
		if c.Op != fabric.OpEnsureACL && c.Op != fabric.OpRemoveACL {
			continue
		}
		out = slices.DeleteFunc(out, func(o fabric.Change) bool { return o.ACL.Cookie == c.ACL.Cookie })
		out = append(out, c)
	}
	return out
}

// applyACLs makes the lists of changes what they ask in one atomic bundle: a removed list's
// cookie deleted, an ensured list whose flows differ replaced whole (its cookie deleted and its
// flows added). Lists already as asked send nothing.
func (s *Session) applyACLs(ctx context.Context, changes []fabric.Change) error {
	current := s.flows
	if current == nil {
		if err := s.ofRead(ctx, func(c *openflow.Conn) (err error) {
			current, err = c.Flows(ctx, fabric.CookiePrefix, fabric.CookiePrefixMask)
			return err
		}); err != nil {
			return fmt.Errorf("switch %s: %w", s.switchName, err)
		}
	}
	// The connection has answered in this session (this read, or Read's).
	c, err := s.conn(ctx)
	if err != nil {
		return err
	}
	s.flows = nil // what follows changes them, or a failure leaves them unknown
	have := map[uint64][]fabric.Flow{}
	for _, f := range current {
		have[f.Cookie] = append(have[f.Cookie], f)
	}
	var add []fabric.Flow
	var remove []uint64
	for _, ch := range changes {
		var want []fabric.Flow
		if ch.Op == fabric.OpEnsureACL {
			if want, err = ch.ACL.FlowsOf(); err != nil {
				return fmt.Errorf("switch %s: %s: %w", s.switchName, ch, err)
			}
		}
		a, r := openflow.Plan(want, have[ch.ACL.Cookie])
		add, remove = append(add, a...), append(remove, r...)
	}
	if len(add) == 0 && len(remove) == 0 {
		return nil
	}
	if err := c.Apply(ctx, add, remove); err != nil {
		return fmt.Errorf("switch %s: access lists (nothing of them was changed): %w", s.switchName, err)
	}
	s.bundles++
	return nil
}
