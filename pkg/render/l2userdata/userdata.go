// Package l2userdata renders the OS step of Equinix Metal layer-2 networks: the cloud-config that
// loads 8021q, writes the VLAN sub-interfaces of a machine's ports (ifupdown stanzas as the
// seed's script writes them, and netplan for systemd-networkd hosts), maps the seed's port names
// (eth0, eth1) to the host's interfaces by MAC from the metadata service, checks each address is
// up and posts running (1000), succeeded (1001) or failed (1002) to the metadata user_state_url,
// as the seed's script does. It is merged into the bootstrap provider's cloud-config: the
// bootstrap's keys are kept and ours are added to write_files and, first, to runcmd.
package l2userdata

import (
	"bytes"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/pkg/render/yamlout"
)

// Interface is one VLAN sub-interface: VLAN on Port, with Address (and its prefix).
type Interface struct {
	Port    string
	VLAN    int
	Address netip.Prefix
	Gateway string // optional default gateway of the interface
}

// Name is the sub-interface's name, "<port>.<vlan>", as the seed names it.
func (i Interface) Name() string { return fmt.Sprintf("%s.%d", i.Port, i.VLAN) }

// Route is a static route through a gateway on one of the VLANs.
type Route struct {
	Destination netip.Prefix
	Gateway     string
}

// Config is what one machine's VLANs need.
type Config struct {
	Interfaces []Interface
	Routes     []Route
	// MetadataURL is the metadata service; empty: Equinix Metal's.
	MetadataURL string
}

// TemplateAnnotation on a Metal3DataTemplate, "true", asks for the VLAN user-data: each machine
// of the template boots with the bootstrap provider's cloud-config merged with the VLAN
// sub-interfaces of its rendered network data, for hosts that configure their VLANs from
// user-data (Equinix Metal's devices read no network_data.json). `metalwire migrate` sets it on
// the templates it makes of PacketMachineTemplates.
const TemplateAnnotation = "network.metalwire.io/vlan-user-data"

// The files the cloud-config writes.
const (
	Dir            = "/var/lib/metalwire/network"
	InterfacesFile = Dir + "/interfaces"
	NetplanFile    = Dir + "/60-metalwire-vlans.yaml"
	ScriptFile     = Dir + "/configure.sh"
	ModulesFile    = "/etc/modules-load.d/metalwire-8021q.conf"
	// DefaultMetadataURL is Equinix Metal's metadata service.
	DefaultMetadataURL = "https://metadata.platformequinix.com/metadata"
)

var portName = regexp.MustCompile(`^[a-z][a-z0-9]{0,9}$`)

func (c Config) check() error {
	if len(c.Interfaces) == 0 {
		return fmt.Errorf("no VLAN interface to configure")
	}
	for _, i := range c.Interfaces {
		if !portName.MatchString(i.Port) {
			return fmt.Errorf("port %q: not an interface name (bond0, eth0, eth1)", i.Port)
		}
		if i.VLAN < 1 || i.VLAN > 4094 {
			return fmt.Errorf("port %s: VLAN %d is outside 1-4094", i.Port, i.VLAN)
		}
		if !i.Address.IsValid() || !i.Address.Addr().Is4() {
			return fmt.Errorf("%s: the address must be IPv4 with its prefix (10.60.10.2/24)", i.Name())
		}
		if i.Gateway != "" {
			if _, err := netip.ParseAddr(i.Gateway); err != nil {
				return fmt.Errorf("%s: gateway %q is not an IP address", i.Name(), i.Gateway)
			}
		}
	}
	for _, r := range c.Routes {
		if _, err := netip.ParseAddr(r.Gateway); err != nil || !r.Destination.IsValid() {
			return fmt.Errorf("route to %s via %q: give a CIDR destination and an IP gateway", r.Destination, r.Gateway)
		}
	}
	return nil
}

