package openvswitchssh

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Access lists and port state are OpenFlow's on Open vSwitch: ovs-ofctl, in the same SSH
// session as ovs-vsctl. A list is its flows under its cookie (fabric.ACLCookie); a port's state
// is its PORT_DOWN bit, which ovs-vswitchd reports in the Interface's admin_state column.
//
//	read:       ovs-ofctl -O OpenFlow15 --names --no-stats dump-flows BR cookie=0x6d77000000000000/0xffff000000000000
//	lists:      printf '%s\n' 'delete cookie=C/-1' 'add FLOW' ... | ovs-ofctl -O OpenFlow15 --bundle add-flows BR -
//	            (one atomic bundle for every list of the batch; a list is replaced whole)
//	port state: ovs-ofctl -O OpenFlow15 mod-port BR P down|up, then
//	            ovs-vsctl --timeout=30 wait-until Interface P admin_state=down|up

const ofctl = "ovs-ofctl -O OpenFlow15"

// aclName matches the names fabric.ACLName gives lists: a Read asked about one reads flows.
var aclName = regexp.MustCompile(`^acl[0-9a-f]{10}$`)

func asksACLs(names []string) bool { return slices.ContainsFunc(names, aclName.MatchString) }

func dumpFlows(bridge string) string {
	return fmt.Sprintf("%s --names --no-stats dump-flows %s cookie=%#x/%#x", ofctl, quote(bridge), fabric.CookiePrefix, fabric.CookiePrefixMask)
}

// parseACLs reads dump-flows output into the asked lists that have flows, each as its cookie
// and flows (fabric.SameACL compares them with the wanted list's flows).
func parseACLs(out string, names []string) (map[string]fabric.ACL, error) {
	flows, err := parseFlows(out)
	if err != nil {
		return nil, err
	}
	return fabric.ACLsOfFlows(flows, names), nil
}

// parseFlows reads `ovs-ofctl --names --no-stats dump-flows` lines
// (" cookie=0x6d77..., priority=30000,tcp,in_port=p1,tp_dst=22 actions=drop") back into
// flows written as fabric.Flow.OfctlSpec writes them. A field or action metalwire never writes
// is an error naming the line, so a flow is never mistaken for one of metalwire's.
func parseFlows(out string) ([]fabric.Flow, error) {
	var flows []fabric.Flow
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "OFPST_FLOW") || strings.HasPrefix(line, "NXST_FLOW") {
			continue
		}
		f, err := parseFlow(line)
		if err != nil {
			return nil, fmt.Errorf("ovs-ofctl dump-flows: %q: %w", line, err)
		}
		flows = append(flows, f)
	}
	return flows, nil
}

var protoKeywords = []string{"ip", "ipv6", "icmp", "icmp6", "tcp", "tcp6", "udp", "udp6"}

