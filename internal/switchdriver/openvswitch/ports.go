package openvswitch

import (
	"fmt"
	"slices"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Open vSwitch's vlan_mode values (vswitch.ovsschema, Port table).
const (
	vlanModeAccess         = "access"
	vlanModeTrunk          = "trunk"
	vlanModeNativeUntagged = "native-untagged"
	vlanModeNativeTagged   = "native-tagged"
)

// vlanConfig is the part of a Port row a change sets: tag, trunks, vlan_mode (nil: empty).
type vlanConfig struct {
	Tag      *int
	Trunks   []int
	VLANMode *string
}

func (c vlanConfig) equal(o vlanConfig) bool {
	return eqPtr(c.Tag, o.Tag) && eqPtr(c.VLANMode, o.VLANMode) && slices.Equal(sorted(c.Trunks), sorted(o.Trunks))
}

// desired is the Port row configuration a port change asks for.
//   - access: tag=N, vlan_mode=access, no trunks;
//   - trunk: trunks=[...], vlan_mode=trunk; with a native VLAN tag=N, vlan_mode=native-untagged;
//   - reset: tag=idle VLAN, trunks and vlan_mode cleared; all three cleared when the idle VLAN is 0.
func desired(c fabric.Change) vlanConfig {
	p := c.Port
	switch c.Op {
	case fabric.OpAccessPort:
		return vlanConfig{Tag: ptr(p.VLAN), VLANMode: ptr(vlanModeAccess)}
	case fabric.OpTrunkPort:
		if p.VLAN > 0 {
			return vlanConfig{Tag: ptr(p.VLAN), Trunks: sorted(p.Trunk), VLANMode: ptr(vlanModeNativeUntagged)}
		}
		return vlanConfig{Trunks: sorted(p.Trunk), VLANMode: ptr(vlanModeTrunk)}
	case fabric.OpResetPort:
		if p.VLAN > 0 {
			return vlanConfig{Tag: ptr(p.VLAN)}
		}
	}
	return vlanConfig{}
}

// observed reads a Port row as the driver contract describes a port. A row with a tag and no
// vlan_mode is an access port (Open vSwitch's default for a tagged port); a row with neither
// tag nor trunks carries every VLAN and reads as a port of no mode.
func observed(r portRow) fabric.Port {
	mode, tag := "", 0
	if r.VLANMode != nil {
		mode = *r.VLANMode
	}
	if r.Tag != nil {
		tag = *r.Tag
	}
	return PortFromColumns(r.Name, tag, r.Trunks, mode)
}

// PortFromColumns reads a Port row's tag (0: empty), trunks and vlan_mode ("": empty) as the
// driver contract describes a port. Drivers that read Port rows another way (ovs-vsctl over
// SSH) share it, so both read a switch alike.
func PortFromColumns(name string, tag int, trunks []int, mode string) fabric.Port {
	p := fabric.Port{Name: name}
	switch {
	case mode == vlanModeAccess || (mode == "" && tag > 0):
		p.Mode, p.VLAN = fabric.ModeAccess, tag
	case mode == vlanModeTrunk || (mode == "" && len(trunks) > 0):
		p.Mode, p.Trunk = fabric.ModeTrunk, sorted(trunks)
	case mode == vlanModeNativeUntagged || mode == vlanModeNativeTagged:
		p.Mode, p.VLAN, p.Trunk = fabric.ModeTrunk, tag, sorted(trunks)
	}
	return p
}

// VLANsCarried lists, ascending, the VLANs the ports carry: Open vSwitch has no VLAN table.
func VLANsCarried(ports []fabric.Port) []fabric.VLAN {
	seen := map[int]bool{}
	for _, p := range ports {
		if p.VLAN > 0 {
			seen[p.VLAN] = true
		}
		for _, v := range p.Trunk {
			seen[v] = true
		}
	}
	ids := make([]int, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]fabric.VLAN, 0, len(ids))
	for _, id := range ids {
		out = append(out, fabric.VLAN{ID: id})
	}
	return out
}

// check refuses a change this driver cannot apply or whose values are out of range, naming it.
func check(i int, c fabric.Change) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("change %d (%s): %s", i, c, fmt.Sprintf(format, a...))
	}
	switch c.Op {
	case fabric.OpEnsureVLAN, fabric.OpRemoveVLAN:
		if c.VLAN.ID < 1 || c.VLAN.ID > 4094 {
			return bad("VLAN %d is outside 1-4094", c.VLAN.ID)
		}
	case fabric.OpAccessPort, fabric.OpTrunkPort, fabric.OpResetPort:
		if c.Port.Name == "" {
			return bad("the port has no name")
		}
		if c.Op == fabric.OpAccessPort && (c.Port.VLAN < 1 || c.Port.VLAN > 4094) {
			return bad("access VLAN %d is outside 1-4094", c.Port.VLAN)
		}
		if c.Port.VLAN < 0 || c.Port.VLAN > 4094 {
			return bad("VLAN %d is outside 0-4094", c.Port.VLAN)
		}
		if c.Op == fabric.OpTrunkPort && len(c.Port.Trunk) == 0 {
			return bad("a trunk needs at least one VLAN (an empty trunks column carries every VLAN)")
		}
		for _, v := range c.Port.Trunk {
			if v < 1 || v > 4094 {
				return bad("trunk VLAN %d is outside 1-4094", v)
			}
		}
	case fabric.OpEnsureLAG, fabric.OpRemoveLAG:
		if c.LAG.MLAG != nil {
			return fmt.Errorf("change %d (%s): %w (Open vSwitch has no multi-chassis LAG: bond cards on one switch)", i, c, fabric.ErrUnsupported)
		}
		if c.LAG.Name == "" {
			return bad("the bond has no name")
		}
		if c.Op == fabric.OpEnsureLAG && len(c.LAG.Members) < 2 {
			return bad("a bond needs at least two members")
		}
		if c.LAG.Port.VLAN < 0 || c.LAG.Port.VLAN > 4094 {
			return bad("VLAN %d is outside 0-4094", c.LAG.Port.VLAN)
		}
		for _, v := range c.LAG.Port.Trunk {
			if v < 1 || v > 4094 {
				return bad("trunk VLAN %d is outside 1-4094", v)
			}
		}
	case fabric.OpEnsureACL, fabric.OpRemoveACL:
		if err := checkACL(c); err != nil {
			return bad("%v", err)
		}
	default:
		return bad("unknown operation %q", c.Op)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func sorted(v []int) []int {
	if len(v) == 0 {
		return nil
	}
	out := slices.Clone(v)
	slices.Sort(out)
	return slices.Compact(out)
}
