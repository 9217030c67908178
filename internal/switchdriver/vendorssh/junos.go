package vendorssh

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// Junos is Juniper Junos with ELS switching (EX, QFX): scrapligo's juniper_junos platform. A
// batch is typed into a private candidate configuration ("configure private"), checked ("commit
// check") and committed once ("commit"); a line or the check failing rolls the candidate back
// ("rollback 0"), and a session that ends before the commit leaves nothing behind, so a bad
// batch changes nothing. The commit saves the configuration.
func Junos() sshcli.CommandSet {
	return sshcli.CommandSet{
		NetworkOS:       "junos",
		PortState:       true,
		ACLs:            true,
		Mode:            sshcli.ModePlatform,
		Platform:        "juniper_junos",
		ConfigPrivilege: "configuration-private",
		Commit:          []string{"commit check", "commit"},
		Rollback:        []string{"rollback 0"},
		Errors: []*regexp.Regexp{
			regexp.MustCompile(`^error: `),
			regexp.MustCompile(`^syntax error`),
			regexp.MustCompile(`^unknown command`),
		},
		Render: renderJunos,
		ReadCommands: func(fabric.Endpoint, []string) []string {
			return []string{"show configuration vlans | display json", "show configuration interfaces | display json",
				"show configuration firewall family ethernet-switching | display json"}
		},
		ParseState:     parseJunos,
		VersionCommand: "show version | display json",
		ParseVersion: func(out string) string {
			var v struct {
				Info []struct {
					Version []struct {
						Data string `json:"data"`
					} `json:"junos-version"`
				} `json:"software-information"`
			}
			if json.Unmarshal([]byte(out), &v) != nil || len(v.Info) == 0 || len(v.Info[0].Version) == 0 {
				return ""
			}
			return "Junos " + v.Info[0].Version[0].Data
		},
	}
}

// junosVLANName is the name metalwire gives a VLAN it creates; a VLAN it removes goes by the
// name the switch shows.
func junosVLANName(id int) string { return fmt.Sprintf("vlan%d", id) }

// renderJunos writes set and delete statements (ES is "unit 0 family ethernet-switching"):
//
//	ensure-vlan: set vlans vlanN vlan-id N       remove-vlan: delete vlans NAME
//	access:      delete interfaces P ES interface-mode / delete interfaces P ES vlan /
//	             delete interfaces P native-vlan-id / delete interfaces P disable /
//	             set interfaces P ES interface-mode access / set interfaces P ES vlan members N /
//	             set interfaces P disable (portStatus down)
//	trunk:       the same four deletes /
//	             set interfaces P ES interface-mode trunk / set interfaces P ES vlan members V (each) /
//	             set interfaces P native-vlan-id NATIVE (with a native VLAN) /
//	             set interfaces P disable (portStatus down)
//	reset:       access in the idle VLAN (enabled: no disable)
//
// The deletes name what metalwire sets, not the whole family, so a port's filter binding (an
// access list, renderJunosACL) outlives a change of its VLANs. Bonds: ae interfaces
// (renderJunosLAG).
func renderJunos(ep fabric.Endpoint, have fabric.State, batch fabric.Batch) ([]string, error) {
	names := map[int]string{}
	for _, v := range have.VLANs {
		names[v.ID] = v.Name
	}
	var lines []string
	es := func(port string) string { return "interfaces " + port + " unit 0 family ethernet-switching" }
	unset := func(port string) {
		lines = append(lines, "delete "+es(port)+" interface-mode", "delete "+es(port)+" vlan",
			"delete interfaces "+port+" native-vlan-id", "delete interfaces "+port+" disable")
	}
	disable := func(port string, down bool) {
		if down {
			lines = append(lines, "set interfaces "+port+" disable")
		}
	}
	access := func(port string, vlan int, down bool) {
		unset(port)
		lines = append(lines, "set "+es(port)+" interface-mode access", fmt.Sprintf("set %s vlan members %d", es(port), vlan))
		disable(port, down)
	}
	trunk := func(port string, p fabric.Port) {
		unset(port)
		lines = append(lines, "set "+es(port)+" interface-mode trunk")
		for _, v := range trunkVLANs(p) {
			lines = append(lines, fmt.Sprintf("set %s vlan members %d", es(port), v))
		}
		if p.VLAN > 0 {
			lines = append(lines, fmt.Sprintf("set interfaces %s native-vlan-id %d", port, p.VLAN))
		}
		disable(port, p.Down)
	}
	// portLines are a port's lines on their own, for a bond's.
	portLines := func(port string, p fabric.Port) []string {
		saved := lines
		lines = nil
		if p.Mode == fabric.ModeTrunk {
			trunk(port, p)
		} else {
			access(port, p.VLAN, p.Down)
		}
		out := lines
		lines = saved
		return out
	}
	for i, c := range batch {
		p := c.Port
		switch c.Op {
		case fabric.OpEnsureLAG, fabric.OpRemoveLAG:
			l, err := renderJunosLAG(ep, have, i, c, portLines)
			if err != nil {
				return nil, err
			}
			lines = append(lines, l...)
		case fabric.OpEnsureACL, fabric.OpRemoveACL:
			l, err := renderJunosACL(have, i, c)
			if err != nil {
				return nil, err
			}
			lines = append(lines, l...)
		case fabric.OpEnsureVLAN:
			lines = append(lines, fmt.Sprintf("set vlans %s vlan-id %d", junosVLANName(c.VLAN.ID), c.VLAN.ID))
		case fabric.OpRemoveVLAN:
			name := names[c.VLAN.ID]
			if name == "" {
				name = junosVLANName(c.VLAN.ID)
			}
			lines = append(lines, "delete vlans "+name)
		case fabric.OpAccessPort:
			access(p.Name, p.VLAN, p.Down)
		case fabric.OpTrunkPort:
			trunk(p.Name, p)
		case fabric.OpResetPort:
			idle, err := idleOf("junos", i, c)
			if err != nil {
				return nil, err
			}
			access(p.Name, idle, false)
		default:
			return nil, unsupported("junos", i, c)
		}
	}
	return lines, nil
}

