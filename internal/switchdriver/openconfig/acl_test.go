package openconfig_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/metadata"

	"github.com/metalwire/metalwire/internal/switchdriver/openconfig"
	"github.com/metalwire/metalwire/internal/switchtest/gnmitest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// aclPass is one reconcile as the fabric controller runs it, lists included: read what the
// fabric names (ports and lists), diff, apply; it returns what was read.
func aclPass(t *testing.T, tg *gnmitest.Target, want fabric.State, rec fabric.Record) (fabric.State, error) {
	t.Helper()
	ctx := context.Background()
	sess, err := openconfig.New().Connect(ctx, endpoint(tg))
	if err != nil {
		return fabric.State{}, err
	}
	defer func() { _ = sess.Close() }()
	names := slices.Concat([]string{"Ethernet1", "Ethernet2", "Ethernet3"}, rec.ACLs, slices.Collect(maps.Keys(want.ACLs)))
	have, err := sess.Read(ctx, slices.Compact(slices.Sorted(slices.Values(names))))
	if err != nil {
		return fabric.State{}, err
	}
	return have, sess.Apply(ctx, fabric.Diff(want, have, rec, 1))
}

// hostList: ssh denied into the switch, a TCP range from 10.0.0.0/8 allowed to the host, all
// IPv6 to 2001:db8::/32 allowed, ICMP allowed to the host; everything else denied.
func hostList(port string) fabric.ACL {
	return fabric.ACL{Name: fabric.ACLName("host-a", "control"), Port: port, HostMACs: []string{"52:54:00:00:00:0a"},
		Rules: []fabric.ACLRule{
			{Direction: fabric.DirectionIngress, Protocol: "ssh", Action: fabric.ActionDeny},
			{Direction: fabric.DirectionEgress, Protocol: "tcp:1000-2000", Action: fabric.ActionAllow, Remote: "10.0.0.0/8"},
			{Direction: fabric.DirectionIngress, Protocol: "all", Action: fabric.ActionAllow, Remote: "2001:db8::/32"},
			{Direction: fabric.DirectionEgress, Protocol: "icmp", Action: fabric.ActionAllow},
		},
		DefaultDeny: true}
}

// entryLeaf is a leaf of an entry of one of a list's sets on the target ("" when unset).
func entryLeaf(tg *gnmitest.Target, set, typ, seq, leaf string) string {
	return tg.Leaf("/acl/acl-sets/acl-set[name=" + set + "][type=" + typ + "]/acl-entries/acl-entry[sequence-id=" + seq + "]/" + leaf)
}

// bound is the set a port binds, ingress or egress, by name and type ("" when not bound).
func bound(tg *gnmitest.Target, port, way, set, typ string) string {
	return tg.Leaf("/acl/interfaces/interface[id=" + port + "]/" + way + "-acl-sets/" + way + "-acl-set[set-name=" + set + "][type=" + typ + "]/config/set-name")
}

// operatorSet sends a Set to the target as someone other than metalwire would.
func operatorSet(t *testing.T, tg *gnmitest.Target, req *gnmi.SetRequest) {
	t.Helper()
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("username", tg.Username, "password", tg.Password))
	if _, err := tg.Set(ctx, req); err != nil {
		t.Fatalf("operator's Set: %v", err)
	}
}

