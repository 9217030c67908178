package networkdevice

import (
	"fmt"
	"maps"
	"slices"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// aclWant is the access list of a card's network (nil: it has none).
func aclWant(a *netv1.NICAssignment, network string) *fabric.ACLWant {
	for _, acl := range a.ACLs {
		if acl.Network != network {
			continue
		}
		w := &fabric.ACLWant{Name: acl.Name, Cookie: fabric.ACLCookieOfName(acl.Name), DefaultDeny: acl.Default == netv1.ACLDeny}
		for _, r := range acl.Rules {
			w.Rules = append(w.Rules, fabric.ACLRule{Direction: string(r.Direction), Protocol: r.Protocol, Action: string(r.Action), Remote: r.Remote})
		}
		return w
	}
	return nil
}

// canApply refuses, before anything is sent, what the switch's driver cannot do: the
// clusternetwork controller offers no such host, so this only guards a switch whose networkOS
// changed under its hosts.
func canApply(drv fabric.Driver, sw netv1.Switch, want fabric.State) error {
	if s, ok := drv.(fabric.ACLSetter); len(want.ACLs) > 0 && (!ok || !s.SetsACLs()) {
		return fmt.Errorf("switch %s (networkOS %s) binds no access list, but %d are wanted: %w", sw.Name, sw.NetworkOS, len(want.ACLs), fabric.ErrUnsupported)
	}
	down := slices.ContainsFunc(slices.Collect(maps.Values(want.Ports)), func(p fabric.Port) bool { return p.Down }) ||
		slices.ContainsFunc(slices.Collect(maps.Values(want.LAGs)), func(l fabric.LAG) bool { return l.Port.Down })
	if s, ok := drv.(fabric.PortStateSetter); down && (!ok || !s.SetsPortState()) {
		return fmt.Errorf("switch %s (networkOS %s) cannot shut a port, but portStatus down is wanted: %w", sw.Name, sw.NetworkOS, fabric.ErrUnsupported)
	}
	return nil
}
