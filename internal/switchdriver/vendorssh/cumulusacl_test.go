package vendorssh_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// cumulusACL is a list NVUE can keep: ingress rules of every kind (ssh denied, all IPv6 to
// 2001:db8::/32 allowed, ICMP allowed, udp 1000-2000 denied, all to 10.0.0.0/8 denied), egress
// rules with an IPv4 remote and one port (https from 192.168.0.0/16 denied, all from 10.0.0.0/8
// allowed), the default allow.
func cumulusACL(port string) fabric.ACL {
	a := ingressACL(port)
	a.Rules = slices.Insert(slices.Clone(a.Rules), 3, fabric.ACLRule{Direction: fabric.DirectionIngress, Protocol: "udp:1000-2000", Action: fabric.ActionDeny})
	a.Rules = append(a.Rules,
		fabric.ACLRule{Direction: fabric.DirectionEgress, Protocol: "https", Action: fabric.ActionDeny, Remote: "192.168.0.0/16"},
		fabric.ACLRule{Direction: fabric.DirectionEgress, Protocol: "all", Action: fabric.ActionAllow, Remote: "10.0.0.0/8"})
	return a
}

// cumulusShown are cumulusACL's three NVUE lists as the switch keeps them (entry 0 the type,
// then each rule's key=value words by rule id).
var cumulusShown = map[string]map[int]string{
	"-in": {0: "type ipv4", 10: "action=deny dest-port=22 l4=tcp protocol=tcp", 30: "action=permit protocol=icmp",
		40: "action=deny dest-port=1000:2000 l4=udp protocol=udp", 50: "action=deny dest-ip=10.0.0.0/8"},
	"-in6": {0: "type ipv6", 10: "action=deny dest-port=22 l4=tcp protocol=tcp", 20: "action=permit dest-ip=2001:db8::/32",
		30: "action=permit protocol=icmpv6", 40: "action=deny dest-port=1000:2000 l4=udp protocol=udp"},
	"-out": {0: "type ipv4", 60: "action=deny dest-port=443 l4=tcp protocol=tcp source-ip=192.168.0.0/16",
		70: "action=permit source-ip=10.0.0.0/8"},
}

