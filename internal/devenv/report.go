package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	"github.com/metalwire/metalwire/internal/simulator"
)

// HostRow is one line of the host table: what a host is doing and what it boots with.
type HostRow struct {
	Host  string
	State string
	// Machine is the object using the host (its spec.consumerRef), "" for a free host.
	Machine string
	// IPs are the static addresses in the network data the host last booted with: the
	// provisioned network_data.json, else the pre-provisioning one.
	IPs []string
	// Dir is the host's folder of boot files and Files the names of those present in it.
	Dir   string
	Files []string
}

// HostTable reads every host of namespace ns and the files the simulator wrote for it under dir.
func HostTable(ctx context.Context, c client.Client, dir, ns string) ([]HostRow, error) {
	hosts := &bmov1.BareMetalHostList{}
	if err := c.List(ctx, hosts, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing BareMetalHosts: %w", err)
	}
	rows := make([]HostRow, 0, len(hosts.Items))
	for _, h := range hosts.Items {
		row := HostRow{Host: h.Name, State: orNone(string(h.Status.Provisioning.State)), Dir: simulator.HostDir(dir, h.Namespace, h.Name)}
		if h.Spec.ConsumerRef != nil {
			row.Machine = h.Spec.ConsumerRef.Name
		}
		files, err := os.ReadDir(row.Dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for _, f := range files {
			row.Files = append(row.Files, f.Name())
		}
		if row.IPs, err = staticAddresses(row.Dir, h.Status.Provisioning.State); err != nil {
			return nil, fmt.Errorf("host %s: %w", h.Name, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// staticAddresses reads ip_address of every network in the host's current network data.
func staticAddresses(hostDir string, state bmov1.ProvisioningState) ([]string, error) {
	file := simulator.PreprovNetworkFile
	if state == bmov1.StateProvisioned {
		file = simulator.NetworkDataFile
	}
	doc, err := simulator.ReadBootNetwork(hostDir, file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ips []string
	for _, n := range doc.Networks {
		if n.IPAddress != "" {
			ips = append(ips, string(n.IPAddress))
		}
	}
	return ips, nil
}

// PrintHostTable writes rows as an aligned table.
func PrintHostTable(out io.Writer, rows []HostRow) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "HOST\tSTATE\tMACHINE\tIPS\tFILES")
	for _, r := range rows {
		files := "-"
		if len(r.Files) > 0 {
			files = filepath.Join(r.Dir, "{"+strings.Join(r.Files, ",")+"}")
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Host, r.State, orDash(r.Machine), orDash(strings.Join(r.IPs, ",")), files)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
