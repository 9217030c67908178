package fabric

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/metalwire/metalwire/internal/testneeds"
)

func TestParseProtocol(t *testing.T) {
	good := map[string]Protocol{
		"all": {Name: "all"}, "icmp": {Name: "icmp"},
		"ssh": {Name: "tcp", FirstPort: 22, LastPort: 22}, "https": {Name: "tcp", FirstPort: 443, LastPort: 443},
		"udp:53": {Name: "udp", FirstPort: 53, LastPort: 53}, "tcp:8000-8080": {Name: "tcp", FirstPort: 8000, LastPort: 8080},
		"tcp:1-65535": {Name: "tcp", FirstPort: 1, LastPort: 65535},
	}
	for in, want := range good {
		if got, err := ParseProtocol(in); err != nil || got != want {
			t.Errorf("ParseProtocol(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"SSH": "use all, icmp", "sctp:5": "use all, icmp", "tcp": "use all, icmp", "tcp:0": "from 1 to 65535",
		"tcp:65536": "from 1 to 65535", "udp:x": "from 1 to 65535", "tcp:90-80": "write the lower port first",
	}
	for in, want := range bad {
		if _, err := ParseProtocol(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseProtocol(%q) error %v, want one saying %q", in, err, want)
		}
	}
}

// PortMasks covers exactly the range: every port in it matches one mask, none outside does.
func TestPortMasks(t *testing.T) {
	for _, r := range [][2]uint16{{22, 22}, {8000, 8080}, {1, 65535}, {1024, 65535}, {0, 65535}, {5, 6}, {65535, 65535}} {
		masks := PortMasks(r[0], r[1])
		for p := 0; p <= 65535; p++ {
			n := 0
			for _, m := range masks {
				if uint16(p)&m.Mask == m.Value {
					n++
				}
			}
			in := p >= int(r[0]) && p <= int(r[1])
			if (in && n != 1) || (!in && n != 0) {
				t.Fatalf("range %v, masks %v: port %d matched %d times", r, masks, p, n)
			}
		}
	}
	if n := len(PortMasks(1024, 65535)); n != 6 {
		t.Errorf("1024-65535 in %d masks, want 6", n)
	}
}

func TestACLCookie(t *testing.T) {
	a, b := ACLCookie("host-1", "storage"), ACLCookie("host-1", "control")
	if a == b || a&CookiePrefixMask != CookiePrefix || b&CookiePrefixMask != CookiePrefix {
		t.Fatalf("cookies %#x %#x: want distinct, both with prefix %#x", a, b, CookiePrefix)
	}
	if ACLCookie("host-1", "storage") != a {
		t.Fatal("the cookie of a host's network must be stable")
	}
	if ACLCookie("host-1s", "torage") == a {
		t.Fatal("names must not run together")
	}
}

func TestACLFlows(t *testing.T) {
	acl := PortACL{
		Port: "p-h1", HostMACs: []string{"AA:00:00:00:00:01"}, Cookie: 0x6d77000000000001,
		Rules: []ACLRule{
			{Direction: "ingress", Protocol: "ssh", Action: "deny"},
			{Direction: "egress", Protocol: "tcp:8000-8001", Action: "allow", Remote: "10.0.0.0/8"},
			{Direction: "ingress", Protocol: "all", Action: "allow"},
		},
		DefaultDeny: true,
	}
	flows, err := ACLFlows(acl)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range flows {
		got = append(got, f.OfctlSpec())
	}
	want := []string{
		`cookie=0x6d77000000000001,priority=30000,in_port="p-h1",tcp,tp_dst=0x16/0xffff,actions=drop`,
		`cookie=0x6d77000000000001,priority=30000,in_port="p-h1",tcp6,tp_dst=0x16/0xffff,actions=drop`,
		`cookie=0x6d77000000000001,priority=29999,dl_dst=aa:00:00:00:00:01,tcp,nw_src=10.0.0.0/8,tp_dst=0x1f40/0xfffe,actions=NORMAL`,
		`cookie=0x6d77000000000001,priority=29998,in_port="p-h1",actions=NORMAL`,
		`cookie=0x6d77000000000001,priority=29997,in_port="p-h1",actions=drop`,
		`cookie=0x6d77000000000001,priority=29997,dl_dst=aa:00:00:00:00:01,actions=drop`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("flows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Open vSwitch's own parser reads every flow (a port name is resolved only by a running
	// switch, so it reads port 1 here).
	if _, err := exec.LookPath("ovs-ofctl"); err != nil {
		testneeds.Missing(t, "ovs-ofctl (Debian package openvswitch-common; make test-deps installs it)")
		return
	}
	for _, spec := range got {
		spec = strings.ReplaceAll(spec, `in_port="p-h1"`, "in_port=1")
		if out, err := exec.Command("ovs-ofctl", "parse-flow", spec).CombinedOutput(); err != nil {
			t.Errorf("ovs-ofctl refuses %s: %v\n%s", spec, err, out)
		}
	}

	for _, bad := range []struct {
		rule ACLRule
		want string
	}{
		{ACLRule{Direction: "in", Protocol: "all", Action: "deny"}, `acl[0]: direction "in": use ingress or egress`},
		{ACLRule{Direction: "ingress", Protocol: "all", Action: "block"}, `acl[0]: action "block": use allow or deny`},
		{ACLRule{Direction: "ingress", Protocol: "all", Action: "deny", Remote: "10.0.0.1"}, `acl[0]: remote "10.0.0.1": not a CIDR`},
	} {
		if _, err := ACLFlows(PortACL{Port: "p", Rules: []ACLRule{bad.rule}}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("rule %+v: error %v, want %q", bad.rule, err, bad.want)
		}
	}
}

// Two lists are the same when their rules mean the same: a switch that keeps no remarks reads a
// rule back in its own words (tcp:22 for ssh, the network's address of a remote) and no host
// MACs; a real difference in any field still tells them apart.
func TestSameACL(t *testing.T) {
	base := ACL{Name: "acl1", Port: "swp1", HostMACs: []string{"52:54:00:00:00:0A"}, DefaultDeny: true,
		Rules: []ACLRule{
			{Direction: DirectionIngress, Protocol: "ssh", Action: ActionDeny},
			{Direction: DirectionEgress, Protocol: "tcp:1000-2000", Action: ActionAllow, Remote: "10.0.0.0/8"},
			{Direction: DirectionIngress, Protocol: "all", Action: ActionAllow, Remote: "2001:db8::/32"},
		}}
	with := func(edit func(a *ACL)) ACL {
		a := base
		a.Rules = slices.Clone(base.Rules)
		a.HostMACs = slices.Clone(base.HostMACs)
		edit(&a)
		return a
	}
	same := map[string]ACL{
		"itself":                  base,
		"ssh read back as tcp:22": with(func(a *ACL) { a.Rules[0].Protocol = "tcp:22" }),
		"ssh as tcp:22-22":        with(func(a *ACL) { a.Rules[0].Protocol = "tcp:22-22" }),
		"remote with host bits":   with(func(a *ACL) { a.Rules[1].Remote = "10.1.2.3/8" }),
		"no host MACs read back":  with(func(a *ACL) { a.HostMACs = nil }),
		"MACs in another case":    with(func(a *ACL) { a.HostMACs = []string{"52:54:00:00:00:0a"} }),
		"IPv6 remote spelled out": with(func(a *ACL) { a.Rules[2].Remote = "2001:0db8:0::/32" }),
	}
	for name, have := range same {
		if !SameACL(base, have) {
			t.Errorf("%s: SameACL = false, want true", name)
		}
	}
	differ := map[string]ACL{
		"other name":          with(func(a *ACL) { a.Name = "acl2" }),
		"other port":          with(func(a *ACL) { a.Port = "swp2" }),
		"other VLAN":          with(func(a *ACL) { a.VLAN = 5 }),
		"other default":       with(func(a *ACL) { a.DefaultDeny = false }),
		"other host MAC":      with(func(a *ACL) { a.HostMACs = []string{"52:54:00:00:00:0b"} }),
		"other port number":   with(func(a *ACL) { a.Rules[0].Protocol = "tcp:23" }),
		"udp, not tcp":        with(func(a *ACL) { a.Rules[0].Protocol = "udp:22" }),
		"other range":         with(func(a *ACL) { a.Rules[1].Protocol = "tcp:1000-2001" }),
		"other action":        with(func(a *ACL) { a.Rules[0].Action = ActionAllow }),
		"other direction":     with(func(a *ACL) { a.Rules[0].Direction = DirectionEgress }),
		"other remote":        with(func(a *ACL) { a.Rules[1].Remote = "10.0.0.0/16" }),
		"remote dropped":      with(func(a *ACL) { a.Rules[1].Remote = "" }),
		"a rule missing":      with(func(a *ACL) { a.Rules = a.Rules[1:] }),
		"rules reordered":     with(func(a *ACL) { a.Rules[0], a.Rules[2] = a.Rules[2], a.Rules[0] }),
		"unparsed protocol":   with(func(a *ACL) { a.Rules[0].Protocol = "drifted" }),
		"a bond, not a port":  with(func(a *ACL) { a.Members = []string{"swp1", "swp2"} }),
		"as flows, not rules": {Name: "acl1", Flows: []Flow{{Cookie: 1, InPort: "swp1"}}},
	}
	for name, have := range differ {
		if SameACL(base, have) {
			t.Errorf("%s: SameACL = true, want false", name)
		}
	}
}
