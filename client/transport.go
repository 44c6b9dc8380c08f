package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	iclient "github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// A Transport says how to reach a server: *HTTPTransport,
// *CommandTransport or *MemoryTransport.
type Transport interface {
	open(ctx context.Context, legacy bool) (iclient.Conn, error)
}

// HTTPTransport reaches a server over Streamable HTTP (and, for a legacy
// server that refuses it, the 2024-11-05 HTTP+SSE transport).
type HTTPTransport struct {
	// URL is the MCP endpoint.
	URL string
	// HTTPClient sends the requests; an authorizing http.RoundTripper
	// plugs in here. Default: a client of its own without an overall
	// timeout (every request is bounded by its context). A client without
	// a CheckRedirect is used with one (on a copy) that follows redirects
	// only within the server's origin, so that Header and the body never
	// go to another server.
	HTTPClient *http.Client
	// Header is sent with every request.
	Header http.Header
}

func (t *HTTPTransport) open(ctx context.Context, legacy bool) (iclient.Conn, error) {
	if t.URL == "" {
		return nil, errors.New("client: HTTPTransport without a URL")
	}
	return iclient.DialHTTP(t.URL, t.httpOptions()), nil
}

func (t *HTTPTransport) httpOptions() *iclient.HTTPOptions {
	return &iclient.HTTPOptions{Header: t.Header, Client: t.HTTPClient}
}

// CommandTransport starts a stdio server process.
type CommandTransport struct {
	// Command is the program; Args its arguments.
	Command string
	Args    []string
	// Env is added to the current environment; Dir is the working
	// directory.
	Env []string
	Dir string
	// Stderr, if set, gets a copy of the server's stderr. The client keeps
	// its last lines anyway and adds them to the error when the server
	// fails.
	Stderr io.Writer
	// Grace is how long Close waits for the process to exit after closing
	// its stdin, and again after SIGTERM, before killing it. Default 2s.
	Grace time.Duration
}

func (t *CommandTransport) open(ctx context.Context, legacy bool) (iclient.Conn, error) {
	if t.Command == "" {
		return nil, errors.New("client: CommandTransport without a Command")
	}
	argv := append([]string{t.Command}, t.Args...)
	return iclient.StartCommand(argv, &iclient.CommandOptions{Env: t.Env, Dir: t.Dir, Stderr: t.Stderr, Grace: t.Grace})
}

// MemoryTransport connects to a server in the same process, without
// sockets or pipes for the modern era (requests go straight to
// Server.Handle), and over an in-memory stdio pipe for the legacy era.
type MemoryTransport struct {
	Server *mcp.Server
}

func (t *MemoryTransport) open(ctx context.Context, legacy bool) (iclient.Conn, error) {
	if t.Server == nil {
		return nil, errors.New("client: MemoryTransport without a Server")
	}
	if legacy {
		return newPipeConn(t.Server), nil
	}
	return &memConn{s: t.Server}, nil
}

// memConn hands each request to Server.Handle.
type memConn struct {
	s   *mcp.Server
	ids idGen
	h   struct {
		sync.Mutex
		v *iclient.Handler
	}
}

type idGen struct {
	mu sync.Mutex
	n  int64
}

func (g *idGen) next() jsonrpc.ID {
	g.mu.Lock()
	g.n++
	n := g.n
	g.mu.Unlock()
	return jsonrpc.IntID(n)
}

func (c *memConn) SetHandler(h *iclient.Handler) {
	c.h.Lock()
	c.h.v = h
	c.h.Unlock()
}

// memNotifier passes a request's notifications on.
type memNotifier struct {
	c   *memConn
	req *iclient.Request
}

func (n memNotifier) Notify(msg []byte) {
	raw := bytes.Clone(msg)
	m, err := jsonrpc.Decode(raw)
	if err != nil {
		return
	}
	if n.req.OnNotify != nil {
		n.req.OnNotify(raw, &m)
		return
	}
	n.c.h.Lock()
	h := n.c.h.v
	n.c.h.Unlock()
	if h != nil && h.Notify != nil {
		h.Notify(raw, &m)
	}
}

func (c *memConn) RoundTrip(ctx context.Context, req *iclient.Request) (*iclient.Reply, error) {
	id := c.ids.next()
	if req.OnID != nil {
		req.OnID(id)
	}
	body := jsonrpc.AppendRequest(nil, id, req.Method, req.Params)
	m, derr := jsonrpc.Decode(body)
	if derr != nil {
		return nil, &iclient.TransportError{Op: "encoding the request", Err: derr}
	}
	start := time.Now()
	type done struct{ out []byte }
	ch := make(chan done, 1)
	go func() {
		out, _ := c.s.Handle(ctx, nil, &mcp.Incoming{Message: &m}, memNotifier{c, req})
		ch <- done{out}
	}()
	var out []byte
	select {
	case d := <-ch:
		out = d.out
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, iclient.ErrTimeout
		}
		return nil, ctx.Err()
	}
	r := &iclient.Reply{Body: out, Latency: time.Since(start)}
	if len(out) == 0 {
		return nil, iclient.ErrClosed
	}
	if msg, err := jsonrpc.Decode(out); err == nil && msg.IsResponse() {
		r.Msg = &msg
	}
	return r, nil
}

func (c *memConn) Notify(ctx context.Context, req *iclient.Request) (*iclient.Reply, error) {
	return &iclient.Reply{}, nil
}

func (c *memConn) Transport() string { return "" } // in memory: no transport name
func (c *memConn) Close() error      { return nil }

// pipeConn is a stdio connection to Server.ServeStdio over in-memory
// pipes, for the legacy era (whose sessions live in a connection).
type pipeConn struct {
	*iclient.StreamConn
	done chan struct{}
	in   *io.PipeWriter
}

func newPipeConn(s *mcp.Server) *pipeConn {
	cr, sw := io.Pipe() // server writes, client reads
	sr, cw := io.Pipe() // client writes, server reads
	pc := &pipeConn{StreamConn: iclient.NewStreamConn(cr, cw), done: make(chan struct{}), in: cw}
	go func() {
		s.ServeStdio(context.Background(), sr, sw)
		sw.Close()
		sr.Close()
		close(pc.done)
	}()
	return pc
}

func (c *pipeConn) Transport() string { return "" }

func (c *pipeConn) Close() error {
	c.StreamConn.Close()
	<-c.done
	return nil
}
