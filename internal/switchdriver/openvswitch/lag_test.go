package openvswitch_test

import (
	"testing"

	"github.com/metalwire/metalwire/internal/switchdriver/openvswitch"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// Two hosts bonded on their side negotiate LACP with the bonds the driver makes, and reach each
// other through them, also with a member link down.
func TestLACPBondsWithHosts(t *testing.T) {
	f := ovstest.NewLAGFabric(t, true)
	ovstest.RunLAGScenario(t, f, openvswitch.Driver{}, fabric.Endpoint{Switch: "leaf1", Address: f.Switch.UnixRemote, Bridge: f.Bridge})
}

// A bond's access list matches frames of every member, and a bond shut is every member shut.
func TestBondACLAndPortState(t *testing.T) {
	f := ovstest.NewLAGFabric(t, true)
	ovstest.RunBondACLScenario(t, f, openvswitch.Driver{}, fabric.Endpoint{Switch: "leaf1", Address: f.Switch.UnixRemote, Bridge: f.Bridge})
}
