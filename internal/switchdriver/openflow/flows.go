package openflow

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"slices"

	of "antrea.io/libOpenflow/openflow15"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// bundleFlags make a bundle all-or-nothing and applied in the order sent: the deletes of a
// cookie land before the adds that replace them.
const bundleFlags = of.BF_ATOMIC | of.BF_ORDERED

// Flows reads the flows whose cookie c has c&mask == cookie&mask (a FlowDesc multipart request
// over all tables), converted back to fabric.Flow with in_port as the port's name, sorted by
// priority (highest first) then field by field. Compared with Normalize of the
// flows applied, the result is exact. Read metalwire's flows with fabric.CookiePrefix and
// fabric.CookiePrefixMask, one host's network's with its cookie and ^uint64(0).
//
// The port-desc request (for the names) and the flow-desc request go out together and the
// switch answers them in order: one wait for the switch, not two.
func (c *Conn) Flows(ctx context.Context, cookie, mask uint64) ([]fabric.Flow, error) {
	body := of.NewFlowStatsRequest()
	body.TableId = of.OFPTT_ALL
	body.Cookie, body.CookieMask = cookie, mask
	req := of.NewMpRequest(of.MultipartType_FlowDesc)
	req.Body = append(req.Body, body)
	what := fmt.Sprintf("flow-desc request cookie=%#x/%#x", cookie, mask)
	portsReq := portDescRequest()
	portsXid, err := c.sendRequest(ctx, portsReq)
	if err != nil {
		return nil, err
	}
	flowsXid, err := c.sendRequest(ctx, request{what: what, msg: req})
	if err != nil {
		return nil, err
	}
	portReplies, err := c.await(ctx, portsXid, portsReq.what, nil)
	if err != nil {
		return nil, err
	}
	ports, err := c.portsOf(portReplies)
	if err != nil {
		return nil, err
	}
	names := make(map[uint32]string, len(ports))
	for name, p := range ports {
		names[p.Number] = name
	}
	replies, err := c.await(ctx, flowsXid, what, nil)
	if err != nil {
		return nil, err
	}
	var flows []fabric.Flow
	for _, raw := range replies {
		msg, err := parse(raw)
		if err != nil {
			return nil, fmt.Errorf("openflow: flow-desc reply from %s: %w", c.remote, err)
		}
		mp, ok := msg.(*of.MultipartReply)
		if !ok {
			return nil, fmt.Errorf("openflow: flow-desc reply from %s is a %T", c.remote, msg)
		}
		macs := ethDsts(raw)
		for i, b := range mp.Body {
			d, ok := b.(*of.FlowDesc)
			if !ok || i >= len(macs) {
				return nil, fmt.Errorf("openflow: flow-desc reply from %s: entry %d is not a flow", c.remote, i)
			}
			f, err := readFlow(d, names)
			if err != nil {
				return nil, fmt.Errorf("openflow: %s: %w", c.remote, err)
			}
			if macs[i] != nil {
				f.DLDst = macs[i].String()
			}
			flows = append(flows, f)
		}
	}
	slices.SortFunc(flows, compareFlows)
	return flows, nil
}

// Apply changes the bridge's flows in one atomic, ordered bundle: first every flow of each
// cookie in removeCookies is deleted (the cookie matched in full), then each flow of add is
// added to table 0. Either all of it happens or none. Cookies must carry fabric.CookiePrefix,
// so a flow metalwire did not write is never removed. An invalid flow is refused before
// anything is sent.
func (c *Conn) Apply(ctx context.Context, add []fabric.Flow, removeCookies []uint64) error {
	if len(add) == 0 && len(removeCookies) == 0 {
		return nil
	}
	var ports map[string]PortInfo
	if slices.ContainsFunc(add, func(f fabric.Flow) bool { return f.InPort != "" }) {
		var err error
		if ports, err = c.Ports(ctx); err != nil {
			return err
		}
	}
	msgs := make([]request, 0, len(removeCookies)+len(add))
	for _, cookie := range removeCookies {
		if cookie&fabric.CookiePrefixMask != fabric.CookiePrefix {
			return fmt.Errorf("openflow: remove cookie %#x: not metalwire's (its top 16 bits must be %#x); refusing to delete flows metalwire did not write", cookie, fabric.CookiePrefix>>48)
		}
		mod := of.NewFlowMod()
		mod.Command = of.FC_DELETE
		mod.TableId = of.OFPTT_ALL
		mod.Cookie, mod.CookieMask = cookie, ^uint64(0)
		msgs = append(msgs, request{what: fmt.Sprintf("flow-mod delete cookie=%#x", cookie), msg: mod})
	}
	for i, f := range add {
		mod, err := addFlowMod(f, ports)
		if err != nil {
			return fmt.Errorf("openflow: flow %d (%s): %w", i, f.OfctlSpec(), err)
		}
		msgs = append(msgs, request{what: "flow-mod add " + f.OfctlSpec(), msg: mod})
	}
	return c.bundle(ctx, msgs)
}