func parseFlow(line string) (fabric.Flow, error) {
	var f fabric.Flow
	match, action, ok := strings.Cut(line, " actions=")
	if !ok {
		return f, fmt.Errorf("no actions")
	}
	switch action {
	case "drop":
		f.Drop = true
	case "NORMAL":
	default:
		return f, fmt.Errorf("actions %s: metalwire writes NORMAL or drop only", action)
	}
	for _, field := range strings.Split(strings.ReplaceAll(match, ", ", ","), ",") {
		key, val, _ := strings.Cut(field, "=")
		var err error
		switch key {
		case "cookie":
			f.Cookie, err = strconv.ParseUint(val, 0, 64)
		case "priority":
			f.Priority, err = strconv.Atoi(val)
		case "table":
			if val != "0" {
				err = fmt.Errorf("table %s: metalwire writes table 0 only", val)
			}
		case "in_port":
			f.InPort = val
			if unq, uerr := strconv.Unquote(val); uerr == nil {
				f.InPort = unq
			}
		case "dl_dst":
			f.DLDst = strings.ToLower(val)
		case "dl_vlan":
			f.VLAN, err = strconv.Atoi(val)
		case "nw_src", "ipv6_src":
			f.NWSrc, err = cidr(val)
		case "nw_dst", "ipv6_dst":
			f.NWDst, err = cidr(val)
		case "tp_dst":
			f.TPDst, err = portMask(val)
		default:
			if val != "" || !slices.Contains(protoKeywords, key) {
				err = fmt.Errorf("field %s: metalwire never writes it", field)
			}
			f.Proto = key
		}
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

// cidr writes an address match as a CIDR: ovs-ofctl prints a whole address without /32 or /128.
func cidr(v string) (string, error) {
	if p, err := netip.ParsePrefix(v); err == nil {
		return p.String(), nil
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return "", fmt.Errorf("address %q: %w", v, err)
	}
	return netip.PrefixFrom(a, a.BitLen()).String(), nil
}

// portMask reads tp_dst=22 (every bit) or tp_dst=0x400/0xfc00.
func portMask(v string) (*fabric.PortMask, error) {
	val, mask, masked := strings.Cut(v, "/")
	n, err := strconv.ParseUint(val, 0, 16)
	if err != nil {
		return nil, fmt.Errorf("tp_dst %q: %w", v, err)
	}
	m := uint64(0xffff)
	if masked {
		if m, err = strconv.ParseUint(mask, 0, 16); err != nil {
			return nil, fmt.Errorf("tp_dst %q: %w", v, err)
		}
	}
	return &fabric.PortMask{Value: uint16(n), Mask: uint16(m)}, nil
}

// renderACLs writes the batch's list changes as one ovs-ofctl bundle ("" for none): each list's
// cookie deleted (the cookie matched in full), then an ensured list's flows added.
func renderACLs(ep fabric.Endpoint, batch fabric.Batch) (string, error) {
	var last []fabric.Change // the last change of each list wins
	for _, c := range batch {
		if c.Op == fabric.OpEnsureACL || c.Op == fabric.OpRemoveACL {
			last = slices.DeleteFunc(last, func(o fabric.Change) bool { return o.ACL.Cookie == c.ACL.Cookie })
			last = append(last, c)
		}
	}
	if len(last) == 0 {
		return "", nil
	}
	if ep.Bridge == "" {
		return "", fmt.Errorf("access lists are set on one bridge: set the switch's bridge in the NetworkDevice")
	}
	lines := []string{}
	for _, c := range last {
		a := c.ACL
		if a.Cookie&fabric.CookiePrefixMask != fabric.CookiePrefix || a.Name != fabric.ACLNameOfCookie(a.Cookie) {
			return "", fmt.Errorf("%s: cookie %#x is not metalwire's list %s (use fabric.ACLCookie); flows of other cookies are never touched", c, a.Cookie, a.Name)
		}
		lines = append(lines, fmt.Sprintf("delete cookie=%#x/-1", a.Cookie))
		if c.Op == fabric.OpRemoveACL {
			continue
		}
		flows, err := a.FlowsOf()
		if err != nil {
			return "", fmt.Errorf("%s: %w", c, err)
		}
		for _, f := range flows {
			lines = append(lines, "add "+f.OfctlSpec())
		}
	}
	cmd := `printf '%s\n'`
	for _, l := range lines {
		cmd += " " + quote(l)
	}
	return cmd + " | " + ofctl + " --bundle add-flows " + quote(ep.Bridge) + " -", nil
}

// renderPortState writes the port-mods of the batch's ports (and bonds' members) whose state
// differs from have, each followed by a wait until ovs-vswitchd reports it. A reset and a bond
// undone open their ports; a new bond shut shuts every member.
func renderPortState(ep fabric.Endpoint, have fabric.State, batch fabric.Batch) ([]string, error) {
	want := map[string]bool{}
	var order []string
	for _, a := range fabric.AdminStates(batch) {
		// What the switch shows: a bond's state for its members (a bond not there yet is up),
		// a port's own otherwise.
		cur := have.Ports[a.Name].Down
		if a.Bond != "" {
			cur = have.LAGs[a.Bond].Port.Down
		}
		if cur != a.Down {
			want[a.Name] = a.Down
			order = append(order, a.Name)
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	if ep.Bridge == "" {
		return nil, fmt.Errorf("ports are shut through their bridge: set the switch's bridge in the NetworkDevice")
	}
	lines := make([]string, 0, 2*len(order))
	for _, n := range order {
		lines = append(lines, fmt.Sprintf("%s mod-port %s %s %s", ofctl, quote(ep.Bridge), quote(n), stateWord(want[n])))
	}
	for _, n := range order {
		lines = append(lines, fmt.Sprintf("%s wait-until Interface %s admin_state=%s", vsctl, quote(n), stateWord(want[n])))
	}
	return lines, nil
}

func stateWord(down bool) string {
	if down {
		return "down"
	}
	return "up"
}