// NVUE keeps a list whose egress rules each have an IPv4 remote and one port and whose default
// is allow: end to end in the batch's revision (three lists, NAME-in and NAME-in6 bound inbound,
// NAME-out outbound; read back as asked, so a second pass sends nothing; a hand edit and a
// changed rule rewrite them; a bond's list binds to the bond; a revision NVUE refuses fails the
// batch with its words; the host leaving removes them), and a list it cannot keep (an egress
// rule without IPv4 remote, a deny default, an allow-all rule) is refused before anything is
// sent, naming cumulus and the fix.
func TestCumulusACLEndToEnd(t *testing.T) {
	t.Parallel()
	v := vendors()["cumulus"]
	extra := lagExtra["cumulus"]
	srv := vendortest.Start(t, "cumulus", v.ports[0], v.ports[1], v.ports[2], extra[0], extra[1])
	acl := cumulusACL(v.ports[0])
	want := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}}, ACLs: map[string]fabric.ACL{acl.Name: acl},
		Ports: map[string]fabric.Port{v.ports[0]: {Name: v.ports[0], Mode: fabric.ModeAccess, VLAN: 1001}}}

	noIPv4 := acl
	noIPv4.Rules = append(slices.Clone(acl.Rules), fabric.ACLRule{Direction: fabric.DirectionEgress, Protocol: "ssh", Action: fabric.ActionDeny})
	egressRange := hostACL(v.ports[0]) // its egress rule is on ports 1000-2000
	deny := func() fabric.ACL { a := acl; a.DefaultDeny = true; return a }()
	allowAll := func() fabric.ACL {
		a := acl
		a.Rules = append([]fabric.ACLRule{{Direction: fabric.DirectionIngress, Protocol: "all", Action: fabric.ActionAllow}}, a.Rules...)
		return a
	}()
	for bad, words := range map[*fabric.ACL]string{
		&noIPv4:      "acl[7] is an egress rule without an IPv4 remote, but networkOS cumulus",
		&egressRange: "is an egress rule on ports 1000-2000, but networkOS cumulus takes port ranges on ingress rules only",
		&deny:        "aclDefault deny would close IPv6 egress too, but networkOS cumulus",
		&allowAll:    "acl[0] allows all traffic, but networkOS cumulus would ignore it",
	} {
		err := applyErr(v.set, srv, fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}}, {Op: fabric.OpEnsureACL, ACL: *bad}})
		if !errors.Is(err, fabric.ErrUnsupported) || !strings.Contains(err.Error(), words) {
			t.Fatalf("a list NVUE cannot keep: %v, want ErrUnsupported saying %q", err, words)
		}
		t.Logf("as a user sees it: %v", err)
		if got := srv.Commands(); len(got) != 0 {
			t.Fatalf("sent %q, want nothing", got)
		}
	}

	srv.FailOn("match ip protocol icmp")
	_, err := aclPass(t, v.set, srv, want, fabric.Record{})
	var cmdErr *sshcli.CommandError
	if !errors.As(err, &cmdErr) || !strings.Contains(cmdErr.Command, "match ip protocol icmp") {
		t.Fatalf("refused line: %v, want a CommandError naming it", err)
	}
	t.Logf("as a user sees it: %v", err)
	if got, _ := srv.Config.ACL(acl.Name + "-in"); len(got.Entries) != 0 {
		t.Fatalf("a failed batch applied list -in: %v", got.Entries)
	}
	if _, err := aclPass(t, v.set, srv, want, fabric.Record{}); err != nil {
		t.Fatalf("pass after the refused line: %v", err)
	}
	srv.Commands()
	fresh := vendortest.Start(t, "cumulus", v.ports[0], v.ports[1], v.ports[2])
	if _, err := aclPass(t, v.set, fresh, want, fabric.Record{}); err != nil {
		t.Fatalf("first pass on a fresh switch: %v", err)
	}
	golden(t, "cumulus/ensure-acl.golden", fresh.Commands())
	for suffix, shown := range cumulusShown {
		if got, _ := srv.Config.ACL(acl.Name + suffix); !maps.Equal(got.Entries, shown) {
			t.Errorf("list %s%s:\n%v\nwant\n%v", acl.Name, suffix, got.Entries, shown)
		}
	}
	wantBind := []string{acl.Name + "-in inbound", acl.Name + "-in6 inbound", acl.Name + "-out outbound"}
	if p, _ := srv.Config.Port(v.ports[0]); !slices.Equal(p.AccessGroups, wantBind) {
		t.Errorf("port %s binds %q, want %q", v.ports[0], p.AccessGroups, wantBind)
	}

	have, err := aclPass(t, v.set, srv, want, fabric.RecordOf(want))
	if err != nil {
		t.Fatalf("second pass: %v", err)
	}
	if got := srv.Commands(); len(got) != 0 {
		t.Fatalf("second pass sent %q, want nothing", got)
	}
	if !fabric.SameACL(acl, have.ACLs[acl.Name]) {
		t.Errorf("list reads back %+v, want %+v", have.ACLs[acl.Name], acl)
	}

	srv.Config.SetACLEntry(acl.Name+"-in", 30, "action=permit protocol=tcp")
	if _, err := aclPass(t, v.set, srv, want, fabric.RecordOf(want)); err != nil {
		t.Fatalf("pass after the hand edit: %v", err)
	}
	if got, _ := srv.Config.ACL(acl.Name + "-in"); !maps.Equal(got.Entries, cumulusShown["-in"]) {
		t.Errorf("list -in after the pass that repairs a hand edit:\n%v", got.Entries)
	}
	srv.Commands()

	changed := acl
	changed.Rules = changed.Rules[:len(changed.Rules)-1]
	want.ACLs[acl.Name] = changed
	if _, err := aclPass(t, v.set, srv, want, fabric.RecordOf(want)); err != nil {
		t.Fatalf("changing the list: %v", err)
	}
	golden(t, "cumulus/change-acl.golden", srv.Commands())
	if have, _ = aclPass(t, v.set, srv, want, fabric.RecordOf(want)); !fabric.SameACL(changed, have.ACLs[acl.Name]) || len(srv.Commands()) != 0 {
		t.Errorf("changed list reads back %+v, want %+v and nothing sent", have.ACLs[acl.Name], changed)
	}

	_, bonded, _ := bondListPass(t, v.set, srv, want, changed, []string{extra[0], extra[1]}, ingressACL)

	if _, err := aclPass(t, v.set, srv, fabric.State{}, fabric.RecordOf(bonded)); err != nil {
		t.Fatalf("leaving: %v", err)
	}
	golden(t, "cumulus/remove-acl.golden", srv.Commands())
	if names := srv.Config.ACLNames(); len(names) != 0 {
		t.Errorf("lists left after leaving: %q", names)
	}
	for _, p := range []string{v.ports[0], extra[0], extra[1]} {
		if got, _ := srv.Config.Port(p); len(got.AccessGroups) != 0 {
			t.Errorf("port %s still binds %q", p, got.AccessGroups)
		}
	}
}

