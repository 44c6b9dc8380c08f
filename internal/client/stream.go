package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// StreamConn speaks newline-delimited JSON-RPC over a byte stream: the
// stdio transport. Use NewStreamConn for any reader/writer pair (an
// in-process pipe to mcp.Server.ServeStdio, say) or StartCommand to spawn
// a server process.
type StreamConn struct {
	w    *lineWriter
	ids  ids
	mux  *mux
	proc *process // nil unless started by StartCommand
	handlerSlot

	gmu     sync.Mutex
	garbage []string // stdout lines that were not JSON-RPC messages

	done chan struct{} // closed when the read loop ended
}

// NewStreamConn returns a connection that writes messages to w and reads
// them from r. Close closes w.
func NewStreamConn(r io.Reader, w io.WriteCloser) *StreamConn {
	c := &StreamConn{w: newLineWriter(w), mux: newMux(), done: make(chan struct{})}
	go c.readLoop(r)
	return c
}

// maxLine bounds one line from the server.
const maxLine = maxBody

func (c *StreamConn) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			c.handleLine(line)
		}
		if err != nil {
			c.mux.fail(ErrClosed)
			close(c.done)
			return
		}
	}
}

// tooLongLine stands for a line over the bound, which is not buffered.
var tooLongLine = []byte("<a line longer than 16 MiB>")

// readLine reads one line without its newline; an overlong line is
// reported as tooLongLine rather than buffered.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > maxLine {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			return tooLongLine, err
		}
		line = append(line, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

func (c *StreamConn) handleLine(line []byte) {
	if &line[0] == &tooLongLine[0] {
		// Most likely a response: the requests waiting now cannot tell,
		// so they all fail with ErrTooLarge rather than wait in vain.
		c.mux.failPending(ErrTooLarge)
	}
	m := parseMessage(line)
	switch {
	case m == nil:
		c.gmu.Lock()
		if len(c.garbage) < 5 {
			c.garbage = append(c.garbage, truncate(string(line), 200))
		}
		c.gmu.Unlock()
	case m.IsResponse():
		c.mux.deliver(m, bytes.Clone(line))
	case m.IsNotification():
		raw := bytes.Clone(line)
		c.mux.note(raw)
		c.notify(nil, raw, m)
	default: // a request from the server (a legacy server's input requests, ping)
		// What the read loop answers itself (ping, a refusal) it writes
		// before reading on: a flood is paced by the server's reading.
		c.serveRequest(context.Background(), m, nil, func(ctx context.Context, msg []byte) { c.w.write(ctx, msg) })
	}
}

// Garbage returns the first few stdout lines that were not JSON-RPC
// messages; a conforming server writes none.
func (c *StreamConn) Garbage() []string {
	c.gmu.Lock()
	defer c.gmu.Unlock()
	return append([]string(nil), c.garbage...)
}

// Transport returns protocol.TransportStdio.
func (c *StreamConn) Transport() string { return protocol.TransportStdio }

// RoundTrip implements Conn.
func (c *StreamConn) RoundTrip(ctx context.Context, req *Request) (*Reply, error) {
	id := c.ids.next()
	if req.OnID != nil {
		req.OnID(id)
	}
	r, err := c.send(ctx, id, jsonrpc.AppendRequest(nil, id, req.Method, req.Params))
	if err != nil && ctx.Err() != nil && req.Cancel {
		// Tell the server to stop work on the request, as stdio asks.
		// It never waits: when the queue is full (a server that stopped
		// reading), the notification is dropped.
		c.w.tryWrite(jsonrpc.AppendNotification(nil, "notifications/cancelled", cancelledParams(id, ctx.Err().Error())))
	}
	return r, err
}

// SendRaw writes line (one JSON-RPC request with the given id, or any
// bytes) and waits for the response to id. Checks use it for malformed
// requests.
func (c *StreamConn) SendRaw(ctx context.Context, id jsonrpc.ID, line []byte) (*Reply, error) {
	return c.send(ctx, id, line)
}

func (c *StreamConn) send(ctx context.Context, id jsonrpc.ID, line []byte) (*Reply, error) {
	ch, err := c.mux.register(id)
	if err != nil {
		return nil, c.explain(err)
	}
	start := time.Now()
	if err := c.w.write(ctx, line); err != nil {
		c.mux.forget(id)
		return nil, c.explain(err)
	}
	r, err := c.mux.wait(ctx, id, ch, start)
	return r, c.explain(err)
}

// explain adds what the process wrote to stdout that was not JSON-RPC,
// what it said on stderr, and how it exited, to an error that ended the
// conversation.
func (c *StreamConn) explain(err error) error {
	if err == nil || c.proc == nil {
		return err
	}
	if errors.Is(err, ErrClosed) || errors.As(err, new(*TransportError)) {
		return c.proc.explain(err, c.Garbage())
	}
	if g := c.Garbage(); len(g) > 0 {
		return fmt.Errorf("%w (the server wrote lines to stdout that are not JSON-RPC, the first: %q)", err, g[0])
	}
	return err
}

// Notify implements Conn.
func (c *StreamConn) Notify(ctx context.Context, req *Request) (*Reply, error) {
	if err := c.w.write(ctx, jsonrpc.AppendNotification(nil, req.Method, req.Params)); err != nil {
		return nil, c.explain(err)
	}
	return &Reply{}, nil
}

// Close implements Conn. It closes the server's input at once (a write
// in progress, to a server that stopped reading, fails; queued ones are
// dropped); for a process started by StartCommand it then waits for the
// process to exit, and terminates it after the grace period.
func (c *StreamConn) Close() error {
	err := c.w.close()
	if c.proc != nil {
		return c.proc.shutdown()
	}
	return err
}

// Done is closed when the server's output ended (its process exited, or
// the stream was closed): every later request fails.
func (c *StreamConn) Done() <-chan struct{} { return c.done }

// Exit returns how a process started by StartCommand ended; ok is false
// while it runs (or for a StreamConn over plain streams).
func (c *StreamConn) Exit() (Exit, bool) {
	if c.proc == nil {
		return Exit{}, false
	}
	return c.proc.exit()
}
