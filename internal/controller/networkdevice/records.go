package networkdevice

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// The record of what the controller configured on a switch (status.switches[].ports) and the
// wants it is made from, in the API's terms and the driver's.

// lagWant is the bond a card's port is a member of on switch sw (nil: none).
func lagWant(nd *netv1.NetworkDevice, sw string, l *netv1.CardLAG) *fabric.LAGWant {
	if l == nil {
		return nil
	}
	w := &fabric.LAGWant{Name: l.Name, LACP: l.Mode != netv1.LAGStatic, FastRate: l.LACPRate == netv1.LACPFast}
	for _, p := range nd.Spec.MLAGPairs {
		if p.Name == l.MLAGPair && len(p.Switches) == 2 {
			w.MLAG = fabric.MLAGFor(&fabric.MLAGPair{Name: p.Name, Switches: [2]string{p.Switches[0], p.Switches[1]}, Domain: int(p.Domain)}, sw)
		}
	}
	return w
}

func recordOf(s netv1.SwitchStatus) fabric.Record {
	rec := fabric.Record{ACLs: slices.Sorted(maps.Keys(s.BoundACLs()))}
	for _, p := range s.Ports {
		if p.LAG != nil {
			rec.LAGs = append(rec.LAGs, p.Name)
			continue
		}
		rec.Ports = append(rec.Ports, p.Name)
	}
	for _, v := range s.VLANs {
		rec.VLANs = append(rec.VLANs, int(v))
	}
	return rec
}

// ConfiguredPorts is the record (status.switches[].ports) of a switch brought to want, every
// field at its default left out (ConfiguredPort's methods put it back): the record is
// rewritten whole on every pass that changes it. The fabric benchmark's probe writes it as the
// controller does.
func ConfiguredPorts(want fabric.State) []netv1.ConfiguredPort {
	rec := fabric.RecordOf(want)
	out := make([]netv1.ConfiguredPort, 0, len(rec.Ports))
	for _, name := range rec.Ports {
		out = append(out, configuredPort(want.Ports[name]))
	}
	for _, name := range rec.LAGs {
		l := want.LAGs[name]
		cp := configuredPort(l.Port)
		cp.LAG = &netv1.ConfiguredLAG{Members: l.Members, Mode: netv1.LAGStatic}
		if l.LACP {
			cp.LAG.Mode = "" // lacp
			if l.FastRate {
				cp.LAG.LACPRate = netv1.LACPFast
			}
		}
		out = append(out, cp)
	}
	slices.SortFunc(out, func(a, b netv1.ConfiguredPort) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ConfiguredACLs is the record (status.switches[].acls) of the access lists of a switch brought
// to want: each list once, by name, under what it holds. Every host's list of a network holds
// the same, so a thousand lists are a thousand names under one entry, where a port's entry
// with its list's name, rules and default took three times the bytes. In a stable order, so
// that a pass that changes nothing writes the same record.
func ConfiguredACLs(want fabric.State) []netv1.ConfiguredACLs {
	var out []netv1.ConfiguredACLs
	for _, name := range slices.Sorted(maps.Keys(want.ACLs)) {
		acl := want.ACLs[name]
		set := netv1.ConfiguredACLs{Rules: int32(len(acl.Rules)), VLAN: vlan32(acl.VLAN)} //nolint:gosec // at most 32 rules (admission)
		if acl.DefaultDeny {
			set.Default = netv1.ACLDeny
		}
		i := slices.IndexFunc(out, func(s netv1.ConfiguredACLs) bool {
			return s.Rules == set.Rules && s.Default == set.Default && s.VLAN == set.VLAN
		})
		if i < 0 {
			out, i = append(out, set), len(out)
		}
		out[i].Names = append(out[i].Names, name)
	}
	slices.SortFunc(out, func(a, b netv1.ConfiguredACLs) int {
		return cmp.Or(cmp.Compare(a.VLAN, b.VLAN), cmp.Compare(a.Rules, b.Rules), strings.Compare(string(a.Default), string(b.Default)))
	})
	return out
}

func configuredPort(p fabric.Port) netv1.ConfiguredPort {
	cp := netv1.ConfiguredPort{Name: p.Name, VLAN: vlan32(p.VLAN), MTU: int32(p.MTU), Down: p.Down} //nolint:gosec // MTUs are at most 9216
	if p.Mode != fabric.ModeAccess {
		cp.Mode = netv1.PortMode(p.Mode)
	}
	for _, v := range p.Trunk {
		cp.Trunk = append(cp.Trunk, vlan32(v))
	}
	return cp
}

// portsOf turns the record of configured ports into the driver's terms.
func portsOf(ports []netv1.ConfiguredPort) []fabric.Port {
	out := make([]fabric.Port, 0, len(ports))
	for _, p := range ports {
		fp := fabric.Port{Name: p.Name, Mode: fabric.PortMode(p.PortMode()), VLAN: int(p.VLAN), MTU: int(p.MTU), Down: p.Down}
		for _, v := range p.Trunk {
			fp.Trunk = append(fp.Trunk, int(v))
		}
		out = append(out, fp)
	}
	return out
}