// nvExec runs one command on the emulated NVUE switch over an exec channel: its output, and
// whether it exited 0.
func nvExec(t *testing.T, srv *vendortest.Server, cmd string) (string, bool) {
	t.Helper()
	c, err := ssh.Dial("tcp", fmt.Sprintf("%s:%d", srv.Host, srv.Port), &ssh.ClientConfig{User: srv.User,
		Auth: []ssh.AuthMethod{ssh.Password(srv.Password)}, HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := sess.CombinedOutput(cmd)
	return string(out), err == nil
}

// The emulated NVUE applies what Spectrum takes and refuses, at "nv config apply", the lists
// the fit keeps away from it (an IPv6 list outbound, a port range outbound, a rule without
// action, a binding of a list that does not exist), so a driver that sent one would fail here
// as on a switch.
func TestCumulusACLCheckedAtApply(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lines []string
		want  string
	}{
		{[]string{"nv set acl x type ipv6", "nv set acl x rule 10 action deny", "nv set interface swp1 acl x outbound"},
			"ipv6 acls are not supported in the outbound direction"},
		{[]string{"nv set acl x type ipv4", "nv set acl x rule 10 match ip protocol udp", "nv set acl x rule 10 match ip udp dest-port 1000:2000",
			"nv set acl x rule 10 action deny", "nv set interface swp1 acl x outbound"}, "port ranges are not supported in the outbound direction"},
		{[]string{"nv set acl x type ipv4", "nv set acl x rule 10 match ip protocol tcp"}, "acl x rule 10: action is required"},
		{[]string{"nv set acl x type ipv4", "nv set acl x rule 10 match ip dest-ip 2001:db8::/32", "nv set acl x rule 10 action deny"},
			"does not match the acl type"},
		{[]string{"nv set interface swp1 acl y inbound"}, "acl y does not exist"},
		// What the driver writes: taken.
		{[]string{"nv set acl x type ipv4", "nv set acl x rule 10 match ip protocol udp", "nv set acl x rule 10 match ip udp dest-port 1000:2000",
			"nv set acl x rule 10 action deny", "nv set interface swp1 acl x inbound"}, ""},
	} {
		srv := vendortest.Start(t, "cumulus", "swp1")
		for _, l := range c.lines {
			if out, ok := nvExec(t, srv, l); !ok {
				t.Fatalf("%s: %s", l, out)
			}
		}
		out, ok := nvExec(t, srv, "nv config apply -y")
		if ok != (c.want == "") || !strings.Contains(out, c.want) {
			t.Errorf("%q then apply: %q (ok %v), want %q", c.lines, out, ok, c.want)
		}
		if _, bound := srv.Config.ACL("x"); bound != (c.want == "") {
			t.Errorf("%q: applied %v, want %v", c.lines, bound, c.want == "")
		}
	}
	srv := vendortest.Start(t, "cumulus", "swp1")
	if out, ok := nvExec(t, srv, "nv set acl x rule 10 match ip tcp dest-port 0"); ok || !strings.Contains(out, "is not a valid port") {
		t.Errorf("port 0: %q (ok %v), want refused", out, ok)
	}
}
