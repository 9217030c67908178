package openflow

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	of "antrea.io/libOpenflow/openflow15"

	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// TestSwitchErrorUndoesBundle: a flow-mod the switch refuses comes back as a *SwitchError that
// names the request and the OpenFlow error, and the valid flow-mod sent in the same bundle is
// not applied. Every flow Apply builds is valid, so the refused one is built here by hand: an
// ip_proto match without the eth_type it requires.
func TestSwitchErrorUndoesBundle(t *testing.T) {
	ovstest.Require(t, "ovs-ofctl")
	sw := ovstest.StartSwitch(t, ovstest.Options{VSwitchd: true})
	br := sw.AddBridge(t, "br0")
	sw.WaitMgmt(t, br)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Dial(ctx, sw.MgmtRemote(br))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()

	cookie := fabric.ACLCookie("h1", "net")
	good, err := addFlowMod(fabric.Flow{Cookie: cookie, Priority: 30000, DLDst: "02:00:5e:00:53:01"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := of.NewFlowMod()
	bad.Cookie, bad.Priority = cookie, 29999
	bad.Match.AddField(*of.NewIpProtoField(protoTCP))
	err = c.bundle(ctx, []request{{what: "flow-mod add good", msg: good}, {what: "flow-mod add without eth_type", msg: bad}})

	var se *SwitchError
	if !errors.As(err, &se) || se.Request != "flow-mod add without eth_type" || se.Type != of.PET_BAD_MATCH || se.Code != of.BMC_BAD_PREREQ {
		t.Fatalf("bundle with a bad match: %v (%#v); want a SwitchError OFPET_BAD_MATCH/OFPBMC_BAD_PREREQ for the bad flow-mod", err, se)
	}
	for _, want := range []string{"flow-mod add without eth_type", "OFPET_BAD_MATCH", "OFPBMC_BAD_PREREQ"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if c.Changes() != 0 {
		t.Errorf("Changes() = %d after a refused bundle, want 0", c.Changes())
	}
	flows, err := c.Flows(ctx, cookie, ^uint64(0))
	if err != nil || len(flows) != 0 {
		t.Errorf("after a refused bundle, Flows = %v, %v; want none (the good flow-mod must not be applied)", flows, err)
	}
	// The connection is still usable.
	if _, err := c.Ports(ctx); err != nil {
		t.Errorf("ports after the refused bundle: %v", err)
	}
}
