package openvswitch

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/ovn-org/libovsdb/ovsdb"
)

// The connection's transport against the server's end of a pipe, for what a real ovsdb-server
// cannot be made to do on cue (stop reading, drop the connection between a request and its
// answer) or does only after seconds (its inactivity probe): the tests with a real server are
// conns_test.go and tls_test.go.

// serverEnd is the server's side of a connection: the messages it reads and writes.
type serverEnd struct {
	conn net.Conn
	dec  *json.Decoder
	enc  *json.Encoder
}

func pipeConn(t *testing.T) (*ovsdbConn, *serverEnd) {
	t.Helper()
	client, server := net.Pipe()
	c := newConn(client)
	t.Cleanup(func() { c.Close(); _ = server.Close() })
	return c, &serverEnd{conn: server, dec: json.NewDecoder(server), enc: json.NewEncoder(server)}
}

// returnsWithin runs call and fails the test if it has not returned after d.
func returnsWithin(t *testing.T, d time.Duration, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("the call has not returned after %s", d)
		return nil
	}
}

// The server's echo (ovsdb-server's inactivity probe: id "echo") is answered with its params and
// the same id, so a kept idle connection is not closed by the server; while the server keeps the
// connection it reads as alive, and once the server closes it, as not.
func TestConnAnswersEchoAndSeesTheServerClose(t *testing.T) {
	c, srv := pipeConn(t)
	go func() {
		if err := srv.enc.Encode(struct {
			ID     string   `json:"id"`
			Method string   `json:"method"`
			Params []string `json:"params"`
		}{"echo", "echo", []string{"probe", "7"}}); err != nil {
			t.Errorf("sending the echo: %v", err)
		}
	}()
	var reply struct {
		ID     any   `json:"id"`
		Result []any `json:"result"`
		Error  any   `json:"error"`
	}
	if err := returnsWithin(t, 5*time.Second, func() error { return srv.dec.Decode(&reply) }); err != nil {
		t.Fatalf("reading the echo's answer: %v", err)
	}
	if reply.ID != "echo" || !reflect.DeepEqual(reply.Result, []any{"probe", "7"}) || reply.Error != nil {
		t.Fatalf("echo answered %+v, want id echo, result [probe 7] and no error", reply)
	}
	if !c.alive() {
		t.Fatal("the connection reads as closed while the server keeps it")
	}

	_ = srv.conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for c.alive() {
		if time.Now().After(deadline) {
			t.Fatal("the connection still reads as alive 5s after the server closed it")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := c.Transact(context.Background(), ovsdb.Operation{Op: ovsdb.OperationSelect, Table: tableBridge}); !errors.Is(err, errConnClosed) {
		t.Fatalf("a transaction on the closed connection: %v, want %v", err, errConnClosed)
	}
}

// A server that reads the request and closes the connection before answering: the waiting call
// says the connection is closed.
func TestConnCallSeesTheServerCloseBeforeItsAnswer(t *testing.T) {
	c, srv := pipeConn(t)
	go func() {
		var req map[string]any
		_ = srv.dec.Decode(&req)
		_ = srv.conn.Close()
	}()
	err := returnsWithin(t, 5*time.Second, func() error {
		_, err := c.Transact(context.Background(), ovsdb.Operation{Op: ovsdb.OperationSelect, Table: tableBridge})
		return err
	})
	if !errors.Is(err, errConnClosed) {
		t.Fatalf("the call the server left unanswered: %v, want %v", err, errConnClosed)
	}
}

// A server that stops reading holds the request's write; the call still ends when its context
// does, with the context's error, and the connection is closed (it cannot be used again).
func TestConnCallHonoursItsContextWhenTheServerStopsReading(t *testing.T) {
	c, _ := pipeConn(t) // the server's end never reads: the pipe's write blocks
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := returnsWithin(t, 5*time.Second, func() error {
		_, err := c.Transact(ctx, ovsdb.Operation{Op: ovsdb.OperationSelect, Table: tableBridge})
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the call past its deadline: %v, want %v", err, context.DeadlineExceeded)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.alive() {
		if time.Now().After(deadline) {
			t.Fatal("the connection whose call was cut short still reads as alive")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
