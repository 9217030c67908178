package devenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/devenv/standin"
	"github.com/metalwire/metalwire/internal/simulator"
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/pkg/fabric/view"
)

// switchDrivers is dev mode's driver registry: every driver the image ships, for the real
// switches a user points dev mode at, and the STAND-IN driver for networkOS simulated, the
// simulated switch dev mode creates itself (`metalwire manager` never has it).
func switchDrivers() *switchdriver.Registry {
	r := switchdriver.Default.Clone()
	r.Register(standin.New(string(simulator.SwitchNetworkOS)))
	return r
}

// describeSwitches says, for every switch of every NetworkDevice, whether dev mode simulates it
// or drives it for real.
func describeSwitches(ctx context.Context, c client.Client) ([]string, error) {
	devices := &networkv1.NetworkDeviceList{}
	if err := c.List(ctx, devices); err != nil {
		return nil, fmt.Errorf("listing NetworkDevices: %w", err)
	}
	var out []string
	for _, d := range devices.Items {
		for _, sw := range d.Spec.Switches {
			what := "a REAL switch: the " + string(sw.NetworkOS) + " driver configures it at " + sw.Address
			switch {
			case sw.NetworkOS == simulator.SwitchNetworkOS:
				what = "SIMULATED (a stand-in in memory: configures nothing real)"
			case sw.BareMetalSwitchRef != nil:
				what = "a REAL switch: the one BareMetalSwitch " + sw.BareMetalSwitchRef.Name + " describes"
			}
			out = append(out, fmt.Sprintf("switch %s of NetworkDevice %s/%s: %s", sw.Name, d.Namespace, d.Name, what))
		}
	}
	return out, nil
}

// ReadFabric lists a namespace's fabric objects into a view (`metalwire fabric show`, the
// demo's picture).
func ReadFabric(ctx context.Context, c client.Reader, ns string) (view.View, error) {
	devices := &networkv1.NetworkDeviceList{}
	nics := &networkv1.NICList{}
	clusters := &networkv1.ClusterNetworkList{}
	for _, l := range []client.ObjectList{devices, nics, clusters} {
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			return view.View{}, fmt.Errorf("reading the fabric of namespace %s: %w", ns, err)
		}
	}
	return view.Build(devices.Items, nics.Items, clusters.Items), nil
}

// writeFabricPicture writes the namespace's fabric as dir/fabric.dot and, when Graphviz is
// installed, dir/fabric.svg, and returns the path of the picture written.
func writeFabricPicture(ctx context.Context, c client.Reader, ns, dir string) (string, error) {
	v, err := ReadFabric(ctx, c, ns)
	if err != nil {
		return "", err
	}
	dot := filepath.Join(dir, "fabric.dot")
	if err := os.WriteFile(dot, []byte(v.DOT()), 0o600); err != nil {
		return "", err
	}
	svg, err := view.SVG(ctx, v.DOT())
	if err != nil {
		return dot, err
	}
	path := filepath.Join(dir, "fabric.svg")
	return path, os.WriteFile(path, svg, 0o600)
}

// FabricRow is one host's place on the simulated switch.
type FabricRow struct {
	Host string
	IPs  []string
	// State is selected, available or "-" in the ClusterNetworks of the namespace.
	State string
	// Ports are the host's cards as "card=switch/port vlan", the VLAN the switch reports.
	Ports []string
}

// FabricTable reads each host's NIC object, the ClusterNetworks and what the NetworkDevices'
// switches report of their ports (the view `metalwire fabric show` draws), beside the addresses
// of the host table.
func FabricTable(ctx context.Context, c client.Client, ns string, hosts []HostRow) ([]FabricRow, error) {
	v, err := ReadFabric(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	networks := &networkv1.ClusterNetworkList{}
	if err := c.List(ctx, networks, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing ClusterNetworks: %w", err)
	}
	rows := make([]FabricRow, 0, len(hosts))
	for _, h := range hosts {
		row := FabricRow{Host: h.Host, IPs: h.IPs, State: "-"}
		for _, cn := range networks.Items {
			if slices.Contains(cn.Status.Selected, h.Host) {
				row.State = "selected by " + cn.Name
			} else if _, ok := cn.Status.Available[h.Host]; ok && row.State == "-" {
				row.State = "available in " + cn.Name
			}
		}
		for _, l := range v.Links {
			if l.Host == h.Host {
				row.Ports = append(row.Ports, fmt.Sprintf("%s=%s/%s %s", l.Card, l.Switch, l.Port, l.VLANs))
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// PrintFabricTable writes rows as an aligned table.
func PrintFabricTable(out io.Writer, rows []FabricRow) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "HOST\tIPS\tCLUSTERNETWORK\tSWITCH PORTS (card=switch/port vlan)")
	for _, r := range rows {
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Host, orDash(strings.Join(r.IPs, ",")), r.State, orDash(strings.Join(r.Ports, "; ")))
	}
	return tw.Flush()
}

// waitForVLANs gives the fabric controller a moment to assign the ClusterNetworks' VLANs, so
// the table shows them; it does not fail the demo.
func waitForVLANs(ctx context.Context, c client.Client, ns string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		list := &networkv1.ClusterNetworkList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err == nil {
			done := true
			for _, cn := range list.Items {
				done = done && len(cn.Status.Networks) == len(cn.Spec.Networks)
			}
			if done {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// clusterNetworkVLANs lists each ClusterNetwork's networks and VLAN ids, one line each.
func clusterNetworkVLANs(ctx context.Context, c client.Client, ns string) ([]string, error) {
	list := &networkv1.ClusterNetworkList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing ClusterNetworks: %w", err)
	}
	var lines []string
	for _, cn := range list.Items {
		var nets []string
		for _, n := range cn.Status.Networks {
			nets = append(nets, fmt.Sprintf("%s=vlan %d", n.Name, n.VLANID))
		}
		lines = append(lines, fmt.Sprintf("ClusterNetwork %s on NetworkDevice %s: %s", cn.Name, cn.Spec.NetworkDeviceRef, orDash(strings.Join(nets, ", "))))
	}
	return lines, nil
}
