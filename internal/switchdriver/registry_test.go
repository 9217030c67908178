package switchdriver_test

import (
	"testing"

	"github.com/metalwire/metalwire/internal/devenv/standin"
	"github.com/metalwire/metalwire/internal/switchdriver"
)

func TestRegistryNamesTheDriversItHas(t *testing.T) {
	r := &switchdriver.Registry{}
	if _, err := r.For("openvswitch"); err == nil || err.Error() != `no switch driver for networkOS "openvswitch" in this manager; drivers: (none)` {
		t.Fatalf("empty registry: %v", err)
	}
	r.Register(standin.New("openvswitch-ssh"))
	r.Register(standin.New("openvswitch"))
	if d, err := r.For("openvswitch"); err != nil || d.NetworkOS() != "openvswitch" {
		t.Fatalf("For(openvswitch) = %v, %v", d, err)
	}
	if _, err := r.For("eos"); err == nil || err.Error() != `no switch driver for networkOS "eos" in this manager; drivers: openvswitch, openvswitch-ssh` {
		t.Fatalf("For(eos): %v", err)
	}
}
