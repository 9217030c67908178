package vendorssh

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// SONiC is SONiC's click CLI over SSH exec channels: "sudo config vlan ..." to change,
// "sudo config save -y" to save, sonic-cfggen's JSON view of CONFIG_DB to read back. A port is
// in a VLAN by membership, untagged (its access or native VLAN) or tagged (a trunk's VLANs).
func SONiC() sshcli.CommandSet {
	return sshcli.CommandSet{
		NetworkOS: "sonic",
		ACLs:      true,
		PortState: true,
		Mode:      sshcli.ModeExec,
		Save:      []string{"sudo config save -y"},
		Errors: []*regexp.Regexp{
			regexp.MustCompile(`^Error: `),
			regexp.MustCompile(`command not found`),
			regexp.MustCompile(`Permission denied`),
		},
		Render: renderSONiC,
		ReadCommands: func(fabric.Endpoint, []string) []string {
			return []string{"sonic-cfggen -d --var-json VLAN", "sonic-cfggen -d --var-json VLAN_MEMBER", "sonic-cfggen -d --var-json PORT",
				"sonic-cfggen -d --var-json PORTCHANNEL", "sonic-cfggen -d --var-json PORTCHANNEL_MEMBER",
				"sonic-cfggen -d --var-json MCLAG_DOMAIN", "sonic-cfggen -d --var-json MCLAG_INTERFACE",
				"sonic-cfggen -d --var-json ACL_TABLE", "sonic-cfggen -d --var-json ACL_RULE"}
		},
		ParseState:     parseSONiC,
		VersionCommand: "show version",
		ParseVersion: func(out string) string {
			for _, l := range strings.Split(out, "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(l), "SONiC Software Version:"); ok {
					return strings.TrimSpace(v)
				}
			}
			return ""
		},
	}
}

// renderSONiC changes memberships: those the switch shows (have) and the change does not keep
// go first, then the missing ones are added.
//
//	ensure-vlan: sudo config vlan add N          remove-vlan: sudo config vlan del N
//	access:      sudo config vlan member del V P (each other membership) /
//	             sudo config vlan member add -u N P
//	trunk:       sudo config vlan member del V P (each unwanted) /
//	             sudo config vlan member add -u NATIVE P / sudo config vlan member add V P (each VLAN)
//	reset:       access in the idle VLAN (sudo config vlan add IDLE first if the switch lacks it)
//
// A port whose administrative state (PORT's admin_status) is not the one asked is then shut or
// started: sudo config interface shutdown P (portStatus down) or sudo config interface startup P
// (up; a reset port is up). Bonds are port-channels: renderSONiCLAG. Access lists are
// CONFIG_DB rows, a run of list changes written in two sonic-cfggen lines at most (sonicacl.go).
func renderSONiC(ep fabric.Endpoint, have fabric.State, batch fabric.Batch) ([]string, error) {
	r := &sonicRender{have: have, vlans: map[int]bool{}, taken: map[string]string{}}
	for _, v := range have.VLANs {
		r.vlans[v.ID] = true
	}
	for i, c := range batch {
		p := c.Port
		if c.Op != fabric.OpEnsureACL && c.Op != fabric.OpRemoveACL {
			if err := r.flushACLs(); err != nil {
				return nil, err
			}
		}
		switch c.Op {
		case fabric.OpEnsureACL, fabric.OpRemoveACL:
			if err := r.acl(ep, i, c); err != nil {
				return nil, err
			}
		case fabric.OpEnsureVLAN:
			r.add(fmt.Sprintf("sudo config vlan add %d", c.VLAN.ID))
			r.vlans[c.VLAN.ID] = true
		case fabric.OpRemoveVLAN:
			r.add(fmt.Sprintf("sudo config vlan del %d", c.VLAN.ID))
			delete(r.vlans, c.VLAN.ID)
		case fabric.OpAccessPort:
			r.member(p.Name, have.Ports[p.Name], []int{p.VLAN}, nil)
			r.state(p.Name, have.Ports[p.Name], p.Down)
		case fabric.OpTrunkPort:
			untagged, tagged := sonicVLANs(p)
			r.member(p.Name, have.Ports[p.Name], untagged, tagged)
			r.state(p.Name, have.Ports[p.Name], p.Down)
		case fabric.OpResetPort:
			idle, err := idleOf("sonic", i, c)
			if err != nil {
				return nil, err
			}
			r.idle(p.Name, have.Ports[p.Name], idle)
		case fabric.OpEnsureLAG, fabric.OpRemoveLAG:
			if err := r.lag(ep, i, c); err != nil {
				return nil, err
			}
		default:
			return nil, unsupported("sonic", i, c)
		}
	}
	if err := r.flushACLs(); err != nil {
		return nil, err
	}
	return r.lines, nil
}

// sonicRender collects a batch's lines and what they did to the switch's VLANs and
// port-channel numbers.
type sonicRender struct {
	have  fabric.State
	lines []string
	vlans map[int]bool
	// taken are the port-channels the batch's bonds use, and the bond that uses each.
	taken map[string]string
	// domainSent says the batch has sent the switch's MCLAG domain (sonicmclag.go).
	domainSent bool
	// aclRun gathers consecutive access-list changes, written together (sonicacl.go).
	aclRun *aclWrite
}

func (r *sonicRender) add(lines ...string) { r.lines = append(r.lines, lines...) }

// sonicVLANs are a port's untagged (access or native) and tagged VLANs.
func sonicVLANs(p fabric.Port) (untagged, tagged []int) {
	if p.Mode != fabric.ModeTrunk {
		return []int{p.VLAN}, nil
	}
	if p.VLAN > 0 {
		untagged = []int{p.VLAN}
	}
	return untagged, slices.DeleteFunc(slices.Clone(p.Trunk), func(v int) bool { return v == p.VLAN })
}

