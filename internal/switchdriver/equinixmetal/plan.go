package equinixmetal

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// NetworkType is a device's composite network type, as the Metal API names it.
type NetworkType string

// The network types of a device with the usual two ports in bond0.
const (
	// Layer3 is the provisioning default: eth0 and eth1 in bond0, no VLANs.
	Layer3 NetworkType = "layer3"
	// Hybrid takes eth1 out of the bond and carries VLANs on it; eth0 stays layer 3 in bond0.
	Hybrid NetworkType = "hybrid"
	// HybridBonded keeps bond0 layer 3 and carries VLANs tagged on it as well.
	HybridBonded NetworkType = "hybrid-bonded"
	// Layer2Bonded makes bond0 layer 2: only VLANs, one of them possibly native.
	Layer2Bonded NetworkType = "layer2-bonded"
	// Layer2Individual breaks the bond: eth0 and eth1 are layer 2 ports of their own.
	Layer2Individual NetworkType = "layer2-individual"
)

// The port names of a device this driver manages.
const (
	Bond0 = "bond0"
	Eth0  = "eth0"
	Eth1  = "eth1"
)

// carriers are the ports that carry VLANs in each network type.
var carriers = map[NetworkType][]string{
	Layer3:           nil,
	Hybrid:           {Eth1},
	HybridBonded:     {Bond0},
	Layer2Bonded:     {Bond0},
	Layer2Individual: {Eth0, Eth1},
}

// PortVLANs is what one device port carries: VLAN ids (VXLANs), ascending, and the native one
// among them (0: none).
type PortVLANs struct {
	VLANs  []int
	Native int
}

func (p PortVLANs) empty() bool { return len(p.VLANs) == 0 }

// DeviceState is a device's network type and what each of its ports carries.
type DeviceState struct {
	Type  NetworkType
	Ports map[string]PortVLANs
}

// SplitPort splits a port name of this driver, "<device id>/<port>", into its parts.
func SplitPort(name string) (device, port string, err error) {
	i := strings.LastIndex(name, "/")
	if i <= 0 || i == len(name)-1 {
		return "", "", fmt.Errorf("port %q: an equinix-metal port is named <device id>/<port>, e.g. 5a1c.../eth1; fix the NIC's spec.nics[].networkDevice.switch.port", name)
	}
	device, port = name[:i], name[i+1:]
	if port != Bond0 && port != Eth0 && port != Eth1 {
		return "", "", fmt.Errorf("port %q: %q is not a port metalwire manages on an Equinix Metal device; use bond0, eth0 or eth1", name, port)
	}
	return device, port, nil
}

// vlansOf is what a fabric port asks of a device port: an access port is its VLAN, native; a
// trunk is its tagged VLANs and its native VLAN, if any.
func vlansOf(p fabric.Port) PortVLANs {
	if p.Mode == fabric.ModeAccess {
		return PortVLANs{VLANs: []int{p.VLAN}, Native: p.VLAN}
	}
	out := PortVLANs{VLANs: slices.Clone(p.Trunk), Native: p.VLAN}
	if p.VLAN != 0 && !slices.Contains(out.VLANs, p.VLAN) {
		out.VLANs = append(out.VLANs, p.VLAN)
	}
	sort.Ints(out.VLANs)
	return out
}

// fabricPort is how Read reports a device port: no VLAN is the idle state (access idle); one
// native VLAN alone is an access port; anything else a trunk of the tagged VLANs.
func fabricPort(name string, p PortVLANs, idle int) fabric.Port {
	switch {
	case p.empty():
		return fabric.Port{Name: name, Mode: fabric.ModeAccess, VLAN: idle}
	case len(p.VLANs) == 1 && p.Native == p.VLANs[0]:
		return fabric.Port{Name: name, Mode: fabric.ModeAccess, VLAN: p.Native}
	}
	out := fabric.Port{Name: name, Mode: fabric.ModeTrunk, VLAN: p.Native}
	for _, v := range p.VLANs {
		if v != p.Native {
			out.Trunk = append(out.Trunk, v)
		}
	}
	return out
}

