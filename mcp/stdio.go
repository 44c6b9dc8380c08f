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
// not sent. When r ends, subscriptions/listen streams end at once (their
// client is gone) and other in-flight requests get a few seconds to finish
// before they are cancelled; ServeStdio returns once they are done. It
// returns nil at the end of input.
//
// When ctx is cancelled, ServeStdio stops reading (a Read in progress is
// abandoned), cancels in-flight requests, waits for them and returns. To
// end listen streams with their graceful completion result instead, call
// Server.Shutdown before cancelling ctx.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	ctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	c := &stdioConn{s: s, w: bufio.NewWriter(w), inflight: map[string]*stdioCall{}, sem: make(chan struct{}, maxInFlight)}
	readDone := make(chan error, 1)
	go func() { readDone <- c.readLoop(ctx, r) }()
	done := make(chan struct{})
	wait := func() {
		go func() { c.wg.Wait(); close(done) }()
	}
	var readErr error
	select {
	case readErr = <-readDone:
		// Let in-flight requests finish for a while, then cancel them.
		c.endListens()
		c.endLegacy()
		wait()
		select {
		case <-done:
		case <-time.After(stdioDrainTimeout):
			cancelAll()
			<-done
		case <-ctx.Done():
			<-done
		}
	case <-ctx.Done():
		c.stop()
		c.endLegacy()
		wait()
		<-done
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped, c.closed = true, true
	if err := c.w.Flush(); err != nil && readErr == nil {
		readErr = err
	}
	return readErr
}

// readLoop reads and dispatches lines until r ends, fails, or the
// connection is stopped. It returns nil at the end of input.
func (c *stdioConn) readLoop(ctx context.Context, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br, c.s.maxBody)
		if len(line) > 0 || errors.Is(err, errTooLarge) {
			if errors.Is(err, errTooLarge) {
				c.writeMsg(jsonrpc.AppendError(nil, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Message too large"}))
				err = nil
			} else if !c.dispatch(ctx, line) {
				return nil // stopped
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
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

	mu       sync.Mutex // guards w, inflight and stopped
	w        *bufio.Writer
	inflight map[string]*stdioCall
	stopped  bool // no more dispatching
	closed   bool // no more writing: ServeStdio has returned

	// sess is the legacy session once the client sent initialize (see
	// legacy.go); only the reading goroutine sets it, under mu.
	sess *session
}

// endLegacy ends the legacy session of the connection, if any: the client
// can no longer answer the server's requests.
func (c *stdioConn) endLegacy() {
	c.mu.Lock()
	ss := c.sess
	c.mu.Unlock()
	if ss != nil {
		c.s.legacy.sessions.removeLocal(ss)
	}
}

// stop makes the connection dispatch no more requests.
func (c *stdioConn) stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
}

// stdioCall is one request in flight on a stdio connection.
type stdioCall struct {
	cancel    context.CancelFunc
	listen    bool // a subscriptions/listen stream
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
	if c.closed {
		return // ServeStdio has returned
	}
	c.w.Write(msg)
	c.w.WriteByte('\n')
	c.w.Flush()
}

// dispatch handles one line. It returns false when the connection has been
// stopped and the line was ignored.
func (c *stdioConn) dispatch(ctx context.Context, line []byte) bool {
	owned := bytes.Clone(line) // the reader reuses its buffer
	msg, derr := jsonrpc.Decode(owned)
	if derr != nil {
		c.writeMsg(jsonrpc.AppendError(nil, msg.ID, derr))
		return true
	}
	switch {
	case msg.IsResponse():
		// A legacy client answering a request of the server (legacy.go);
		// the modern era sends none.
		if c.sess != nil {
			c.sess.deliver(&msg)
		}
		return true
	case msg.IsNotification():
		if msg.Method == "notifications/cancelled" {
			c.cancel(msg.Params)
		} else if c.sess != nil {
			c.sess.handleNotification(&msg)
		}
		return true
	}
	// initialize without modern _meta switches the connection to the
	// legacy era for good (legacy.go). It is answered before the next line
	// is read, so that a client that does not wait for the answer still
	// finds the session initialized.
	if msg.Method == "initialize" && c.s.legacy != nil && (c.sess != nil || !hasModernMeta(msg.Params)) {
		if c.sess == nil {
			ss := c.s.newStdioSession(c.writeMsg)
			c.mu.Lock()
			c.sess = ss
			c.mu.Unlock()
		}
		resp, _ := c.s.Handle(ctx, nil, &Incoming{Message: &msg, session: c.sess}, nil)
		c.writeMsg(resp)
		return true
	}
	sess := c.sess
	key := string(msg.ID.Raw())
	cctx, cancel := context.WithCancel(ctx)
	call := &stdioCall{cancel: cancel, listen: msg.Method == "subscriptions/listen"}
	// Listen streams stay open indefinitely: they do not take one of the
	// in-flight slots (the server's MaxSubscriptions bounds them), so
	// that a client with many of them can still send requests and
	// cancellations.
	if !call.listen {
		c.sem <- struct{}{}
	}
	release := func() {
		if !call.listen {
			<-c.sem
		}
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		release()
		cancel()
		return false
	}
	if _, dup := c.inflight[key]; dup {
		c.mu.Unlock()
		release()
		cancel()
		c.writeMsg(jsonrpc.AppendError(nil, msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: a request with this id is already in flight"}))
		return true
	}
	c.inflight[key] = call
	c.wg.Add(1)
	c.mu.Unlock()

	go func() {
		defer func() {
			release()
			c.wg.Done()
		}()
		buf := c.s.getBuf()
		resp, _ := c.s.Handle(cctx, *buf, &Incoming{Message: &msg, session: sess}, stdioNotifier{c: c, call: call, sess: sess})
		call.mu.Lock()
		call.done = true
		if !call.cancelled && len(resp) > 0 {
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
	return true
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
	if call != nil {
		call.abandon()
	}
}

// abandon cancels the call; its response is not written.
func (call *stdioCall) abandon() {
	call.mu.Lock()
	call.cancelled = true
	call.mu.Unlock()
	call.cancel()
}

// endListens abandons every listen stream: the client is gone.
func (c *stdioConn) endListens() {
	c.mu.Lock()
	var ls []*stdioCall
	for _, call := range c.inflight {
		if call.listen {
			ls = append(ls, call)
		}
	}
	c.mu.Unlock()
	for _, call := range ls {
		call.abandon()
	}
}
