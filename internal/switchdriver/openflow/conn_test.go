package openflow

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	of "antrea.io/libOpenflow/openflow15"
	"antrea.io/libOpenflow/util"
)

// A scripted switch stands in for Open vSwitch here only because Open vSwitch cannot be made
// to send an echo request, or split a reply, at a chosen moment; everything else is tested on
// the real one (openflow_test.go).

// readMsg reads one whole message from the client's side.
func readMsg(t *testing.T, r io.Reader) []byte {
	t.Helper()
	head := make([]byte, headerLen)
	if _, err := io.ReadFull(r, head); err != nil {
		t.Errorf("switch: read: %v", err)
		return nil
	}
	raw := make([]byte, binary.BigEndian.Uint16(head[2:]))
	copy(raw, head)
	if _, err := io.ReadFull(r, raw[headerLen:]); err != nil {
		t.Errorf("switch: read: %v", err)
		return nil
	}
	return raw
}

func portDescReply(t *testing.T, xid uint32, more bool, name string, number uint32) []byte {
	t.Helper()
	reply := of.NewMpReply(of.MultipartType_PortDesc)
	p := of.NewPort(number)
	copy(p.Name, name)
	p.HWAddr = net.HardwareAddr{2, 0, 0, 0, 0, byte(number)}
	reply.Body = []util.Message{p}
	if more {
		reply.Flags = of.OFPMPF_REPLY_MORE
	}
	b, err := marshal(reply, xid)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEchoAndSplitReplies: while waiting for its reply the client answers the switch's echo
// request (same xid, same data), skips a message the switch sent on its own, and gathers a
// multipart reply split in two.
func TestEchoAndSplitReplies(t *testing.T) {
	client, sw := net.Pipe()
	defer func() { _ = client.Close(); _ = sw.Close() }()
	c := &Conn{conn: client, remote: "pipe"}

	done := make(chan struct{})
	go func() {
		defer close(done)
		req := readMsg(t, sw)
		if len(req) < headerLen || req[1] != of.Type_MultiPartRequest {
			t.Errorf("switch: got %v, want a multipart request", req)
			return
		}
		xid := binary.BigEndian.Uint32(req[4:])
		echo := []byte{of.VERSION, of.Type_EchoRequest, 0, 12, 0, 0, 0, 77, 'p', 'i', 'n', 'g'}
		_, _ = sw.Write(echo)
		got := readMsg(t, sw)
		want := append([]byte{of.VERSION, of.Type_EchoReply}, echo[2:]...)
		if !bytes.Equal(got, want) {
			t.Errorf("switch: echo reply %v, want %v", got, want)
		}
		// A port-status the switch sends on its own (xid 0), then the reply in two parts.
		_, _ = sw.Write([]byte{of.VERSION, of.Type_PortStatus, 0, 8, 0, 0, 0, 0})
		_, _ = sw.Write(portDescReply(t, xid, true, "p1", 1))
		_, _ = sw.Write(portDescReply(t, xid, false, "p2", 2))
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ports, err := c.Ports(ctx)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 2 || ports["p1"].Number != 1 || ports["p2"].Number != 2 || ports["p2"].HWAddr.String() != "02:00:00:00:00:02" {
		t.Errorf("Ports() = %v; want p1 and p2 from both parts of the reply", ports)
	}
}

// TestCancelledCall: a switch that never answers does not hang the caller past its context,
// and the connection refuses further calls rather than read a late reply out of step.
func TestCancelledCall(t *testing.T) {
	client, sw := net.Pipe()
	defer func() { _ = client.Close(); _ = sw.Close() }()
	go func() { _, _ = io.Copy(io.Discard, sw) }()
	c := &Conn{conn: client, remote: "pipe"}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Ports(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("Ports() on a silent switch = %v after %v; want the context's deadline", err, time.Since(start))
	}
	_, err = c.Ports(context.Background())
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call after the failure = %v; want the connection reported unusable", err)
	}
}
