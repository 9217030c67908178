// Package view draws the fabric as a person reads it: which host card is cabled to which switch
// port, what the port carries, and whether the port is as it was set. It reads the fabric's
// objects (NetworkDevices, NICs, ClusterNetworks) and prints a table or a Graphviz graph; it
// talks to nothing.
package view

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"text/tabwriter"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// Link is one host card cabled to one switch port.
type Link struct {
	Host, Card     string
	Device, Switch string
	Port           string
	// ClusterNetwork is the cluster using the host ("" when none); Networks what the card
	// carries there ("control=vlan 1000").
	ClusterNetwork string
	Networks       []string
	// Mode and VLANs are what the switch port was set to ("" and "idle" when the controller has
	// not configured it).
	Mode  string
	VLANs string
	// State is ok, idle, drifted (with Problem saying what differs), error (its host's state
	// or the switch's) or configuring.
	State   string
	Problem string
}

// Switch is one switch of a NetworkDevice.
type Switch struct {
	Device, Name, OS, Address string
	Reachable                 bool
	LastError                 string
}

// View is the fabric of one namespace (or of several: names are namespace-qualified then).
type View struct {
	Switches []Switch
	Links    []Link
	// Networks lists every network name ("<clusternetwork>/<network>"), for colours.
	Networks []string
}

// Build reads the objects into a view, sorted by switch, host and card.
func Build(devices []netv1.NetworkDevice, nics []netv1.NIC, clusters []netv1.ClusterNetwork) View {
	var v View
	ports := map[string]netv1.ConfiguredPort{}
	lists := map[string]map[string]netv1.ConfiguredACL{} // by device/switch, then name
	drifted := map[string]netv1.DriftedPort{}
	failing := map[string]string{}
	for _, d := range devices {
		for _, sw := range d.Spec.Switches {
			s := Switch{Device: d.Name, Name: sw.Name, OS: string(sw.NetworkOS), Address: sw.Address}
			for _, st := range d.Status.Switches {
				if st.Name != sw.Name {
					continue
				}
				s.Reachable, s.LastError = st.Reachable, st.LastError
				lists[d.Name+"/"+sw.Name] = st.BoundACLs()
				for _, p := range st.Ports {
					ports[key(d.Name, sw.Name, p.Name)] = p
					if p.LAG != nil {
						// A bond: its member ports, which the cards are cabled to, carry what it does.
						for _, m := range p.LAG.Members {
							ports[key(d.Name, sw.Name, m)] = p
						}
					}
				}
				for _, dp := range st.Drifted {
					drifted[key(d.Name, sw.Name, dp.Port)] = dp
				}
				if !st.Reachable && st.LastError != "" {
					failing[d.Name+"/"+sw.Name] = st.LastError
				}
			}
			v.Switches = append(v.Switches, s)
		}
	}
	hostState := map[string]netv1.HostNetworkState{}
	for _, cn := range clusters {
		for host, st := range cn.Status.States {
			hostState[cn.Name+"/"+host] = st
		}
		for _, n := range cn.Status.Networks {
			v.Networks = append(v.Networks, cn.Name+"/"+n.Name)
		}
	}
	for _, nic := range nics {
		for i, card := range nic.Spec.NICs {
			sw := card.NetworkDevice.Switch
			l := Link{Host: nic.Spec.Node, Card: cmp.Or(card.Name, card.MAC, fmt.Sprintf("nic%d", i)), Device: nic.Spec.NetworkDeviceRef,
				Switch: sw.Name, Port: sw.Port.String(), ClusterNetwork: nic.Status.ClusterNetwork, VLANs: "idle", State: "idle"}
			var a *netv1.NICAssignment
			if i < len(nic.Status.NICs) {
				a = nic.Status.NICs[i]
			}
			if a != nil {
				if len(a.Networks) > 0 {
					for _, n := range a.Networks {
						l.Networks = append(l.Networks, fmt.Sprintf("%s=vlan %d", n.Name, n.VLANID))
					}
				} else {
					l.Networks = []string{fmt.Sprintf("%s=vlan %d", a.Network, a.VLANID)}
				}
			}
			k := key(l.Device, l.Switch, l.Port)
			if p, ok := ports[k]; ok {
				l.Mode, l.VLANs, l.State = string(p.PortMode()), portCarries(p, boundTo(p, a, lists[l.Device+"/"+l.Switch])), "ok"
				if p.MTU != 0 {
					l.VLANs += fmt.Sprintf(" mtu %d", p.MTU)
				}
			}
			if l.ClusterNetwork != "" {
				if st, ok := hostState[l.ClusterNetwork+"/"+l.Host]; ok && st.State != netv1.HostReady {
					l.State, l.Problem = string(st.State), st.Message
				}
			}
			if dp, ok := drifted[k]; ok {
				l.State, l.Problem = "drifted", fmt.Sprintf("set %s, found %s", dp.Set, dp.Found)
			}
			if msg, ok := failing[l.Device+"/"+l.Switch]; ok && l.State != "drifted" {
				l.State, l.Problem = "error", msg
			}
			v.Links = append(v.Links, l)
		}
	}
	slices.SortFunc(v.Switches, func(a, b Switch) int { return cmp.Or(cmp.Compare(a.Device, b.Device), cmp.Compare(a.Name, b.Name)) })
	slices.SortFunc(v.Links, func(a, b Link) int {
		return cmp.Or(cmp.Compare(a.Device, b.Device), cmp.Compare(a.Switch, b.Switch), cmp.Compare(a.Host, b.Host), cmp.Compare(a.Card, b.Card))
	})
	slices.Sort(v.Networks)
	v.Networks = slices.Compact(v.Networks)
	return v
}

