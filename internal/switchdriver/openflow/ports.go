package openflow

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	of "antrea.io/libOpenflow/openflow15"
)

// PortInfo is what the switch reports of one OpenFlow port.
type PortInfo struct {
	// Number is the OpenFlow port number (ofport); the bridge's own port is 0xfffffffe (LOCAL).
	Number uint32
	HWAddr net.HardwareAddr
	// AdminDown is the PORT_DOWN config bit (set by SetPortAdmin or `ovs-ofctl mod-port BR P down`);
	// LinkDown the LINK_DOWN state bit (no carrier).
	AdminDown bool
	LinkDown  bool
}

// Ports reads the bridge's ports (a PortDesc multipart request), by name.
func (c *Conn) Ports(ctx context.Context) (map[string]PortInfo, error) {
	replies, err := c.roundTrip(ctx, portDescRequest())
	if err != nil {
		return nil, err
	}
	return c.portsOf(replies)
}

// portDescRequest asks for every port of the bridge.
func portDescRequest() request {
	req := of.NewMpRequest(of.MultipartType_PortDesc)
	req.Body = append(req.Body, of.NewPortMultipartRequest(of.P_ANY))
	return request{what: "port-desc request", msg: req}
}

// portsOf reads the replies to a port-desc request.
func (c *Conn) portsOf(replies [][]byte) (map[string]PortInfo, error) {
	ports := map[string]PortInfo{}
	for _, raw := range replies {
		msg, err := parse(raw)
		if err != nil {
			return nil, fmt.Errorf("openflow: port-desc reply from %s: %w", c.remote, err)
		}
		mp, ok := msg.(*of.MultipartReply)
		if !ok {
			return nil, fmt.Errorf("openflow: port-desc reply from %s is a %T", c.remote, msg)
		}
		for _, body := range mp.Body {
			p, ok := body.(*of.Port)
			if !ok {
				continue
			}
			name := string(bytes.TrimRight(p.Name, "\x00"))
			ports[name] = PortInfo{
				Number:    p.PortNo,
				HWAddr:    slices.Clone(p.HWAddr),
				AdminDown: p.Config&of.PC_PORT_DOWN != 0,
				LinkDown:  p.State&of.PS_LINK_DOWN != 0,
			}
		}
	}
	return ports, nil
}

// SetPortAdmin sets the port's administrative state (the PORT_DOWN config bit alone; the
// port's other config bits are left as they are) and waits until the switch has applied it.
// A port already in that state is left alone: nothing is sent.
func (c *Conn) SetPortAdmin(ctx context.Context, portName string, down bool) error {
	ports, err := c.Ports(ctx)
	if err != nil {
		return err
	}
	p, ok := ports[portName]
	if !ok {
		return fmt.Errorf("openflow: set port %q %s: no such port on %s; its ports: %s", portName, adminWord(down), c.remote, portNames(ports))
	}
	if p.AdminDown == down {
		return nil // already so: nothing is sent
	}
	mod := of.NewPortMod(0)
	mod.PortNo = p.Number
	copy(mod.HWAddr, p.HWAddr) // the switch checks it: a port renumbered meanwhile is refused, not changed
	mod.Mask = of.PC_PORT_DOWN
	if down {
		mod.Config = of.PC_PORT_DOWN
	}
	what := fmt.Sprintf("port-mod %s %s", portName, adminWord(down))
	xid, err := c.sendRequest(ctx, request{what: what, msg: mod})
	if err != nil {
		return err
	}
	if err := c.barrier(ctx, map[uint32]string{xid: what}); err != nil {
		return err
	}
	c.changes++
	return nil
}

func adminWord(down bool) string {
	if down {
		return "down"
	}
	return "up"
}

// portNames lists the ports for an error message, sorted.
func portNames(ports map[string]PortInfo) string {
	names := make([]string, 0, len(ports))
	for n := range ports {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