// TargetType is the network type a device takes so that its ports carry want (ports absent or
// empty carry nothing): VLANs on bond0 keep it bonded (hybrid-bonded while they are all tagged,
// layer2-bonded with a native VLAN), on eth1 alone take eth1 out of the bond (hybrid), on eth0
// and eth1 break the bond (layer2-individual). Other combinations are refused, naming the ports.
func TargetType(device string, want map[string]PortVLANs) (NetworkType, error) {
	bond, e0, e1 := !want[Bond0].empty(), !want[Eth0].empty(), !want[Eth1].empty()
	switch {
	case !bond && !e0 && !e1:
		return Layer3, nil
	case bond && !e0 && !e1:
		if want[Bond0].Native != 0 {
			return Layer2Bonded, nil
		}
		return HybridBonded, nil
	case !bond && e0 && e1:
		return Layer2Individual, nil
	case !bond && !e0 && e1:
		return Hybrid, nil
	case !bond && e0 && !e1:
		return "", fmt.Errorf("device %s: eth0 cannot carry VLANs alone on Equinix Metal (only eth1 leaves the bond in hybrid mode); put the network on %s/eth1, on %s/bond0, or on both eth0 and eth1", device, device, device)
	}
	return "", fmt.Errorf("device %s: VLANs on bond0 and on eth0/eth1 at once is no Equinix Metal network type; cable the host's networks either to bond0 or to its eth ports", device)
}

// StepKind names one Metal API call of a plan.
type StepKind string

// The calls a plan is made of, each a Metal API endpoint of the port.
const (
	StepBatch     StepKind = "vlan-assignments/batches"
	StepBond      StepKind = "bond"
	StepDisbond   StepKind = "disbond"
	StepConvertL2 StepKind = "convert/layer-2"
	StepConvertL3 StepKind = "convert/layer-3"
)

// Assignment is one VLAN of a batch.
type Assignment struct {
	VLAN     int
	Assigned bool
	Native   bool
}

// Step is one call: on which port, bulk (both ports) for bond and disbond, and the VLANs of a
// batch.
type Step struct {
	Kind        StepKind
	Port        string
	Bulk        bool
	Assignments []Assignment
}

func (s Step) String() string {
	out := fmt.Sprintf("%s %s", s.Port, s.Kind)
	if s.Bulk {
		out += " (both ports)"
	}
	for _, a := range s.Assignments {
		state := "unassigned"
		if a.Assigned {
			state = "assigned"
		}
		out += fmt.Sprintf(" %d=%s", a.VLAN, state)
		if a.Native {
			out += "(native)"
		}
	}
	return out
}

// Plan lists the calls that take a device from have to want, in the order the API requires:
// within one network type only the VLAN batches that differ. A change of type first unassigns
// every VLAN (no port is bonded, and bond0 is not converted to layer 3, while a port carries
// VLANs), goes back to layer3 (eth1 bonded again; bond0 bonded with both ports, then converted
// to layer 3), then takes the new type (eth1 disbonded; bond0 converted to layer 2, then
// disbonded with both ports) and assigns the new VLANs.
func Plan(have DeviceState, want DeviceState) []Step {
	var steps []Step
	if have.Type == want.Type {
		for _, port := range []string{Bond0, Eth0, Eth1} {
			if a := assignments(have.Ports[port], want.Ports[port]); len(a) > 0 {
				steps = append(steps, Step{Kind: StepBatch, Port: port, Assignments: a})
			}
		}
		return steps
	}
	for _, port := range []string{Bond0, Eth0, Eth1} {
		if a := assignments(have.Ports[port], PortVLANs{}); len(a) > 0 {
			steps = append(steps, Step{Kind: StepBatch, Port: port, Assignments: a})
		}
	}
	switch have.Type {
	case Hybrid:
		steps = append(steps, Step{Kind: StepBond, Port: Eth1})
	case Layer2Bonded:
		steps = append(steps, Step{Kind: StepConvertL3, Port: Bond0})
	case Layer2Individual:
		steps = append(steps, Step{Kind: StepBond, Port: Bond0, Bulk: true}, Step{Kind: StepConvertL3, Port: Bond0})
	}
	switch want.Type {
	case Hybrid:
		steps = append(steps, Step{Kind: StepDisbond, Port: Eth1})
	case Layer2Bonded:
		steps = append(steps, Step{Kind: StepConvertL2, Port: Bond0})
	case Layer2Individual:
		steps = append(steps, Step{Kind: StepConvertL2, Port: Bond0}, Step{Kind: StepDisbond, Port: Bond0, Bulk: true})
	}
	for _, port := range carriers[want.Type] {
		if a := assignments(PortVLANs{}, want.Ports[port]); len(a) > 0 {
			steps = append(steps, Step{Kind: StepBatch, Port: port, Assignments: a})
		}
	}
	return steps
}

// assignments is the batch that takes one port from have to want: VLANs to unassign, then
// VLANs to assign or whose native flag changes.
func assignments(have, want PortVLANs) []Assignment {
	var out []Assignment
	for _, v := range have.VLANs {
		if !slices.Contains(want.VLANs, v) {
			out = append(out, Assignment{VLAN: v})
		}
	}
	for _, v := range want.VLANs {
		native := v == want.Native
		if slices.Contains(have.VLANs, v) && native == (v == have.Native) {
			continue
		}
		out = append(out, Assignment{VLAN: v, Assigned: true, Native: native})
	}
	return out
}