func key(device, sw, port string) string { return device + "/" + sw + "/" + port }

// boundTo is the access lists the record says are bound to port p for card a (nil: a card the
// cluster does not use): the card's lists that the switch's record has (each list is its host's,
// bound to its port, and recorded once for the switch), or the port's own in a record written
// before that (ports[].acls).
func boundTo(p netv1.ConfiguredPort, a *netv1.NICAssignment, bound map[string]netv1.ConfiguredACL) []netv1.ConfiguredACL {
	if len(p.ACLs) > 0 || a == nil {
		return p.ACLs
	}
	var out []netv1.ConfiguredACL
	for _, c := range a.ACLs {
		if b, ok := bound[c.Name]; ok {
			out = append(out, b)
		}
	}
	return out
}

// portCarries is what a port carries and how: its VLANs, then whether it is shut and the access
// lists bound to it.
func portCarries(p netv1.ConfiguredPort, lists []netv1.ConfiguredACL) string {
	s := portVLANs(p)
	if p.Down {
		s += ", shut"
	}
	for _, a := range lists {
		s += fmt.Sprintf(", acl %s (%d rules, then %s)", a.Name, a.Rules, a.DefaultAction())
	}
	return s
}

func portVLANs(p netv1.ConfiguredPort) string {
	if p.LAG != nil {
		lacp := ""
		if p.LAG.LAGMode() != netv1.LAGStatic {
			lacp = " lacp"
		}
		return fmt.Sprintf("bond %s%s, %s", p.Name, lacp, portVLANs(netv1.ConfiguredPort{Mode: p.Mode, VLAN: p.VLAN, Trunk: p.Trunk}))
	}
	if p.PortMode() == netv1.PortModeTrunk {
		ids := make([]string, 0, len(p.Trunk))
		for _, t := range p.Trunk {
			ids = append(ids, fmt.Sprint(t))
		}
		s := "tagged " + strings.Join(ids, ",")
		if p.VLAN != 0 {
			s += fmt.Sprintf(" native %d", p.VLAN)
		}
		return s
	}
	return fmt.Sprintf("vlan %d", p.VLAN)
}

