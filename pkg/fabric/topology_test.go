package fabric

import (
	"reflect"
	"testing"
)

func TestCabling(t *testing.T) {
	switches := []KnownSwitch{
		{Device: "rack1", Name: "leaf1", MAC: "02:00:00:00:00:01"},
		{Device: "rack1", Name: "leaf2"},
	}
	ifaces := []HostInterface{
		// LLDP names leaf1 by its MAC in another spelling.
		{Name: "eno1", MAC: "aa:00:00:00:00:01", SpeedMbps: 25000, LLDP: &Neighbour{SwitchID: "02-00-00-00-00-01", Port: "Ethernet1"}},
		// LLDP names leaf1, but the spec's switchPort says leaf2 by system name: the spec wins.
		{Name: "eno2", MAC: "aa:00:00:00:00:02", LLDP: &Neighbour{SwitchID: "02:00:00:00:00:01", Port: "Ethernet2"},
			SwitchPort: &Neighbour{SystemName: "leaf2", Port: "Ethernet9"}},
		// A switch nobody declared, twice.
		{Name: "eno3", LLDP: &Neighbour{SwitchID: "0e:00:00:00:00:99", SystemName: "spine7", Port: "1"}},
		{Name: "eno4", LLDP: &Neighbour{SwitchID: "0e:00:00:00:00:99", Port: "2"}},
		// Nothing seen.
		{Name: "eno5"},
	}
	cards, unknown := Cabling(ifaces, switches)
	var got []string
	for _, c := range cards {
		got = append(got, c.Interface.Name+"="+c.Switch.Name+"/"+c.Port+" ("+c.From+")")
	}
	want := []string{"eno1=leaf1/Ethernet1 (lldp)", "eno2=leaf2/Ethernet9 (switchPort)"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cards %q, want %q", got, want)
	}
	if !reflect.DeepEqual(unknown, []string{"0e:00:00:00:00:99"}) {
		t.Fatalf("unknown %q", unknown)
	}
}