// parseJunos reads the committed configuration's vlans, interfaces and ethernet-switching
// filters as "| display json" prints them. VLAN members may be ids or VLAN names.
func parseJunos(_ fabric.Endpoint, names []string, outs []string) (fabric.State, error) {
	var vl struct {
		Configuration struct {
			VLANs struct {
				VLAN []struct {
					Name string  `json:"name"`
					ID   flexInt `json:"vlan-id"`
				} `json:"vlan"`
			} `json:"vlans"`
		} `json:"configuration"`
	}
	if err := json.Unmarshal([]byte(outs[0]), &vl); err != nil {
		return fabric.State{}, fmt.Errorf("show configuration vlans | display json: %w", err)
	}
	st := fabric.State{Ports: map[string]fabric.Port{}}
	byName := map[string]int{}
	for _, v := range vl.Configuration.VLANs.VLAN {
		if v.ID == 0 {
			continue // a VLAN without an id (vlan-id-list, VXLAN-only): not one metalwire manages
		}
		byName[v.Name] = int(v.ID)
		st.VLANs = append(st.VLANs, fabric.VLAN{ID: int(v.ID), Name: v.Name})
	}
	var ifs struct {
		Configuration struct {
			Interfaces struct {
				Interface []struct {
					junosIface
					Name    string  `json:"name"`
					Native  flexInt `json:"native-vlan-id"`
					Disable json0   `json:"disable"`
					Unit    []struct {
						Name   json.RawMessage `json:"name"`
						Family struct {
							ES *struct {
								Mode string `json:"interface-mode"`
								VLAN struct {
									Members []string `json:"members"`
								} `json:"vlan"`
								Filter struct {
									Input  string `json:"input"`
									Output string `json:"output"`
								} `json:"filter"`
							} `json:"ethernet-switching"`
						} `json:"family"`
					} `json:"unit"`
				} `json:"interface"`
			} `json:"interfaces"`
		} `json:"configuration"`
	}
	if err := json.Unmarshal([]byte(outs[1]), &ifs); err != nil {
		return fabric.State{}, fmt.Errorf("show configuration interfaces | display json: %w", err)
	}
	all := map[string]fabric.Port{}
	bonds := map[string]junosIface{}
	binds := map[string][]string{}
	for _, iface := range ifs.Configuration.Interfaces.Interface {
		bonds[iface.Name] = iface.junosIface
		p := fabric.Port{Name: iface.Name}
		for _, u := range iface.Unit {
			if string(u.Name) != `"0"` && string(u.Name) != "0" || u.Family.ES == nil {
				continue
			}
			if f := u.Family.ES.Filter; f.Input != "" || f.Output != "" {
				binds[iface.Name] = []string{"input " + f.Input, "output " + f.Output}
			}
			var ids []int
			for _, m := range u.Family.ES.VLAN.Members {
				id, err := strconv.Atoi(m)
				if err != nil {
					var ok bool
					if id, ok = byName[m]; !ok {
						return fabric.State{}, fmt.Errorf("interface %s: VLAN member %q is neither an id nor a VLAN of the switch", iface.Name, m)
					}
				}
				ids = append(ids, id)
			}
			ids = vlansToInts(vlansOf(ids))
			if u.Family.ES.Mode == "trunk" {
				p = trunkPort(iface.Name, ids, int(iface.Native))
			} else if len(ids) == 1 {
				p = fabric.Port{Name: iface.Name, Mode: fabric.ModeAccess, VLAN: ids[0]}
			}
		}
		p.Down = iface.Disable != nil
		all[iface.Name] = p
	}
	lags, members := junosLAGs(bonds, all, names)
	for m := range members {
		delete(all, m)
	}
	st.Ports, st.LAGs = wantPorts(all, names), lags
	filters, err := parseJunosFilters(outs[2])
	if err != nil {
		return fabric.State{}, err
	}
	st.ACLs = junosACLs(names, filters, binds, lags)
	return st, nil
}
