package openflow

import (
	"context"
	"strings"
	"testing"

	of "antrea.io/libOpenflow/openflow15"

	"github.com/metalwire/metalwire/pkg/fabric"
)

func TestParseRemote(t *testing.T) {
	for _, tc := range []struct {
		remote, network, addr, err string
	}{
		{remote: "tcp:192.0.2.1:6653", network: "tcp", addr: "192.0.2.1:6653"},
		{remote: "tcp:192.0.2.1", network: "tcp", addr: "192.0.2.1:6653"},
		{remote: "tcp:[2001:db8::1]:6633", network: "tcp", addr: "[2001:db8::1]:6633"},
		{remote: "tcp:[2001:db8::1]", network: "tcp", addr: "[2001:db8::1]:6653"},
		{remote: "unix:/var/run/openvswitch/br0.mgmt", network: "unix", addr: "/var/run/openvswitch/br0.mgmt"},
		{remote: "ssl:192.0.2.1:6653", err: "ssl is not supported"},
		{remote: "192.0.2.1:6653", err: "write tcp:HOST:PORT"},
		{remote: "tcp:", err: "write tcp:HOST:PORT"},
		{remote: "tcp:2001:db8::1", err: "write tcp:HOST:PORT"},
	} {
		network, addr, err := parseRemote(tc.remote)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.remote) {
				t.Errorf("parseRemote(%q) = %q, %q, %v; want an error naming it and saying %q", tc.remote, network, addr, err, tc.err)
			}
			continue
		}
		if err != nil || network != tc.network || addr != tc.addr {
			t.Errorf("parseRemote(%q) = %q, %q, %v; want %q, %q", tc.remote, network, addr, err, tc.network, tc.addr)
		}
	}
}

func TestOffers15(t *testing.T) {
	hello := func(version uint8, elems ...byte) []byte {
		b := append([]byte{version, of.Type_Hello, 0, 0, 0, 0, 0, 1}, elems...)
		b[3] = byte(len(b))
		return b
	}
	bitmap := func(bits uint32) []byte {
		return []byte{0, 1, 0, 8, byte(bits >> 24), byte(bits >> 16), byte(bits >> 8), byte(bits)}
	}
	for _, tc := range []struct {
		name string
		raw  []byte
		want bool
	}{
		{"1.5 and a bitmap with it", hello(6, bitmap(1<<6|1<<4|1<<1)...), true},
		{"1.5 without a bitmap", hello(6), true},
		{"a newer version whose bitmap lacks 1.5", hello(7, bitmap(1<<7|1<<4)...), false},
		{"1.3 only", hello(4, bitmap(1<<4|1<<1)...), false},
		{"a truncated element", hello(6, 0, 1, 0, 40), false},
	} {
		if got := offers15(tc.raw); got != tc.want {
			t.Errorf("%s: offers15 = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSwitchErrorNames(t *testing.T) {
	raw := []byte{6, of.Type_Error, 0, 12, 0, 0, 0, 9, 0, of.PET_BAD_MATCH, 0, of.BMC_BAD_PREREQ}
	err := decodeError("flow-mod add cookie=0x6d77000000000001", raw)
	want := "openflow: the switch refused flow-mod add cookie=0x6d77000000000001: OFPET_BAD_MATCH (4), OFPBMC_BAD_PREREQ (9)"
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	exp := decodeError("bundle commit", []byte{6, of.Type_Error, 0, 16, 0, 0, 0, 9, 0xff, 0xff, 0x0, 0x5, 0, 0, 0x23, 0x20})
	if exp.Experimenter != 0x2320 || !strings.Contains(exp.Error(), "experimenter error 0x2320 code 5") {
		t.Errorf("experimenter error = %q (%#v)", exp, exp)
	}
	if got := (&SwitchError{Request: "x", Type: 99, Code: 7}).Error(); !strings.Contains(got, "error type 99, code 7") {
		t.Errorf("unknown type reads %q", got)
	}
}

// TestFlowMatchRefusesBadFlows: a flow the client cannot express is refused with a message
// naming the field, before anything is sent.
func TestFlowMatchRefusesBadFlows(t *testing.T) {
	ports := map[string]PortInfo{"p1": {Number: 1}, "p2": {Number: 2}}
	cookie := fabric.ACLCookie("h", "n")
	for _, tc := range []struct {
		name string
		flow fabric.Flow
		want string
	}{
		{"no port nor MAC", fabric.Flow{Cookie: cookie}, "set exactly one of inPort and dlDst"},
		{"both", fabric.Flow{Cookie: cookie, InPort: "p1", DLDst: "02:00:00:00:00:01"}, "set exactly one"},
		{"unknown port", fabric.Flow{Cookie: cookie, InPort: "p9"}, `in_port "p9": no such port on the bridge; its ports: p1, p2`},
		{"bad MAC", fabric.Flow{Cookie: cookie, DLDst: "02:00"}, `dl_dst "02:00"`},
		{"bad proto", fabric.Flow{Cookie: cookie, InPort: "p1", Proto: "sctp"}, `proto "sctp"`},
		{"address without proto", fabric.Flow{Cookie: cookie, InPort: "p1", NWDst: "10.0.0.0/8"}, "need a protocol"},
		{"v6 CIDR on ip", fabric.Flow{Cookie: cookie, InPort: "p1", Proto: "ip", NWDst: "2001:db8::/32"}, `nw_dst "2001:db8::/32": not an IPv4 address`},
		{"bad CIDR", fabric.Flow{Cookie: cookie, InPort: "p1", Proto: "tcp", NWSrc: "10.0.0.0"}, `nw_src "10.0.0.0": not a CIDR`},
		{"port on icmp", fabric.Flow{Cookie: cookie, InPort: "p1", Proto: "icmp", TPDst: &fabric.PortMask{Value: 22, Mask: 0xffff}}, "tp_dst needs tcp"},
		{"foreign cookie", fabric.Flow{Cookie: 0x1, InPort: "p1"}, "cookie 0x1: not metalwire's"},
		{"priority", fabric.Flow{Cookie: cookie, InPort: "p1", Priority: 70000}, "priority 70000"},
		{"VLAN out of range", fabric.Flow{Cookie: cookie, InPort: "p1", VLAN: 4095}, "dl_vlan 4095"},
	} {
		_, err := addFlowMod(tc.flow, ports)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// TestApplyRefusesForeignCookie needs no switch: the refusal comes before any message.
func TestApplyRefusesForeignCookie(t *testing.T) {
	c := &Conn{remote: "unix:/nowhere"}
	for _, cookie := range []uint64{0, 0x1234, 0x6d76000000000001} {
		err := c.Apply(context.Background(), nil, []uint64{cookie})
		if err == nil || !strings.Contains(err.Error(), "not metalwire's") {
			t.Errorf("remove cookie %#x: %v; want a refusal", cookie, err)
		}
	}
}

func TestNormalize(t *testing.T) {
	f := Normalize(fabric.Flow{DLDst: "02:AB:CD:00:00:01", NWSrc: "10.1.2.3/8", NWDst: "2001:DB8::1/32"})
	if f.DLDst != "02:ab:cd:00:00:01" || f.NWSrc != "10.0.0.0/8" || f.NWDst != "2001:db8::/32" {
		t.Errorf("Normalize = %+v", f)
	}
}
