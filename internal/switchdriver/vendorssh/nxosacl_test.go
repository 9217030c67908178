package vendorssh_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/metalwire/metalwire/internal/switchdriver/sshcli"
	"github.com/metalwire/metalwire/internal/switchtest/vendortest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// ingressACL is a list NX-OS can keep: ingress rules only (ssh denied, all IPv6 to
// 2001:db8::/32 allowed, ICMP allowed, all to 10.0.0.0/8 denied), the default allow.
func ingressACL(port string) fabric.ACL {
	return fabric.ACL{Name: fabric.ACLName("host-a", "control"), Port: port, HostMACs: []string{"52:54:00:00:00:0A"},
		Rules: []fabric.ACLRule{
			{Direction: fabric.DirectionIngress, Protocol: "ssh", Action: fabric.ActionDeny},
			{Direction: fabric.DirectionIngress, Protocol: "all", Action: fabric.ActionAllow, Remote: "2001:db8::/32"},
			{Direction: fabric.DirectionIngress, Protocol: "icmp", Action: fabric.ActionAllow},
			{Direction: fabric.DirectionIngress, Protocol: "all", Action: fabric.ActionDeny, Remote: "10.0.0.0/8"},
		}}
}

// nxosShown are ingressACL's two lists as the switch keeps them.
var nxosShown = map[string][]string{
	"-in": {"remark metalwire macs 52:54:00:00:00:0a", "remark metalwire rule 1 deny ssh", "deny tcp " + anyAny + " eq 22",
		"remark metalwire rule 3 allow icmp", "permit icmp " + anyAny, "remark metalwire rule 4 deny all 10.0.0.0/8", "deny ip any 10.0.0.0/8",
		"remark metalwire default allow", "permit ip " + anyAny},
	"-in6": {"remark metalwire rule 1 deny ssh", "deny tcp " + anyAny + " eq 22", "remark metalwire rule 2 allow all 2001:db8::/32",
		"permit ipv6 any 2001:db8::/32", "remark metalwire rule 3 allow icmp", "permit icmp " + anyAny,
		"remark metalwire default allow", "permit ipv6 " + anyAny},
}

// NX-OS port lists filter inbound only: a list of ingress rules with the default allow is kept
// end to end (two lists, IPv4 and IPv6, bound "ip port access-group" and "ipv6 port
// traffic-filter" in; read back as asked, so a second pass sends nothing; a hand edit and a
// changed rule rewrite them; a bond's list binds to its port-channel; a refused entry fails the
// batch with NX-OS' words; the host leaving removes them), and a list with an egress rule or a
// deny default is refused before anything is sent, naming NX-OS and the fix.
func TestNXOSACLEndToEnd(t *testing.T) {
	t.Parallel()
	v := vendors()["nxos"]
	extra := lagExtra["nxos"]
	srv := vendortest.Start(t, "nxos", v.ports[0], v.ports[1], v.ports[2], extra[0], extra[1])
	acl := ingressACL(v.ports[0])
	want := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}}, ACLs: map[string]fabric.ACL{acl.Name: acl},
		Ports: map[string]fabric.Port{v.ports[0]: {Name: v.ports[0], Mode: fabric.ModeAccess, VLAN: 1001}}}

	for _, bad := range []fabric.ACL{hostACL(v.ports[0]), func() fabric.ACL { a := acl; a.DefaultDeny = true; return a }()} {
		err := applyErr(v.set, srv, fabric.Batch{{Op: fabric.OpEnsureVLAN, VLAN: fabric.VLAN{ID: 1001}}, {Op: fabric.OpEnsureACL, ACL: bad}})
		if !errors.Is(err, fabric.ErrUnsupported) || !strings.Contains(err.Error(), "networkOS nxos filters ingress only") {
			t.Fatalf("a list NX-OS cannot keep: %v, want ErrUnsupported saying it filters ingress only", err)
		}
		t.Logf("as a user sees it: %v", err)
		if got := srv.Commands(); len(got) != 0 {
			t.Fatalf("sent %q, want nothing", got)
		}
	}

	srv.FailOn("permit icmp")
	_, err := aclPass(t, v.set, srv, want, fabric.Record{})
	var cmdErr *sshcli.CommandError
	if !errors.As(err, &cmdErr) || !strings.Contains(cmdErr.Command, "permit icmp") {
		t.Fatalf("refused entry: %v, want a CommandError naming it", err)
	}
	t.Logf("as a user sees it: %v", err)
	if _, err := aclPass(t, v.set, srv, want, fabric.Record{}); err != nil {
		t.Fatalf("pass after the refused entry: %v", err)
	}
	srv.Commands()
	fresh := vendortest.Start(t, "nxos", v.ports[0], v.ports[1], v.ports[2])
	if _, err := aclPass(t, v.set, fresh, want, fabric.Record{}); err != nil {
		t.Fatalf("first pass on a fresh switch: %v", err)
	}
	golden(t, "nxos/ensure-acl.golden", fresh.Commands())
	for suffix, shown := range nxosShown {
		if got := entries(srv, acl.Name+suffix); !slices.Equal(got, shown) {
			t.Errorf("list %s%s:\n%q\nwant\n%q", acl.Name, suffix, got, shown)
		}
	}
	wantBind := []string{"ip port access-group " + acl.Name + "-in in", "ipv6 port traffic-filter " + acl.Name + "-in6 in"}
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

	srv.Config.SetACLEntry(acl.Name+"-in", 15, "permit tcp "+anyAny+" eq 22")
	if _, err := aclPass(t, v.set, srv, want, fabric.RecordOf(want)); err != nil {
		t.Fatalf("pass after the hand edit: %v", err)
	}
	if got := entries(srv, acl.Name+"-in"); !slices.Equal(got, nxosShown["-in"]) {
		t.Errorf("list -in after the pass that repairs a hand edit:\n%q", got)
	}
	srv.Commands()

	changed := acl
	changed.Rules = changed.Rules[1:]
	want.ACLs[acl.Name] = changed
	if _, err := aclPass(t, v.set, srv, want, fabric.RecordOf(want)); err != nil {
		t.Fatalf("changing the list: %v", err)
	}
	golden(t, "nxos/change-acl.golden", srv.Commands())
	if have, _ = aclPass(t, v.set, srv, want, fabric.RecordOf(want)); !fabric.SameACL(changed, have.ACLs[acl.Name]) || len(srv.Commands()) != 0 {
		t.Errorf("changed list reads back %+v, want %+v and nothing sent", have.ACLs[acl.Name], changed)
	}

	_, bonded, _ := bondListPass(t, v.set, srv, want, changed, []string{extra[0], extra[1]}, ingressACL)

	if _, err := aclPass(t, v.set, srv, fabric.State{}, fabric.RecordOf(bonded)); err != nil {
		t.Fatalf("leaving: %v", err)
	}
	golden(t, "nxos/remove-acl.golden", srv.Commands())
	if left := srv.Config.ACLNames(); len(left) != 0 {
		t.Errorf("lists left on the switch: %v", left)
	}
	for _, n := range srv.Config.PortNames() {
		if p, _ := srv.Config.Port(n); len(p.AccessGroups) != 0 {
			t.Errorf("interface %s still binds %q", n, p.AccessGroups)
		}
	}
}