// addFlowMod is the flow-mod that adds f: allow outputs to NORMAL (the bridge switches the
// frame as it would without the flow), deny has no instruction (the frame is dropped).
func addFlowMod(f fabric.Flow, ports map[string]PortInfo) (*of.FlowMod, error) {
	if f.Cookie&fabric.CookiePrefixMask != fabric.CookiePrefix {
		return nil, fmt.Errorf("cookie %#x: not metalwire's (its top 16 bits must be %#x); use fabric.ACLCookie", f.Cookie, fabric.CookiePrefix>>48)
	}
	if f.Priority < 0 || f.Priority > 0xffff {
		return nil, fmt.Errorf("priority %d: OpenFlow priorities are 0 to 65535", f.Priority)
	}
	match, err := flowMatch(f, ports)
	if err != nil {
		return nil, err
	}
	mod := of.NewFlowMod()
	mod.Command = of.FC_ADD
	mod.TableId = 0
	mod.Cookie = f.Cookie
	mod.Priority = uint16(f.Priority)
	mod.Match = *match
	if !f.Drop {
		apply := of.NewInstrApplyActions()
		_ = apply.AddAction(of.NewActionOutput(of.P_NORMAL), false)
		mod.AddInstruction(apply)
	}
	return mod, nil
}

// bundle sends msgs as one atomic, ordered bundle: open, add each, a barrier (every add
// checked), then commit; if the open or any add is refused, the bundle is discarded and nothing
// changes. The open, the adds and the barrier go out together (the switch handles them in
// order, and refuses an add to a bundle it did not open): one wait for the switch before the
// commit, not two.
func (c *Conn) bundle(ctx context.Context, msgs []request) error {
	id := c.xid() // unique on this connection, which is all a bundle id must be
	openXid := c.xid()
	out, err := marshal(of.NewBundleCtrl(id, of.BCT_OPEN_REQUEST, bundleFlags), openXid)
	if err != nil {
		return fmt.Errorf("openflow: bundle open: %w", err)
	}
	pending := make(map[uint32]string, len(msgs)+1)
	pending[openXid] = "bundle open"
	for _, m := range msgs {
		add := of.NewBndleAdd(id, bundleFlags)
		add.Message = m.msg
		xid := c.xid()
		b, err := marshal(add, xid)
		if err != nil {
			return fmt.Errorf("openflow: %s: %w", m.what, err)
		}
		// The switch requires the inner message's xid to be the bundle-add's; the inner
		// message follows the bundle id, padding and flags.
		binary.BigEndian.PutUint32(b[headerLen+8+4:], xid)
		out = append(out, b...)
		pending[xid] = m.what
	}
	if err := c.write(ctx, out); err != nil {
		return fmt.Errorf("openflow: bundle of %d flow-mods to %s: %w", len(msgs), c.remote, c.closedErr(err))
	}
	if err := c.barrier(ctx, pending); err != nil {
		discard := request{what: "bundle discard", msg: of.NewBundleCtrl(id, of.BCT_DISCARD_REQUEST, bundleFlags)}
		if _, derr := c.roundTrip(ctx, discard); derr != nil {
			return fmt.Errorf("%w (and the bundle could not be discarded: %w)", err, derr)
		}
		return err
	}
	commit := request{what: fmt.Sprintf("bundle commit of %d flow-mods", len(msgs)), msg: of.NewBundleCtrl(id, of.BCT_COMMIT_REQUEST, bundleFlags)}
	xid, err := c.sendRequest(ctx, commit)
	if err != nil {
		return err
	}
	if _, err = c.await(ctx, xid, commit.what, pending); err != nil {
		return err
	}
	c.changes += len(msgs)
	return nil
}

// ethDsts reads the eth_dst match of each flow of a FlowDesc reply straight from the message:
// libOpenflow v0.15.0 decodes the field's length but drops its value. nil for a flow without it.
func ethDsts(raw []byte) []net.HardwareAddr {
	const mpHeader, flowHeader = headerLen + 8, 24
	var out []net.HardwareAddr
	for off := mpHeader; off+flowHeader+4 <= len(raw); {
		n := int(binary.BigEndian.Uint16(raw[off:]))
		if n < flowHeader+4 || off+n > len(raw) {
			break
		}
		match := raw[off+flowHeader : off+n]
		var mac net.HardwareAddr
		end := min(int(binary.BigEndian.Uint16(match[2:])), len(match))
		for tlv := 4; tlv+4 <= end; {
			class, field, length := binary.BigEndian.Uint16(match[tlv:]), match[tlv+2]>>1, int(match[tlv+3])
			if class == of.OXM_CLASS_OPENFLOW_BASIC && field == of.OXM_FIELD_ETH_DST && length >= 6 && tlv+4+6 <= end {
				mac = slices.Clone(net.HardwareAddr(match[tlv+4 : tlv+4+6]))
			}
			tlv += 4 + length
		}
		out = append(out, mac)
		off += n
	}
	return out
}