// Table prints the switches, then one line per host card.
func (v View) Table() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SWITCH\tNETWORKDEVICE\tOS\tADDRESS\tREACHABLE")
	for _, s := range v.Switches {
		reach := "yes"
		switch {
		case !s.Reachable && s.LastError != "":
			reach = "no: " + s.LastError
		case !s.Reachable:
			reach = "not yet"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Device, s.OS, s.Address, reach)
	}
	_ = w.Flush()
	b.WriteString("\n")
	w = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "HOST\tCARD\tSWITCH\tPORT\tCLUSTERNETWORK\tNETWORKS\tPORT CARRIES\tSTATE")
	for _, l := range v.Links {
		state := l.State
		if l.Problem != "" {
			state += ": " + l.Problem
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Host, l.Card, l.Switch, l.Port, dash(l.ClusterNetwork),
			dash(strings.Join(l.Networks, ",")), l.VLANs, state)
	}
	_ = w.Flush()
	return b.String()
}

func dash(s string) string { return cmp.Or(s, "-") }

// palette gives each network its own colour, in the order of View.Networks.
var palette = []string{"#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#bcbd22"}

// DOT is the fabric as a Graphviz graph: switches as boxes, hosts as ellipses, one edge per
// cabled card, coloured by the network it carries (grey when idle); a drifted or failed port is
// a red dashed edge whose label says so.
func (v View) DOT() string {
	colour := map[string]string{}
	for i, n := range v.Networks {
		colour[n] = palette[i%len(palette)]
	}
	var b strings.Builder
	b.WriteString("graph fabric {\n  rankdir=LR;\n  node [fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n")
	for _, s := range v.Switches {
		fill := "#eeeeee"
		if !s.Reachable {
			fill = "#ffcccc"
		}
		fmt.Fprintf(&b, "  %s [shape=box, style=filled, fillcolor=%q, label=%q];\n", quote("switch:"+s.Device+"/"+s.Name), fill,
			fmt.Sprintf("%s\n%s (%s)", s.Name, s.Device, s.OS))
	}
	hosts := make([]string, 0, len(v.Links))
	for _, l := range v.Links {
		hosts = append(hosts, l.Host)
	}
	slices.Sort(hosts)
	for _, h := range slices.Compact(hosts) {
		fmt.Fprintf(&b, "  %s [shape=ellipse, label=%q];\n", quote("host:"+h), h)
	}
	for _, l := range v.Links {
		label := fmt.Sprintf("%s - %s\n%s", l.Card, l.Port, l.VLANs)
		attrs := "color=\"#999999\""
		if len(l.Networks) > 0 {
			name, _, _ := strings.Cut(l.Networks[0], "=")
			if c, ok := colour[l.ClusterNetwork+"/"+name]; ok {
				attrs = fmt.Sprintf("color=%q, penwidth=2", c)
			}
			label += "\n" + strings.Join(l.Networks, ",")
		}
		switch l.State {
		case "drifted":
			attrs = "color=\"#d62728\", style=dashed, penwidth=2"
			label += "\nDRIFTED: " + l.Problem
		case "error":
			attrs = "color=\"#d62728\", style=dashed, penwidth=2"
			label += "\nFAILED"
		}
		fmt.Fprintf(&b, "  %s -- %s [%s, label=%q];\n", quote("host:"+l.Host), quote("switch:"+l.Device+"/"+l.Switch), attrs, label)
	}
	b.WriteString("}\n")
	return b.String()
}

func quote(id string) string { return fmt.Sprintf("%q", id) }

// SVG draws a DOT graph as SVG with Graphviz's dot, which must be on PATH.
func SVG(ctx context.Context, dot string) ([]byte, error) {
	path, err := exec.LookPath("dot")
	if err != nil {
		return nil, errors.New("SVG needs Graphviz's dot on PATH (apt-get install graphviz); the DOT text can go to another renderer")
	}
	var out, stderr bytes.Buffer
	run := exec.CommandContext(ctx, path, "-Tsvg")
	run.Stdin, run.Stdout, run.Stderr = strings.NewReader(dot), &out, &stderr
	if err := run.Run(); err != nil {
		return nil, fmt.Errorf("dot -Tsvg: %w: %s", err, stderr.String())
	}
	return out.Bytes(), nil
}
