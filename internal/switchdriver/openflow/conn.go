package openflow

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"antrea.io/libOpenflow/common"
	of "antrea.io/libOpenflow/openflow15"
	"antrea.io/libOpenflow/util"
)

// DefaultPort is the IANA OpenFlow port, used when a tcp: remote names none (as Open vSwitch does).
const DefaultPort = "6653"

// defaultTimeout bounds a call whose context has no deadline: a switch that stops answering
// must not hang a reconcile.
const defaultTimeout = 30 * time.Second

// headerLen is the size of every OpenFlow message's header (version, type, length, xid).
const headerLen = 8

// Conn is one OpenFlow 1.5 connection to a bridge. It is not safe for concurrent use: calls
// take turns, each reading until its own reply.
type Conn struct {
	conn   net.Conn
	remote string
	// nextXid numbers requests; 0 is never sent, so a zero xid in a reply means "unsolicited".
	nextXid uint32
	// broken is the I/O error that left the stream mid-message (a timeout, a cancel, a closed
	// socket): every later call returns it rather than read a reply out of step.
	broken error
	// changes counts the flow-mods and port-mods the switch has applied (see Changes).
	changes int
}

// Changes is how many flow-mods and port-mods this connection has had applied: a bundle counts
// its messages once committed, a refused bundle none. A driver proves an unchanged pass sends
// nothing by it.
func (c *Conn) Changes() int { return c.changes }

// Dial connects to remote ("tcp:HOST:PORT", "tcp:[IPv6]:PORT" or "unix:PATH") and negotiates
// OpenFlow 1.5.
func Dial(ctx context.Context, remote string) (*Conn, error) {
	network, addr, err := parseRemote(remote)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("openflow: dial %s: %w", remote, err)
	}
	c := &Conn{conn: nc, remote: remote}
	if err := c.hello(ctx); err != nil {
		_ = nc.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.conn.Close() }

// Usable says whether no call has failed on the connection: one that did left the stream out of
// step and is good only for closing. (A connection the switch closed while no call ran reads
// as usable until the next call fails.)
func (c *Conn) Usable() bool { return c.broken == nil }

// parseRemote reads an Open vSwitch active remote.
func parseRemote(remote string) (network, addr string, err error) {
	kind, rest, _ := strings.Cut(remote, ":")
	switch {
	case kind == "unix" && rest != "":
		return "unix", rest, nil
	case kind == "tcp" && rest != "":
		if host, port, err := net.SplitHostPort(rest); err == nil && host != "" && port != "" {
			return "tcp", net.JoinHostPort(host, port), nil
		}
		// No port: the default, as Open vSwitch does ("tcp:HOST", "tcp:[IPv6]").
		host := strings.TrimSuffix(strings.TrimPrefix(rest, "["), "]")
		if !strings.Contains(host, ":") || strings.HasPrefix(rest, "[") {
			return "tcp", net.JoinHostPort(host, DefaultPort), nil
		}
	}
	return "", "", fmt.Errorf("openflow remote %q: write tcp:HOST:PORT, tcp:[IPv6]:PORT or unix:PATH (ssl is not supported)", remote)
}

// hello exchanges Hello messages offering OpenFlow 1.5 only: a switch whose bridge does not
// allow 1.5 answers with an error or a Hello without it, and the caller learns how to fix that.
func (c *Conn) hello(ctx context.Context) error {
	h, err := common.NewHello(of.VERSION)
	if err != nil {
		return err
	}
	bitmap := common.NewHelloElemVersionBitmap()
	bitmap.Bitmaps = []uint32{1 << of.VERSION}
	h.Elements = []common.HelloElem{bitmap}
	if err := c.send(ctx, h, c.xid()); err != nil {
		return fmt.Errorf("openflow: hello to %s: %w", c.remote, err)
	}
	raw, err := c.read(ctx)
	if err != nil {
		return fmt.Errorf("openflow: hello from %s: %w", c.remote, err)
	}
	fix := "allow it on the bridge: ovs-vsctl set bridge BR protocols=OpenFlow10,OpenFlow13,OpenFlow15"
	switch raw[1] {
	case of.Type_Hello:
	case of.Type_Error:
		return fmt.Errorf("openflow: %s refused OpenFlow 1.5 (%w); %s", c.remote, decodeError("hello", raw), fix)
	default:
		return fmt.Errorf("openflow: %s sent message type %d before its hello; is it an OpenFlow endpoint?", c.remote, raw[1])
	}
	if !offers15(raw) {
		return fmt.Errorf("openflow: %s does not offer OpenFlow 1.5 (its hello is version %d); %s", c.remote, raw[0], fix)
	}
	return nil
}

