package fabric

import (
	"fmt"
	"strconv"
	"strings"
)

// MinVLAN and MaxVLAN bound the VLAN ids a switch accepts.
const (
	MinVLAN = 1
	MaxVLAN = 4094
)

// VLANRange is an inclusive range of VLAN ids.
type VLANRange struct{ First, Last int }

// ParseVLANRange reads "first-last" (a ClusterNetwork's spec.vlanRange).
func ParseVLANRange(s string) (VLANRange, error) {
	a, b, ok := strings.Cut(s, "-")
	first, err1 := strconv.Atoi(strings.TrimSpace(a))
	last, err2 := strconv.Atoi(strings.TrimSpace(b))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return VLANRange{}, fmt.Errorf("vlanRange %q must read first-last, e.g. 1000-1999", s)
	case first < MinVLAN || last > MaxVLAN:
		return VLANRange{}, fmt.Errorf("vlanRange %q must lie within %d-%d", s, MinVLAN, MaxVLAN)
	case first > last:
		return VLANRange{}, fmt.Errorf("vlanRange %q starts after it ends; write the lower id first", s)
	}
	return VLANRange{First: first, Last: last}, nil
}

// Contains says whether id is in the range.
func (r VLANRange) Contains(id int) bool { return id >= r.First && id <= r.Last }

// Size is the number of ids in the range.
func (r VLANRange) Size() int { return r.Last - r.First + 1 }

// NextFree returns the lowest id of the range not in taken, or 0 when every id is taken.
func (r VLANRange) NextFree(taken map[int]bool) int {
	for id := r.First; id <= r.Last; id++ {
		if !taken[id] {
			return id
		}
	}
	return 0
}

// VLANRequest is one network's need for a VLAN id: Pin is the id it must have, 0 for any.
type VLANRequest struct {
	Network string
	Pin     int
}

// VLANPlan says what to do with a ClusterNetwork's VLAN ids.
type VLANPlan struct {
	// Keep are the networks whose held id stays, network -> id.
	Keep map[string]int
	// Release are held ids no network wants any more (network removed, pin changed, range
	// narrowed).
	Release []int
	// Need are the networks that need an id, in spec order.
	Need []VLANRequest
}

// PlanVLANs compares what a ClusterNetwork's networks ask for with the ids it holds
// (held: id -> network). A held id is kept when its network still exists, its pin (if any) is that
// id, and it lies in the range; everything else held is released.
func PlanVLANs(r VLANRange, wants []VLANRequest, held map[int]string) VLANPlan {
	plan := VLANPlan{Keep: map[string]int{}}
	heldBy := map[string]int{}
	for id, network := range held {
		if prev, dup := heldBy[network]; dup {
			// Two ids for one network (a crash between create and release): keep the lower.
			if id > prev {
				plan.Release = append(plan.Release, id)
				continue
			}
			plan.Release = append(plan.Release, prev)
		}
		heldBy[network] = id
	}
	wanted := map[string]bool{}
	for _, w := range wants {
		wanted[w.Network] = true
		id, ok := heldBy[w.Network]
		if ok && r.Contains(id) && (w.Pin == 0 || w.Pin == id) {
			plan.Keep[w.Network] = id
			continue
		}
		plan.Need = append(plan.Need, w)
	}
	for network, id := range heldBy {
		if _, kept := plan.Keep[network]; !kept {
			plan.Release = append(plan.Release, id)
		}
	}
	sortInts(plan.Release)
	return plan
}
