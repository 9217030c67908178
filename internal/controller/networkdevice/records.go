package networkdevice

import (
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
	rec := fabric.Record{}
	for _, p := range s.Ports {
		for _, acl := range p.ACLs {
			rec.ACLs = append(rec.ACLs, acl.Name)
		}
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
	for _, name := range rec.ACLs {
		acl := want.ACLs[name]
		i := slices.IndexFunc(out, func(p netv1.ConfiguredPort) bool { return p.Name == acl.Port })
		if i < 0 {
			continue // a list's port is always wanted with it (fabric.Desired)
		}
		ca := netv1.ConfiguredACL{Name: name, VLAN: vlan32(acl.VLAN), Rules: int32(len(acl.Rules))} //nolint:gosec // at most 32 rules (admission)
		if acl.DefaultDeny {
			ca.Default = netv1.ACLDeny
		}
		out[i].ACLs = append(out[i].ACLs, ca)
	}
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
