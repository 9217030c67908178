package openvswitch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/cenkalti/rpc2"
	"github.com/cenkalti/rpc2/jsonrpc"
	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"
)

// database is the OVSDB database of an Open vSwitch switch.
const database = "Open_vSwitch"

// errConnClosed is what a call on a connection the server (or Close) ended returns.
var errConnClosed = errors.New("the OVSDB connection is closed")

// ovsdbConn is one OVSDB connection to a switch's Open_vSwitch database: RFC 7047's JSON-RPC
// over the socket (cenkalti/rpc2, the transport libovsdb's own client uses), the database's
// schema as the server sent it, and the two calls the driver makes: transact, and answering the
// server's echo. libovsdb's ovsdb package gives the wire types and its model package checks the
// driver's rows against the schema.
//
// The driver reads with select inside transactions and never monitors, so libovsdb's client
// (its table cache, monitors and reconnection) would carry nothing here; it also links Go's
// testing package into the manager (a file of its package imports it in every version the
// module proxy serves).
type ovsdbConn struct {
	rpc    *rpc2.Client
	schema ovsdb.DatabaseSchema
}

// openConn dials remote ("tcp:HOST:PORT", "ssl:HOST:PORT" with tlsConfig, "unix:PATH"),
// reads the database's schema and checks the driver's rows against it.
func openConn(ctx context.Context, remote string, tlsConfig *tls.Config) (*ovsdbConn, error) {
	scheme, addr, _ := strings.Cut(remote, ":")
	var (
		sock net.Conn
		err  error
	)
	switch scheme {
	case "tcp":
		var d net.Dialer
		sock, err = d.DialContext(ctx, "tcp", addr)
	case "unix":
		var d net.Dialer
		sock, err = d.DialContext(ctx, "unix", addr)
	case "ssl":
		d := tls.Dialer{Config: tlsConfig}
		sock, err = d.DialContext(ctx, "tcp", addr)
	default:
		return nil, fmt.Errorf("remote %q: the scheme must be tcp, ssl or unix (tcp:HOST:PORT, ssl:HOST:PORT, unix:PATH)", remote)
	}
	if err != nil {
		return nil, err
	}
	c := newConn(sock)
	if err := c.call(ctx, "get_schema", ovsdb.NewGetSchemaArgs(database), &c.schema); err != nil {
		c.Close()
		return nil, fmt.Errorf("reading the %s schema: %w", database, err)
	}
	rows, err := clientModel()
	if err != nil {
		c.Close()
		return nil, err
	}
	if _, errs := model.NewDatabaseModel(c.schema, rows); len(errs) > 0 {
		c.Close()
		return nil, fmt.Errorf("the server's %s schema (version %s) lacks what the driver uses: %w", database, c.schema.Version, errors.Join(errs...))
	}
	return c, nil
}

// newConn speaks OVSDB's JSON-RPC over sock, answering the server's echo: the server probes an
// idle connection with it and closes the connection when it goes unanswered.
func newConn(sock net.Conn) *ovsdbConn {
	c := &ovsdbConn{rpc: rpc2.NewClientWithCodec(jsonrpc.NewJSONCodec(sock))}
	c.rpc.Handle("echo", func(_ *rpc2.Client, args []any, reply *[]any) error {
		*reply = args
		return nil
	})
	go c.rpc.Run()
	return c
}

// Transact sends ops as one transaction and returns the server's results, one per operation
// (and one more, with the error, when the server refused the transaction).
func (c *ovsdbConn) Transact(ctx context.Context, ops ...ovsdb.Operation) ([]ovsdb.OperationResult, error) {
	var results []ovsdb.OperationResult
	if err := c.call(ctx, "transact", ovsdb.NewTransactArgs(database, ops...), &results); err != nil {
		return nil, err
	}
	return results, nil
}

// call sends one request and waits for its answer, for no longer than ctx allows. rpc2 looks at
// ctx only once the request is written, and a server that stopped reading holds that write
// (the socket has no deadline): so ctx ending during the call closes the connection, which ends
// the write; the caller closes a connection whose call failed anyway (Session.broken).
func (c *ovsdbConn) call(ctx context.Context, method string, args, reply any) error {
	stop := context.AfterFunc(ctx, c.Close)
	defer stop()
	err := c.rpc.CallWithContext(ctx, method, args, reply)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, rpc2.ErrShutdown), errors.Is(err, io.ErrUnexpectedEOF):
		// Shut before the call, or by the server while the call waited for its answer.
		return errConnClosed
	}
	return err
}

// Schema is the database's schema as the server sent it when the connection opened.
func (c *ovsdbConn) Schema() ovsdb.DatabaseSchema { return c.schema }

// alive says whether the socket is still open: the server closes it when it restarts (its
// schema may change then) or drops an idle client.
func (c *ovsdbConn) alive() bool {
	select {
	case <-c.rpc.DisconnectNotify():
		return false
	default:
		return true
	}
}

// Close closes the socket.
func (c *ovsdbConn) Close() { _ = c.rpc.Close() }
