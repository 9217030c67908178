package vendorssh

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Junos bonds are aggregated Ethernet interfaces, aeN. metalwire knows its own by their
// description, "metalwire:<LAG name>", so a bond keeps its number; a new one takes ae<N>, N the
// port number of its lowest member (ge-0/0/5 and ge-0/0/7: ae5): a port is in one bond only, so
// two bonds never pick the same number. The switch's "chassis aggregated-devices ethernet
// device-count" must be above the highest port number bonded. MC-LAG is not rendered: an MLAG
// half is refused (ErrUnsupported naming Junos) before anything is sent.

// junosMaxAE is the highest ae number metalwire gives.
const junosMaxAE = 1023

// junosAE is the ae number a new bond takes: its lowest member's port number (the last number
// of ge-FPC/PIC/PORT).
func junosAE(members []string) (int, error) {
	best := -1
	for _, m := range members {
		nums := strings.FieldsFunc(m, func(r rune) bool { return r < '0' || r > '9' })
		n := -1
		if len(nums) == 3 {
			n, _ = strconv.Atoi(nums[2])
		}
		if n < 0 || n > junosMaxAE {
			return 0, fmt.Errorf("member %q is not a port TYPE-FPC/PIC/PORT with a port in 0-%d to number the ae interface after", m, junosMaxAE)
		}
		if best < 0 || n < best {
			best = n
		}
	}
	return best, nil
}

// renderJunosLAG writes one bond change as candidate statements (ES is "unit 0 family
// ethernet-switching"):
//
//	ensure-lag: delete interfaces aeN aggregated-ether-options (the bond's settings are written
//	            whole; the commit makes it one change; a filter bound to it stays) /
//	            set interfaces aeN description metalwire:NAME /
//	            set interfaces aeN aggregated-ether-options lacp active (static: none) /
//	            set interfaces aeN aggregated-ether-options lacp periodic fast (fast rate) /
//	            the bond's lines as a port's (its deletes, then access, or trunk with native-vlan-id; set
//	            interfaces aeN disable when its portStatus is down) /
//	            per member: delete interfaces M ES / delete interfaces M native-vlan-id /
//	            delete interfaces M disable / set interfaces M ether-options 802.3ad aeN; a member the bond no longer has:
//	            delete interfaces M ether-options 802.3ad and access in the idle VLAN
//	remove-lag: delete interfaces aeN / per member: delete interfaces M ether-options 802.3ad and
//	            access in the idle VLAN
//
// portLines writes a port's ES lines: access(port, vlan) or trunk(port, p).
func renderJunosLAG(ep fabric.Endpoint, have fabric.State, i int, c fabric.Change, portLines func(port string, p fabric.Port) []string) ([]string, error) {
	l := c.LAG
	cur, exists := have.LAGs[l.Name]
	leave := func(m string, vlan int) []string {
		return append([]string{"delete interfaces " + m + " ether-options 802.3ad"},
			portLines(m, fabric.Port{Name: m, Mode: fabric.ModeAccess, VLAN: vlan})...)
	}
	var lines []string
	if c.Op == fabric.OpRemoveLAG {
		if l.Port.VLAN < 1 {
			return nil, fmt.Errorf("change %d (%s): networkOS junos puts a bond's members back in an access VLAN; set the NetworkDevice's idleVLAN", i, c)
		}
		if exists {
			lines = append(lines, "delete interfaces "+cur.Port.Name)
		}
		for _, m := range slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(l.Members), cur.Members...)))) {
			lines = append(lines, leave(m, l.Port.VLAN)...)
		}
		return lines, nil
	}
	if l.MLAG != nil {
		return nil, unsupported("junos", i, c)
	}
	if len(l.Members) == 0 {
		return nil, fmt.Errorf("change %d (%s): a bond needs at least one member", i, c)
	}
	if l.Port.Mode != fabric.ModeTrunk && l.Port.VLAN < 1 {
		return nil, fmt.Errorf("change %d (%s): an access bond needs a VLAN", i, c)
	}
	ae := cur.Port.Name
	if !exists {
		n, err := junosAE(l.Members)
		if err != nil {
			return nil, fmt.Errorf("change %d (%s): %w", i, c, err)
		}
		ae = "ae" + strconv.Itoa(n)
	}
	lines = append(lines, "delete interfaces "+ae+" aggregated-ether-options", "set interfaces "+ae+" description metalwire:"+l.Name)
	if l.LACP {
		lines = append(lines, "set interfaces "+ae+" aggregated-ether-options lacp active")
		if l.FastRate {
			lines = append(lines, "set interfaces "+ae+" aggregated-ether-options lacp periodic fast")
		}
	}
	p := l.Port
	p.Name = ae
	lines = append(lines, portLines(ae, p)...)
	members := slices.Sorted(slices.Values(l.Members))
	for _, m := range members {
		lines = append(lines, "delete interfaces "+m+" unit 0 family ethernet-switching", "delete interfaces "+m+" native-vlan-id",
			"delete interfaces "+m+" disable", "set interfaces "+m+" ether-options 802.3ad "+ae)
	}
	for _, m := range cur.Members {
		if !slices.Contains(l.Members, m) {
			lines = append(lines, leave(m, max(ep.IdleVLAN, 1))...)
		}
	}
	return lines, nil
}

// junosIface is the part of an interface of "show configuration interfaces | display json" that
// says it is a bond or a bond's member.
type junosIface struct {
	Description string `json:"description"`
	AE          *struct {
		LACP *struct {
			Active   json0  `json:"active"`
			Periodic string `json:"periodic"`
		} `json:"lacp"`
	} `json:"aggregated-ether-options"`
	Ether *struct {
		AD *struct {
			Bundle string `json:"bundle"`
		} `json:"ieee-802.3ad"`
	} `json:"ether-options"`
}

// json0 is a Junos flag ("active": [null]): present or not.
type json0 []any

// junosLAGs reads the bonds named in names: ae interfaces with metalwire's description, their
// members (ether-options 802.3ad) and LACP. ports are the interfaces' VLAN configuration.
func junosLAGs(ifaces map[string]junosIface, ports map[string]fabric.Port, names []string) (map[string]fabric.LAG, map[string]bool) {
	lags := map[string]fabric.LAG{}
	byAE := map[string]string{}
	for name, iface := range ifaces {
		lag, ok := strings.CutPrefix(iface.Description, "metalwire:")
		if !ok || !strings.HasPrefix(name, "ae") || !slices.Contains(names, lag) {
			continue
		}
		l := fabric.LAG{Name: lag, Port: ports[name]}
		l.Port.Name = name
		if iface.AE != nil && iface.AE.LACP != nil && iface.AE.LACP.Active != nil {
			l.LACP = true
			l.FastRate = iface.AE.LACP.Periodic == "fast"
		}
		lags[lag] = l
		byAE[name] = lag
	}
	members := map[string]bool{}
	for name, iface := range ifaces {
		if iface.Ether == nil || iface.Ether.AD == nil {
			continue
		}
		if lag, ok := byAE[iface.Ether.AD.Bundle]; ok {
			l := lags[lag]
			l.Members = append(l.Members, name)
			slices.Sort(l.Members)
			lags[lag] = l
			members[name] = true
		}
	}
	return lags, members
}