// A host's access list through openconfig-acl on a target that checks every Set against the
// schema: four acl-sets (IPv4 and IPv6, in and out) with an entry per rule and the default,
// bound to the port, in the batch's one Set; read back as asked, so a second pass sends none; an
// entry added by someone else and a changed rule rewrite the sets; the host leaving unbinds and
// removes them.
func TestACLSetGetRoundTrip(t *testing.T) {
	if !openconfig.New().SetsACLs() || fabric.OSesWithoutACLs[openconfig.NetworkOS] != "" || fabric.OSesWithoutTrunkACLs[openconfig.NetworkOS] == "" {
		t.Fatalf("the gNMI driver and fabric's lists disagree on access lists")
	}
	tg := gnmitest.Start(t, "Ethernet1", "Ethernet2", "Ethernet3")
	acl := hostList("Ethernet1")
	want := fabric.State{VLANs: []fabric.VLAN{{ID: 1001}}, ACLs: map[string]fabric.ACL{acl.Name: acl},
		Ports: map[string]fabric.Port{"Ethernet1": {Name: "Ethernet1", Mode: fabric.ModeAccess, VLAN: 1001}}}
	if _, err := aclPass(t, tg, want, fabric.Record{}); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	if tg.Sets() != 1 {
		t.Fatalf("%d Sets, want the batch in one", tg.Sets())
	}
	in, out6 := acl.Name+"-in", acl.Name+"-out6"
	for _, c := range []struct{ got, want string }{
		{entryLeaf(tg, in, "ACL_IPV4", "10", "ipv4/config/protocol"), "IP_TCP"},
		{entryLeaf(tg, in, "ACL_IPV4", "10", "transport/config/destination-port"), "22"},
		{entryLeaf(tg, in, "ACL_IPV4", "10", "actions/config/forwarding-action"), "DROP"},
		{entryLeaf(tg, in, "ACL_IPV4", "30", "ipv4/config/destination-address"), ""}, // an IPv6 rule
		{entryLeaf(tg, in, "ACL_IPV4", "50", "actions/config/forwarding-action"), "DROP"},
		{entryLeaf(tg, acl.Name+"-in6", "ACL_IPV6", "30", "ipv6/config/destination-address"), "2001:db8::/32"},
		{entryLeaf(tg, acl.Name+"-out", "ACL_IPV4", "20", "ipv4/config/source-address"), "10.0.0.0/8"},
		{entryLeaf(tg, acl.Name+"-out", "ACL_IPV4", "20", "transport/config/destination-port"), "1000..2000"},
		{entryLeaf(tg, out6, "ACL_IPV6", "40", "ipv6/config/protocol"), "58"},
		{entryLeaf(tg, out6, "ACL_IPV6", "50", "actions/config/forwarding-action"), "DROP"},
		{bound(tg, "Ethernet1", "ingress", in, "ACL_IPV4"), in},
		{bound(tg, "Ethernet1", "egress", out6, "ACL_IPV6"), out6},
	} {
		if c.got != c.want {
			t.Errorf("target shows %q, want %q", c.got, c.want)
		}
	}

	have, err := aclPass(t, tg, want, fabric.RecordOf(want))
	if err != nil || tg.Sets() != 1 {
		t.Fatalf("second pass: %v, %d Sets in all, want no new one", err, tg.Sets())
	}
	if !fabric.SameACL(acl, have.ACLs[acl.Name]) {
		t.Errorf("list reads back %+v, want %+v", have.ACLs[acl.Name], acl)
	}

	// An entry added by someone else: the next pass replaces the set as it should be.
	operatorSet(t, tg, &gnmi.SetRequest{Update: []*gnmi.Update{{
		Path: &gnmi.Path{Elem: []*gnmi.PathElem{{Name: "acl"}, {Name: "acl-sets"}, {Name: "acl-set", Key: map[string]string{"name": in, "type": "ACL_IPV4"}},
			{Name: "acl-entries"}, {Name: "acl-entry", Key: map[string]string{"sequence-id": "35"}}, {Name: "config"}}},
		Val: &gnmi.TypedValue{Value: &gnmi.TypedValue_JsonIetfVal{JsonIetfVal: []byte(`{"sequence-id": 35}`)}},
	}}})
	sets := tg.Sets()
	if _, err := aclPass(t, tg, want, fabric.RecordOf(want)); err != nil || tg.Sets() != sets+1 {
		t.Fatalf("pass after the hand edit: %v, %d Sets, want one more", err, tg.Sets()-sets)
	}
	if got := tg.Leaf("/acl/acl-sets/acl-set[name=" + in + "][type=ACL_IPV4]/acl-entries/acl-entry[sequence-id=35]/config/sequence-id"); got != "" {
		t.Errorf("the hand-added entry is still there after the repairing pass")
	}

	// A rule changes: the sets are rewritten; read back as changed.
	changed := acl
	changed.Rules = changed.Rules[1:]
	changed.DefaultDeny = false
	want.ACLs[acl.Name] = changed
	if _, err := aclPass(t, tg, want, fabric.RecordOf(want)); err != nil {
		t.Fatalf("changing the list: %v", err)
	}
	if got := entryLeaf(tg, in, "ACL_IPV4", "10", "transport/config/destination-port"); got != "" {
		t.Errorf("the dropped ssh rule is still entry 10 (port %s)", got)
	}
	if got := entryLeaf(tg, in, "ACL_IPV4", "40", "actions/config/forwarding-action"); got != "ACCEPT" {
		t.Errorf("default entry 40 forwards %q, want ACCEPT", got)
	}
	sets = tg.Sets()
	if have, err = aclPass(t, tg, want, fabric.RecordOf(want)); err != nil || tg.Sets() != sets || !fabric.SameACL(changed, have.ACLs[acl.Name]) {
		t.Errorf("changed list reads back %+v (%v, %d new Sets), want %+v and no Set", have.ACLs[acl.Name], err, tg.Sets()-sets, changed)
	}

	// The host leaves: the sets are unbound and removed.
	if _, err := aclPass(t, tg, fabric.State{}, fabric.RecordOf(want)); err != nil {
		t.Fatalf("leaving: %v", err)
	}
	cfg := tg.Config()
	if cfg.Acl != nil && cfg.Acl.AclSets != nil && len(cfg.Acl.AclSets.AclSet) != 0 {
		t.Errorf("acl-sets left on the target: %v", slices.Collect(maps.Keys(cfg.Acl.AclSets.AclSet)))
	}
	if got := bound(tg, "Ethernet1", "ingress", in, "ACL_IPV4"); got != "" {
		t.Errorf("Ethernet1 still binds %s", got)
	}
}

// The target's schema is the check for what the driver does not know: a list bound to an
// interface the switch lacks passes the driver and fails the Set with the target's message,
// nothing changed. A trunk's list and a bond's are refused before anything is sent.
func TestACLRefused(t *testing.T) {
	tg := gnmitest.Start(t, "Ethernet1")
	ctx := context.Background()
	sess, err := openconfig.New().Connect(ctx, endpoint(tg))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	err = sess.Apply(ctx, fabric.Batch{{Op: fabric.OpEnsureACL, ACL: hostList("Ethernet9")}})
	if err == nil || !strings.Contains(err.Error(), "Ethernet9") || !strings.Contains(err.Error(), "nothing changed") || tg.Sets() != 0 {
		t.Fatalf("a list on a missing interface: %v (%d Sets), want the target's refusal", err, tg.Sets())
	}
	t.Logf("as a user sees it: %v", err)

	trunk := hostList("Ethernet1")
	trunk.VLAN = 1001
	bond := hostList("bond-a")
	bond.Members = []string{"Ethernet1"}
	for _, a := range []fabric.ACL{trunk, bond} {
		err := sess.Apply(ctx, fabric.Batch{{Op: fabric.OpEnsureACL, ACL: a}})
		if !errors.Is(err, fabric.ErrUnsupported) || !strings.Contains(err.Error(), "networkOS openconfig") || tg.Sets() != 0 {
			t.Errorf("got %v, want ErrUnsupported naming networkOS openconfig and no Set", err)
		}
		t.Logf("as a user sees it: %v", err)
	}
}