// Interfaces is the ifupdown stanzas of the seed's script, one per sub-interface.
func Interfaces(c Config) string {
	var b strings.Builder
	for _, i := range c.Interfaces {
		fmt.Fprintf(&b, "auto %s\niface %s inet static\n    pre-up sleep 5\n    address %s\n    netmask %s\n",
			i.Name(), i.Name(), i.Address.Addr(), netmask(i.Address.Bits()))
		if i.Gateway != "" {
			fmt.Fprintf(&b, "    gateway %s\n", i.Gateway)
		}
		fmt.Fprintf(&b, "    vlan-raw-device %s\n", i.Port)
		for _, r := range c.Routes {
			if i.Address.Contains(mustAddr(r.Gateway)) {
				fmt.Fprintf(&b, "    up ip route add %s via %s dev %s\n", r.Destination.Masked(), r.Gateway, i.Name())
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func mustAddr(s string) netip.Addr {
	a, _ := netip.ParseAddr(s)
	return a
}

func netmask(bits int) string {
	m := uint32(0xffffffff) << (32 - bits)
	if bits == 0 {
		m = 0
	}
	return fmt.Sprintf("%d.%d.%d.%d", m>>24, m>>16&0xff, m>>8&0xff, m&0xff)
}

// Netplan is the same sub-interfaces for netplan. The ports they sit on are declared without
// settings so the file stands alone; netplan merges them with the host's own definitions.
func Netplan(c Config) ([]byte, error) {
	ethernets := map[string]any{}
	bonds := map[string]any{}
	vlans := map[string]any{}
	for _, i := range c.Interfaces {
		if strings.HasPrefix(i.Port, "bond") {
			bonds[i.Port] = map[string]any{"interfaces": []string{"eth0", "eth1"}}
			ethernets["eth0"], ethernets["eth1"] = map[string]any{}, map[string]any{}
		} else {
			ethernets[i.Port] = map[string]any{}
		}
		v := map[string]any{"id": i.VLAN, "link": i.Port, "addresses": []string{i.Address.String()}}
		var routes []any
		if i.Gateway != "" {
			routes = append(routes, map[string]any{"to": "default", "via": i.Gateway})
		}
		for _, r := range c.Routes {
			if i.Address.Contains(mustAddr(r.Gateway)) {
				routes = append(routes, map[string]any{"to": r.Destination.Masked().String(), "via": r.Gateway})
			}
		}
		if len(routes) > 0 {
			v["routes"] = routes
		}
		vlans[i.Name()] = v
	}
	network := map[string]any{"version": 2, "ethernets": ethernets, "vlans": vlans}
	if len(bonds) > 0 {
		network["bonds"] = bonds
	}
	return yamlout.Marshal(map[string]any{"network": network})
}

// UserData merges the machine's VLAN configuration into the bootstrap provider's cloud-config:
// every key of the bootstrap is kept; write_files gets the configuration's files and runcmd
// starts with the configuration script. A bootstrap that is not a cloud-config is refused.
func UserData(bootstrap []byte, c Config) ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	cfg := map[string]any{}
	if len(bytes.TrimSpace(bootstrap)) > 0 {
		if !bytes.HasPrefix(bootstrap, []byte("#cloud-config")) {
			return nil, fmt.Errorf("the bootstrap user-data is not a #cloud-config (it starts %q); only a cloud-config can be merged", firstLine(bootstrap))
		}
		if err := yaml.Unmarshal(bootstrap, &cfg); err != nil {
			return nil, fmt.Errorf("the bootstrap cloud-config is not YAML: %w", err)
		}
	}
	plan, err := Netplan(c)
	if err != nil {
		return nil, err
	}
	files := []any{
		map[string]any{"path": ModulesFile, "permissions": "0644", "content": "8021q\n"},
		map[string]any{"path": InterfacesFile, "permissions": "0644", "content": Interfaces(c)},
		map[string]any{"path": NetplanFile, "permissions": "0600", "content": string(plan)},
		map[string]any{"path": ScriptFile, "permissions": "0755", "content": script(c)},
	}
	existing, _ := cfg["write_files"].([]any)
	cfg["write_files"] = append(existing, files...)
	runcmd, _ := cfg["runcmd"].([]any)
	cfg["runcmd"] = append([]any{[]any{ScriptFile}}, runcmd...)
	out, err := yamlout.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return append([]byte("#cloud-config\n"), out...), nil
}

func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if len(line) > 40 {
		line = line[:40]
	}
	return string(line)
}

// script configures the sub-interfaces on the host and reports the outcome, as the seed's
// final_configuration.sh does, without installing packages (python3 reads the metadata).
//
// Unlike the seed's, a failing `modprobe 8021q` does not stop it: the module may be built into
// the kernel (or already loaded), and whether the VLANs came up is what the address checks at
// the end decide and report (1002). The interfaces are brought up one by one (netplan apply, or
// ifup of each sub-interface) rather than by restarting networking, which would bounce the
// host's layer 3 bond too.
func script(c Config) string {
	meta := c.MetadataURL
	if meta == "" {
		meta = DefaultMetadataURL
	}
	checks := make([]string, 0, len(c.Interfaces))
	names := make([]string, 0, len(c.Interfaces))
	for _, i := range c.Interfaces {
		checks = append(checks, fmt.Sprintf("%s %s", i.Name(), i.Address.Addr()))
		names = append(names, i.Name())
	}
	sort.Strings(checks)
	//nolint:dupword // shell: two nested loops end with done, done
	return fmt.Sprintf(`#!/bin/sh
# Written by metalwire: the VLAN sub-interfaces of this machine.
set -u
META="${METALWIRE_METADATA_URL:-%s}"
ROOT="${METALWIRE_ROOT:-}"
meta="$(curl -sf "$META" || true)"
field() { printf '%%s' "$meta" | python3 -c "import json,sys
try: d=json.load(sys.stdin)
except Exception: d={}
$1" 2>/dev/null; }
url="$(field 'print(d.get("user_state_url",""))')"
state() {
  echo "metalwire: $1 $2 $3"
  [ -n "$url" ] || return 0
  curl -sf -X POST -H 'Content-Type: application/json' \
    -d "{\"state\": \"$1\", \"code\": $2, \"message\": \"$3\"}" "$url" >/dev/null || echo "metalwire: could not post the user state" >&2
}
state running 1000 "Configuring Network"
modprobe 8021q 2>/dev/null || echo "metalwire: modprobe 8021q failed (built into the kernel, or missing: the checks below tell)" >&2
checks='%s'
names='%s'
# The seed's port names are the metadata's; find this host's interface of each by its MAC.
rename=""
for name in eth0 eth1; do
  mac="$(field "print(next((i.get('mac','') for i in d.get('network',{}).get('interfaces',[]) if i.get('name')=='$name'),''))")"
  [ -n "$mac" ] || continue
  for dev in "$ROOT"/sys/class/net/*; do
    if [ "$(cat "$dev/address" 2>/dev/null)" = "$mac" ] && [ "${dev##*/}" != "$name" ]; then
      rename="$rename s/\b$name\b/${dev##*/}/g;"
      echo "metalwire: $name is ${dev##*/} on this host"
    fi
  done
done
if [ -n "$rename" ]; then
  sed -i "$rename" "$ROOT%s" "$ROOT%s"
  checks="$(printf '%%s\n' "$checks" | sed "$rename")"
  names="$(printf '%%s\n' "$names" | sed "$rename")"
fi
if command -v netplan >/dev/null 2>&1 && [ -d "$ROOT/etc/netplan" ]; then
  cp "$ROOT%s" "$ROOT/etc/netplan/" && netplan apply
else
  # The seed appends its stanzas to /etc/network/interfaces; once, so a second run adds nothing.
  first="${names%%%% *}"
  grep -q "^iface $first " "$ROOT/etc/network/interfaces" 2>/dev/null || { echo; cat "$ROOT%s"; } >>"$ROOT/etc/network/interfaces"
  for dev in $names; do ifup "$dev" || echo "metalwire: ifup $dev failed" >&2; done
fi
failed=""
while read -r dev addr; do
  [ -n "$dev" ] || continue
  if ip -o addr show dev "$dev" 2>/dev/null | grep -q " $addr/"; then
    echo "metalwire: $dev has $addr"
  else
    echo "metalwire: $dev lacks $addr" >&2
    failed="$failed $dev"
  fi
done <<CHECKS
$checks
CHECKS
if [ -n "$failed" ]; then
  state failed 1002 "Network configuration failed:$failed"
  exit 1
fi
state succeeded 1001 "Network configuration successful"
`, meta, strings.Join(checks, "\n"), strings.Join(names, " "), InterfacesFile, NetplanFile, NetplanFile, InterfacesFile)
}