// offers15 reads a Hello: version 1.5 is offered when the header's version is at least 1.5 and,
// if the switch sent a version bitmap, the bitmap has 1.5's bit.
func offers15(raw []byte) bool {
	if raw[0] < of.VERSION {
		return false
	}
	for rest := raw[headerLen:]; len(rest) >= 4; {
		typ, n := binary.BigEndian.Uint16(rest), int(binary.BigEndian.Uint16(rest[2:]))
		if n < 4 || n > len(rest) {
			return false
		}
		if typ == common.HelloElemType_VersionBitmap && n >= 8 {
			return binary.BigEndian.Uint32(rest[4:])&(1<<of.VERSION) != 0
		}
		rest = rest[(n+7)/8*8:]
	}
	return true
}

func (c *Conn) xid() uint32 {
	c.nextXid++
	if c.nextXid == 0 {
		c.nextXid++
	}
	return c.nextXid
}

// deadline applies the context's deadline (or the default) to the socket, and closes the
// wait early when the context is cancelled. The returned stop must be called.
func (c *Conn) deadline(ctx context.Context) (stop func()) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(defaultTimeout)
	}
	_ = c.conn.SetDeadline(dl)
	unhook := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	return func() { unhook() }
}

func (c *Conn) send(ctx context.Context, msg util.Message, xid uint32) error {
	b, err := marshal(msg, xid)
	if err != nil {
		return err
	}
	return c.write(ctx, b)
}

// marshal encodes msg with the given xid (libOpenflow numbers messages from a counter of its
// own; this connection numbers its requests itself, to match replies).
func marshal(msg util.Message, xid uint32) ([]byte, error) {
	b, err := msg.MarshalBinary()
	if err != nil {
		return nil, err
	}
	if len(b) < headerLen {
		return nil, fmt.Errorf("message %T encodes to %d bytes", msg, len(b))
	}
	binary.BigEndian.PutUint32(b[4:], xid)
	return b, nil
}

func (c *Conn) write(ctx context.Context, b []byte) error {
	if c.broken != nil {
		return c.broken
	}
	stop := c.deadline(ctx)
	defer stop()
	_, err := c.conn.Write(b)
	return c.fail(ctx, err)
}

// fail records an I/O error as the connection's end and returns it, the context's error first.
func (c *Conn) fail(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	_, hasDeadline := ctx.Deadline()
	switch {
	case ctx.Err() != nil:
		err = ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded) && hasDeadline:
		// The socket's deadline is the context's, and may pass a moment before the context's.
		err = context.DeadlineExceeded
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("no answer within %v: %w", defaultTimeout, err)
	}
	c.broken = fmt.Errorf("connection unusable after an earlier failure (dial again): %w", err)
	return err
}

// read returns the next whole message.
func (c *Conn) read(ctx context.Context) ([]byte, error) {
	if c.broken != nil {
		return nil, c.broken
	}
	stop := c.deadline(ctx)
	defer stop()
	head := make([]byte, headerLen)
	if _, err := io.ReadFull(c.conn, head); err != nil {
		return nil, c.fail(ctx, err)
	}
	n := int(binary.BigEndian.Uint16(head[2:]))
	if n < headerLen {
		return nil, c.fail(ctx, fmt.Errorf("message of length %d: shorter than its header", n))
	}
	raw := make([]byte, n)
	copy(raw, head)
	if _, err := io.ReadFull(c.conn, raw[headerLen:]); err != nil {
		return nil, c.fail(ctx, err)
	}
	return raw, nil
}

