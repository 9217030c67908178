package fabric

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseVLANList reads VLAN ids written as single ids ("100") and ranges ("100-200"), as
// baremetal-operator's HostNetworkAttachment allowedVLANs does, into ascending ids without
// duplicates.
func ParseVLANList(entries []string) ([]int, error) {
	var out []int
	for i, e := range entries {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(e), "-")
		first, err := vlanID(lo)
		if err != nil {
			return nil, fmt.Errorf("allowedVLANs[%d] %q: %w", i, e, err)
		}
		last := first
		if isRange {
			if last, err = vlanID(hi); err != nil {
				return nil, fmt.Errorf("allowedVLANs[%d] %q: %w", i, e, err)
			}
			if last < first {
				return nil, fmt.Errorf("allowedVLANs[%d] %q: the range ends before it starts; write %d-%d", i, e, last, first)
			}
		}
		for v := first; v <= last; v++ {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func vlanID(s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > 4094 {
		return 0, fmt.Errorf("%q is not a VLAN id (1-4094)", s)
	}
	return v, nil
}

// AttachmentWants are the wants of one switch port configured as an attachment says: access in
// the native VLAN, or (trunk, hybrid) a trunk of the allowed VLANs with the native one untagged;
// mtu is the port's MTU (0: the switch's own).
func AttachmentWants(sw, port string, trunk bool, native int, allowed []int, mtu int) []PortWant {
	if !trunk {
		return []PortWant{{Switch: sw, Port: port, Mode: ModeAccess, VLAN: native, MTU: mtu}}
	}
	out := []PortWant{{Switch: sw, Port: port, Mode: ModeTrunk, Native: native, MTU: mtu}}
	for _, v := range allowed {
		out = append(out, PortWant{Switch: sw, Port: port, Mode: ModeTrunk, VLAN: v, Native: native, MTU: mtu})
	}
	return out
}