// member takes an interface (a port or a port-channel) from its memberships as cur shows them
// to the untagged and tagged ones asked.
func (r *sonicRender) member(port string, cur fabric.Port, untagged, tagged []int) {
	curUntagged, curTagged := 0, []int(nil)
	switch cur.Mode {
	case fabric.ModeAccess:
		curUntagged = cur.VLAN
	case fabric.ModeTrunk:
		curUntagged, curTagged = cur.VLAN, cur.Trunk
	}
	if curUntagged != 0 && !slices.Contains(untagged, curUntagged) {
		r.add(fmt.Sprintf("sudo config vlan member del %d %s", curUntagged, port))
	}
	for _, v := range curTagged {
		if !slices.Contains(tagged, v) {
			r.add(fmt.Sprintf("sudo config vlan member del %d %s", v, port))
		}
	}
	for _, v := range untagged {
		if v != curUntagged {
			r.add(fmt.Sprintf("sudo config vlan member add -u %d %s", v, port))
		}
	}
	for _, v := range tagged {
		if !slices.Contains(curTagged, v) {
			r.add(fmt.Sprintf("sudo config vlan member add %d %s", v, port))
		}
	}
}

// state shuts or starts an interface whose administrative state (cur, as read back) is not the
// one asked.
func (r *sonicRender) state(port string, cur fabric.Port, down bool) {
	switch {
	case down && !cur.Down:
		r.add("sudo config interface shutdown " + port)
	case !down && cur.Down:
		r.add("sudo config interface startup " + port)
	}
}

// idle makes a port an idle access port of vlan, up, creating the VLAN if the switch lacks it.
func (r *sonicRender) idle(port string, cur fabric.Port, vlan int) {
	if !r.vlans[vlan] {
		r.add(fmt.Sprintf("sudo config vlan add %d", vlan))
		r.vlans[vlan] = true
	}
	r.member(port, cur, []int{vlan}, nil)
	r.state(port, cur, false)
}

// sonicJSON reads one table of "sonic-cfggen -d --var-json T", which prints nothing for a table
// CONFIG_DB does not have (no VLAN, no port-channel yet).
func sonicJSON(out string, v any) error {
	if strings.TrimSpace(out) == "" {
		return nil
	}
	return json.Unmarshal([]byte(out), v)
}

// parseSONiC reads sonic-cfggen's VLAN, VLAN_MEMBER, PORT, PORTCHANNEL, PORTCHANNEL_MEMBER,
// MCLAG_DOMAIN, MCLAG_INTERFACE, ACL_TABLE and ACL_RULE tables.
func parseSONiC(ep fabric.Endpoint, names []string, outs []string) (fabric.State, error) {
	var vlanTable map[string]struct {
		ID flexInt `json:"vlanid"`
	}
	if err := sonicJSON(outs[0], &vlanTable); err != nil {
		return fabric.State{}, fmt.Errorf("sonic-cfggen VLAN: %w", err)
	}
	ids := make([]int, 0, len(vlanTable))
	for _, v := range vlanTable {
		ids = append(ids, int(v.ID))
	}
	var members map[string]struct {
		Mode string `json:"tagging_mode"`
	}
	if err := sonicJSON(outs[1], &members); err != nil {
		return fabric.State{}, fmt.Errorf("sonic-cfggen VLAN_MEMBER: %w", err)
	}
	var portTable map[string]sonicAdmin
	if err := sonicJSON(outs[2], &portTable); err != nil {
		return fabric.State{}, fmt.Errorf("sonic-cfggen PORT: %w", err)
	}
	untagged := map[string]int{}
	tagged := map[string][]int{}
	for key, m := range members {
		vlan, port, ok := strings.Cut(key, "|")
		id, err := strconv.Atoi(strings.TrimPrefix(vlan, "Vlan"))
		if !ok || err != nil {
			return fabric.State{}, fmt.Errorf("sonic-cfggen VLAN_MEMBER: key %q is not Vlan<id>|<port>", key)
		}
		if m.Mode == "untagged" {
			untagged[port] = id
		} else {
			tagged[port] = append(tagged[port], id)
		}
	}
	// memberOf is an interface's VLAN configuration as its memberships give it.
	memberOf := func(name string) fabric.Port {
		t := tagged[name]
		slices.Sort(t)
		switch {
		case len(t) > 0:
			return fabric.Port{Name: name, Mode: fabric.ModeTrunk, VLAN: untagged[name], Trunk: t}
		case untagged[name] != 0:
			return fabric.Port{Name: name, Mode: fabric.ModeAccess, VLAN: untagged[name]}
		}
		return fabric.Port{Name: name}
	}
	all := map[string]fabric.Port{}
	for name, row := range portTable {
		// SONiC's ports are down unless admin_status says up (a row without it is down).
		p := memberOf(name)
		p.Down = row.AdminStatus != "up"
		all[name] = p
	}
	mclags, err := sonicMCLAGs(ep, outs[5], outs[6])
	if err != nil {
		return fabric.State{}, err
	}
	// A list's name is no bond, though the range would number a port-channel for it too.
	bonds := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return fabric.ACLCookieOfName(n) != fabric.CookiePrefix })
	lags, err := parseSONiCLAGs(ep, bonds, portTable, outs[3], outs[4], memberOf, mclags)
	if err != nil {
		return fabric.State{}, err
	}
	acls, err := parseSONiCACLs(ep, names, outs[7], outs[8], lags)
	if err != nil {
		return fabric.State{}, err
	}
	return fabric.State{VLANs: vlansOf(ids), Ports: wantPorts(all, names), LAGs: lags, ACLs: acls}, nil
}