// next reads the next message that is not an echo request, answering echo requests on the way
// (the switch drops a connection that does not).
func (c *Conn) next(ctx context.Context) ([]byte, error) {
	for {
		raw, err := c.read(ctx)
		if err != nil {
			return nil, err
		}
		if raw[0] != of.VERSION {
			return nil, c.fail(ctx, fmt.Errorf("message of OpenFlow version %d on a 1.5 connection", raw[0]))
		}
		if raw[1] != of.Type_EchoRequest {
			return raw, nil
		}
		raw[1] = of.Type_EchoReply // an echo reply carries the request's xid and data back
		if err := c.write(ctx, raw); err != nil {
			return nil, err
		}
	}
}

// request is one message sent and the name it goes by in errors ("flow-mod add cookie=0x...").
type request struct {
	what string
	msg  util.Message
}

// roundTrip sends req and returns its replies (see await).
func (c *Conn) roundTrip(ctx context.Context, req request) ([][]byte, error) {
	xid, err := c.sendRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	return c.await(ctx, xid, req.what, nil)
}

// sendRequest numbers req with a fresh xid and sends it.
func (c *Conn) sendRequest(ctx context.Context, req request) (uint32, error) {
	xid := c.xid()
	if err := c.send(ctx, req.msg, xid); err != nil {
		return 0, fmt.Errorf("openflow: %s to %s: %w", req.what, c.remote, c.closedErr(err))
	}
	return xid, nil
}

// await reads until the replies to xid are complete (one without the multipart "more" flag)
// and returns them. Errors the switch sends for the xids in pending (requests with no reply of
// their own, sent earlier) are collected and returned with the outcome. Messages of other xids
// are ones the switch sent on its own (port status, packet in) and are skipped.
func (c *Conn) await(ctx context.Context, xid uint32, what string, pending map[uint32]string) ([][]byte, error) {
	var errs []error
	var replies [][]byte
	for {
		raw, err := c.next(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("openflow: %s to %s: %w", what, c.remote, c.closedErr(err)))
			return nil, errors.Join(errs...)
		}
		got := binary.BigEndian.Uint32(raw[4:])
		switch {
		case got == xid && raw[1] == of.Type_Error:
			return nil, errors.Join(append(errs, decodeError(what, raw))...)
		case got == xid:
			replies = append(replies, raw)
			more := raw[1] == of.Type_MultiPartReply && len(raw) >= 12 &&
				binary.BigEndian.Uint16(raw[10:])&of.OFPMPF_REPLY_MORE != 0
			if !more {
				return replies, errors.Join(errs...)
			}
		case raw[1] == of.Type_Error && pending[got] != "":
			errs = append(errs, decodeError(pending[got], raw))
		}
	}
}

// closedErr names the usual cause of an EOF.
func (c *Conn) closedErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("the switch closed the connection: %w", err)
	}
	return err
}

// barrier waits until the switch has processed every message sent before it; errors for the
// pending xids come back with it.
func (c *Conn) barrier(ctx context.Context, pending map[uint32]string) error {
	h := &common.Header{Version: of.VERSION, Type: of.Type_BarrierRequest, Length: headerLen}
	xid, err := c.sendRequest(ctx, request{what: "barrier", msg: h})
	if err != nil {
		return err
	}
	_, err = c.await(ctx, xid, "barrier", pending)
	return err
}

// parse decodes a message with libOpenflow, which panics on some malformed input: a bad
// message from the switch is an error, never a crash of the manager.
func parse(raw []byte) (msg util.Message, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed OpenFlow message type %d: %v", raw[1], r)
		}
	}()
	return of.Parse(raw)
}
