package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// maxInFlight bounds the requests one stdio connection handles at once;
// reading pauses while the bound is reached.
const maxInFlight = 256

// stdioDrainTimeout is how long ServeStdio lets in-flight requests finish
// after the input ends before it cancels them.
var stdioDrainTimeout = 5 * time.Second

// ServeStdio serves newline-delimited JSON-RPC on r and w, the stdio
// transport, until r ends or ctx is cancelled. Requests are handled
// concurrently; each message is written as one whole line. A malformed or
// oversized line gets an error response and serving goes on.
// notifications/cancelled cancels the named request, whose response is then
// not sent. When r ends, in-flight requests get a few seconds to finish and
// are then cancelled; ServeStdio returns once they are done. It returns nil
// at the end of input.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	ctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	c := &stdioConn{s: s, w: bufio.NewWriter(w), inflight: map[string]*stdioCall{}, sem: make(chan struct{}, maxInFlight)}
	br := bufio.NewReaderSize(r, 64<<10)
	var readErr error
	for {
		line, err := readLine(br, s.maxBody)
		if len(line) > 0 || errors.Is(err, errTooLarge) {
			if errors.Is(err, errTooLarge) {
				c.writeMsg(jsonrpc.AppendError(nil, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Message too large"}))
				err = nil
			} else {
				c.dispatch(ctx, line)
			}
		}
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
		if ctx.Err() != nil {
			break
		}
	}
	// The client can no longer answer requests of a legacy session.
	if c.sess != nil {
		s.legacy.sessions.removeLocal(c.sess)
	}
	// Let in-flight requests finish for a while, then cancel them.
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stdioDrainTimeout):
		cancelAll()
		<-done
	case <-ctx.Done():
		<-done
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.w.Flush(); err != nil && readErr == nil {
		readErr = err
	}
	return readErr
}

// readLine reads one line without its newline. Lines longer than limit are
// skipped entirely and reported with errTooLarge.
func readLine(br *bufio.Reader, limit int64) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if int64(len(line)+len(frag)) > limit+1 {
			// Discard the rest of the line.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, errTooLarge
		}
		line = append(line, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		if err != nil {
			return line, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank lines are ignored
		}
		return line, nil
	}
}

type stdioConn struct {
	s   *Server
	sem chan struct{}
	wg  sync.WaitGroup

	mu       sync.Mutex // guards w and inflight
	w        *bufio.Writer
	inflight map[string]*stdioCall

	// sess is the legacy session once the client sent initialize (see
	// legacy.go); only the reading goroutine sets it.
	sess *session
}

// stdioCall is one request in flight on a stdio connection.
type stdioCall struct {
	cancel    context.CancelFunc
	mu        sync.Mutex
	cancelled bool
	done      bool
}

// Notify writes a notification for the call, unless it was cancelled.
type stdioNotifier struct {
	c    *stdioConn
	call *stdioCall
	sess *session // the legacy session, nil for modern requests
}

func (n stdioNotifier) Notify(msg []byte) {
	n.call.mu.Lock()
	defer n.call.mu.Unlock()
	if n.call.cancelled || n.call.done {
		return
	}
	n.c.writeMsg(msg)
}

func (c *stdioConn) writeMsg(msg []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w.Write(msg)
	c.w.WriteByte('\n')
	c.w.Flush()
}

func (c *stdioConn) dispatch(ctx context.Context, line []byte) {
	owned := bytes.Clone(line) // the reader reuses its buffer
	msg, derr := jsonrpc.Decode(owned)
	if derr != nil {
		c.writeMsg(jsonrpc.AppendError(nil, msg.ID, derr))
		return
	}
	switch {
	case msg.IsResponse():
		// A legacy client answering a request of the server (legacy.go);
		// the modern era sends none.
		if c.sess != nil {
			c.sess.deliver(&msg)
		}
		return
	case msg.IsNotification():
		if msg.Method == "notifications/cancelled" {
			c.cancel(msg.Params)
		} else if c.sess != nil {
			c.sess.handleNotification(&msg)
		}
		return
	}
	// initialize without modern _meta switches the connection to the
	// legacy era for good (legacy.go). It is answered before the next line
	// is read, so that a client that does not wait for the answer still
	// finds the session initialized.
	if msg.Method == "initialize" && c.s.legacy != nil && (c.sess != nil || !hasModernMeta(msg.Params)) {
		if c.sess == nil {
			c.sess = c.s.newStdioSession(c.writeMsg)
		}
		resp, _ := c.s.Handle(ctx, nil, &Incoming{Message: &msg, session: c.sess}, nil)
		c.writeMsg(resp)
		return
	}
	key := string(msg.ID.Raw())
	cctx, cancel := context.WithCancel(ctx)
	call := &stdioCall{cancel: cancel}
	c.mu.Lock()
	if _, dup := c.inflight[key]; dup {
		c.mu.Unlock()
		cancel()
		c.writeMsg(jsonrpc.AppendError(nil, msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: a request with this id is already in flight"}))
		return
	}
	c.inflight[key] = call
	c.mu.Unlock()

	sess := c.sess
	c.sem <- struct{}{}
	c.wg.Add(1)
	go func() {
		defer func() {
			<-c.sem
			c.wg.Done()
		}()
		buf := c.s.getBuf()
		resp, _ := c.s.Handle(cctx, *buf, &Incoming{Message: &msg, session: sess}, stdioNotifier{c: c, call: call, sess: sess})
		call.mu.Lock()
		call.done = true
		if !call.cancelled {
			c.writeMsg(resp)
		}
		call.mu.Unlock()
		*buf = resp[:0]
		c.s.putBuf(buf)
		c.mu.Lock()
		delete(c.inflight, key)
		c.mu.Unlock()
		cancel()
	}()
}

// cancel handles notifications/cancelled.
func (c *stdioConn) cancel(params []byte) {
	id, ok := jsonscan.Lookup(params, "requestId")
	if !ok {
		return
	}
	var rid jsonrpc.ID
	if rid.UnmarshalJSON(id) != nil {
		return
	}
	c.mu.Lock()
	call := c.inflight[string(rid.Raw())]
	c.mu.Unlock()
	if call == nil {
		return
	}
	call.mu.Lock()
	call.cancelled = true
	call.mu.Unlock()
	call.cancel()
}
