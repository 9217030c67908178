// Package builtin registers the switch drivers metalwire ships in switchdriver.Default. The manager
// imports it once; driver packages stay free of global registration so tests can build registries
// of exactly the drivers they want.
package builtin

import (
	"github.com/metalwire/metalwire/internal/switchdriver"
	"github.com/metalwire/metalwire/internal/switchdriver/equinixmetal"
	"github.com/metalwire/metalwire/internal/switchdriver/openconfig"
	"github.com/metalwire/metalwire/internal/switchdriver/openvswitch"
	"github.com/metalwire/metalwire/internal/switchdriver/openvswitchssh"
	"github.com/metalwire/metalwire/internal/switchdriver/vendorssh"
)

func init() {
	switchdriver.Register(openvswitch.New())
	switchdriver.Register(openvswitchssh.New())
	switchdriver.Register(openconfig.New())
	for _, d := range vendorssh.Drivers() {
		switchdriver.Register(d)
	}
	switchdriver.Register(equinixmetal.New())
}
