package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// maxInFlight bounds the requests one stdio connection handles at once;
// reading pauses while the bound is reached.
const maxInFlight = 256

// maxIdleWorkers bounds the idle worker goroutines a stdio connection
// keeps for its next requests.
const maxIdleWorkers = 64

// Pending output: responses served in the reading goroutine are written
// once stdioQueueBytes are pending (or the reader waits for input), and
// writers wait while stdioMaxPending bytes wait for a write in progress,
// so that a client that does not read its output stops the server from
// reading more, as a blocking write would.
const (
	stdioQueueBytes = 64 << 10
	stdioMaxPending = 1 << 20
)

// stdioDrainTimeout is how long ServeStdio lets in-flight requests finish
// after the input ends before it cancels them.
var stdioDrainTimeout = 5 * time.Second

// ServeStdio serves newline-delimited JSON-RPC on r and w, the stdio
// transport, until r ends or ctx is cancelled. Requests are handled
// concurrently; each message is written as one whole line. A malformed or
// oversized line gets an error response and serving goes on.
// notifications/cancelled cancels the named request, whose response is then
// not sent. When r ends, subscriptions/listen streams end at once (their
// client is done) with their completion result, and other in-flight
// requests get a few seconds to finish
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
	c := &stdioConn{s: s, w: w, inflight: map[string]*stdioCall{}, sem: make(chan struct{}, maxInFlight), jobs: make(chan *stdioCall), quit: make(chan struct{})}
	c.wcond = sync.NewCond(&c.wmu)
	defer close(c.quit) // idle workers exit
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
	c.stop()
	// Write what is pending, after any write in progress, and write no
	// more: ServeStdio returns.
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for c.flushing {
		c.wcond.Wait()
	}
	if len(c.pending) > 0 && c.werr == nil {
		_, c.werr = c.w.Write(c.pending)
	}
	c.pending, c.spare = nil, nil
	c.closed = true
	c.wcond.Broadcast()
	if c.werr != nil && readErr == nil {
		readErr = c.werr
	}
	return readErr
}

// readLoop reads and dispatches lines until r ends, fails, or the
// connection is stopped. It returns nil at the end of input.
func (c *stdioConn) readLoop(ctx context.Context, r io.Reader) error {
	// Responses served in this goroutine wait in c.local until the reader
	// reads input (flushingReader), and at its end.
	defer c.flush()
	br := bufio.NewReaderSize(flushingReader{c, r}, 64<<10)
	for {
		line, err := readLine(br, c.s.maxBody)
		if len(line) > 0 || errors.Is(err, errTooLarge) {
			if errors.Is(err, errTooLarge) {
				c.reply(jsonrpc.AppendError(nil, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Message too large"}))
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

// flushingReader is the input of a stdio connection as its reading
// goroutine reads it: before every read (which may wait for the client),
// what the requests served inline queued is written, in one write. The
// buffered reader reads only when it holds no whole line, so that output
// waits for nothing but the lines already read.
type flushingReader struct {
	c *stdioConn
	r io.Reader
}

func (f flushingReader) Read(p []byte) (int, error) {
	f.c.flush()
	return f.r.Read(p)
}

// trimEOL returns b without the newlines and carriage returns it ends with.
func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// readLine reads one line without its newline. Lines longer than limit are
// skipped entirely and reported with errTooLarge. The line may point into
// br's buffer: it is valid until the next read from br.
func readLine(br *bufio.Reader, limit int64) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if line == nil && err == nil && int64(len(frag)) <= limit+1 {
			// The common case: the whole line is in the reader's buffer.
			frag = trimEOL(frag)
			if len(bytes.TrimSpace(frag)) == 0 {
				continue // blank lines are ignored
			}
			return frag, nil
		}
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
		line = trimEOL(line)
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
	s    *Server
	sem  chan struct{}
	wg   sync.WaitGroup
	jobs chan *stdioCall // idle workers receive here
	quit chan struct{}   // closed when ServeStdio returns
	idle atomic.Int32    // idle workers

	mu       sync.Mutex // guards inflight and stopped
	inflight map[string]*stdioCall
	stopped  bool // no more dispatching
	// calls is len(inflight) and halted is stopped, for reading without
	// mu: only the reading goroutine adds calls, so that calls == 0 there
	// means no id is in flight.
	calls  atomic.Int32
	halted atomic.Bool

	// Writes are group-committed: a message is appended to pending, and
	// the goroutine that finds no write in progress writes everything
	// pending, in a loop, until nothing is left. Concurrent responses thus
	// share write calls instead of paying one each, and lines never
	// interleave. The order of the messages is the order of the appends.
	wmu      sync.Mutex
	wcond    *sync.Cond // on wmu: a write ended, or closed was set
	w        io.Writer
	pending  []byte
	spare    []byte
	flushing bool  // a goroutine is writing (without wmu)
	closed   bool  // no more writing: ServeStdio has returned
	werr     error // the first write error; later output is dropped

	// sess is the legacy session once the client sent initialize (see
	// legacy.go); only the reading goroutine sets it, under mu.
	sess *session

	// local holds the responses the reading goroutine served inline
	// until flush moves them to the pending output (reading goroutine
	// only).
	local []byte
	// dc remembers the last request read, for the next (reading
	// goroutine only).
	dc decodeCache
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
	c.halted.Store(true)
	c.mu.Unlock()
}

// stdioCall is one request in flight on a stdio connection.
type stdioCall struct {
	// What the worker serves: the request, decoded from line (a copy of
	// the reader's line), with its _meta.
	line []byte
	msg  jsonrpc.Message
	rm   reqMeta  // the _meta, as a finished metaVisitor has it
	merr *Error   // and its error
	sess *session // the connection's legacy session when it was read

	key    string // the raw id, the key in stdioConn.inflight
	ctx    context.Context
	cancel context.CancelFunc
	listen bool   // a subscriptions/listen stream
	finish func() // ends the listen stream gracefully; set once it is open

	notifier stdioNotifier // the call's Notifier, set by serve

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

// onGracefulEnd records how to end the call's listen stream with its
// completion result (openListen calls it).
func (n stdioNotifier) onGracefulEnd(f func()) {
	n.call.mu.Lock()
	n.call.finish = f
	n.call.mu.Unlock()
}

func (n stdioNotifier) Notify(msg []byte) {
	n.call.mu.Lock()
	defer n.call.mu.Unlock()
	if n.call.cancelled || n.call.done {
		return
	}
	n.c.writeMsg(msg)
}

// writeMsg writes msg as one line, now or (when another goroutine is
// writing) as part of that goroutine's next write. msg may be reused once
// writeMsg returns.
func (c *stdioConn) writeMsg(msg []byte) {
	c.wmu.Lock()
	if !c.appendLocked(msg, true) {
		c.wmu.Unlock()
		return
	}
	if c.flushing || c.closed {
		c.wmu.Unlock()
		return
	}
	// This goroutine writes. It first lets the goroutines that are ready
	// to run (workers finishing requests of the same burst) append their
	// messages, so that they share this write instead of one write each;
	// when nothing else is ready it goes on at once. (A ready goroutine
	// that computes for long delays the write by at most its time slice,
	// as it delays any goroutine waiting for a processor.)
	c.flushing = true
	c.wmu.Unlock()
	runtime.Gosched()
	c.wmu.Lock()
	c.flushing = false
	c.flushLocked()
}

// queueMsg appends msg and a newline to the reading goroutine's own output
// (c.local), without a lock and without writing it, unless enough is
// there: the reading goroutine flushes before it waits for more input.
// Responses served inline are appended there the same way (inline), so
// that a burst of pipelined requests is answered with one write. Only the
// reading goroutine calls it.
func (c *stdioConn) queueMsg(msg []byte) {
	c.local = append(c.local, msg...)
	c.local = append(c.local, '\n')
	if len(c.local) >= stdioQueueBytes {
		c.flush()
	}
}

// reply writes msg after what the reading goroutine queued, now (or as
// part of the write in progress). Only the reading goroutine calls it.
func (c *stdioConn) reply(msg []byte) {
	c.queueMsg(msg)
	c.flush()
}

// appendLocked appends msg (and a newline when nl is set) to the pending
// output, first waiting while too much is pending behind a write in
// progress. It reports false, appending nothing, once ServeStdio has
// returned. c.wmu is held.
func (c *stdioConn) appendLocked(msg []byte, nl bool) bool {
	for c.flushing && len(c.pending) >= stdioMaxPending && !c.closed {
		c.wcond.Wait()
	}
	if c.closed {
		return false
	}
	c.pending = append(c.pending, msg...)
	if nl {
		c.pending = append(c.pending, '\n')
	}
	return true
}

// flush moves what the reading goroutine queued to the pending output and
// writes everything pending (or leaves it to the goroutine that is
// writing). Only the reading goroutine calls it. Messages of other
// goroutines do not wait in the pending output: the goroutine that appends
// one writes it, or the goroutine writing does.
func (c *stdioConn) flush() {
	if len(c.local) == 0 {
		return
	}
	c.wmu.Lock()
	ok := c.appendLocked(c.local, false)
	if cap(c.local) <= 2*stdioQueueBytes {
		c.local = c.local[:0]
	} else {
		c.local = nil
	}
	if !ok {
		c.wmu.Unlock()
		return
	}
	c.flushLocked()
}

// flushLocked writes everything pending unless another goroutine is
// writing, which then writes it too. It is called with c.wmu held and
// releases it.
func (c *stdioConn) flushLocked() {
	if c.flushing || c.closed {
		c.wmu.Unlock()
		return
	}
	c.flushing = true
	for len(c.pending) > 0 {
		out := c.pending
		c.pending = c.spare[:0]
		c.spare = nil
		if c.werr == nil {
			c.wmu.Unlock()
			_, err := c.w.Write(out)
			c.wmu.Lock()
			if err != nil && c.werr == nil {
				c.werr = err // as a bufio.Writer would, write no more
			}
		}
		if cap(out) <= stdioMaxPending {
			c.spare = out[:0]
		}
		c.wcond.Broadcast() // room for writers waiting in appendLocked
	}
	c.flushing = false
	c.wcond.Broadcast()
	c.wmu.Unlock()
}

// dispatch handles one line, which points into the reader's buffer. It is
// decoded once, in place, with its _meta read in the same pass (or taken
// from the previous request, when only the id differs: c.dc). A modern
// server/discover is answered from there; anything else is copied out of
// the reader's buffer first (the reader reuses it), with the decoded spans
// moved onto the copy. It returns false when the connection has been
// stopped and the line was ignored.
func (c *stdioConn) dispatch(ctx context.Context, line []byte) bool {
	var msg jsonrpc.Message
	var mv metaVisitor
	if derr := c.dc.decode(line, &msg, &mv); derr != nil {
		c.reply(jsonrpc.AppendError(nil, msg.ID, derr))
		return true
	}
	if c.sess == nil && msg.IsRequest() && msg.Method != "initialize" && c.s.legacyOnly() {
		// A server of the legacy era alone knows no method before
		// initialize, as servers before 2026-07-28 do.
		c.reply(jsonrpc.AppendError(nil, msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + msg.Method + "; send initialize first"}))
		return true
	}
	if c.sess == nil && c.s.icpt == nil && msg.Method == "server/discover" && msg.IsRequest() {
		if served, ok := c.inline(&msg, &mv); served {
			return ok
		}
	}
	call := &stdioCall{}
	call.line = bytes.Clone(line)
	if !call.own(line, &msg, &mv) {
		// A span the decoder returned is not inside line: decode the
		// copy instead (it decoded before).
		mv = metaVisitor{}
		msg, _ = decodeVisit(call.line, mv.visit)
		mv.finish(msg.Params)
	}
	call.msg, call.rm, call.merr = msg, mv.rm, mv.err
	if c.route(&call.msg) {
		return true
	}
	if c.serveInitialize(ctx, &call.msg) {
		return true
	}
	return c.start(ctx, call)
}

// own moves msg and mv, decoded from line, onto call.line, a copy of line.
// It reports false, leaving msg and mv unchanged, when a span is not inside
// line.
func (call *stdioCall) own(line []byte, msg *jsonrpc.Message, mv *metaVisitor) bool {
	return moveSpans(msg, mv, line, call.line)
}

// route delivers the messages that are not requests: a response, from a
// legacy client answering a request of the server (legacy.go; the modern
// era sends none), and notifications. It reports whether msg was one.
func (c *stdioConn) route(msg *jsonrpc.Message) bool {
	switch {
	case msg.IsResponse():
		if c.sess != nil {
			c.sess.deliver(msg)
		}
		return true
	case msg.IsNotification():
		if msg.Method == "notifications/cancelled" {
			c.cancel(msg.Params)
		} else if c.sess != nil {
			c.sess.handleNotification(msg)
		}
		return true
	}
	return false
}

// serveInitialize is the legacy routing step: initialize without modern
// _meta switches the connection to the legacy era for good (legacy.go). It
// is answered before the next line is read, so that a client that does not
// wait for the answer still finds the session initialized. It reports
// whether msg was such an initialize.
func (c *stdioConn) serveInitialize(ctx context.Context, msg *jsonrpc.Message) bool {
	if msg.Method != "initialize" || c.s.legacy == nil || (c.sess == nil && !c.s.legacy.only && hasModernMeta(msg.Params)) {
		return false
	}
	if c.sess == nil {
		ss := c.s.newStdioSession(c.writeMsg)
		c.mu.Lock()
		c.sess = ss
		c.mu.Unlock()
	}
	resp, _ := c.s.Handle(ctx, nil, &Incoming{Message: msg, Transport: TransportStdio, session: c.sess}, nil)
	c.reply(resp)
	return true
}

// start admits a request and runs it in a worker: it takes an in-flight
// slot (waiting for one, after flushing the pending output, when all are
// taken), registers the call under its id, refusing a duplicate id, and
// hands the call to a worker. It returns false when the connection has
// been stopped.
func (c *stdioConn) start(ctx context.Context, call *stdioCall) bool {
	msg := &call.msg
	call.sess = c.sess
	call.key = string(msg.ID.Raw())
	call.ctx, call.cancel = context.WithCancel(ctx)
	call.listen = msg.Method == "subscriptions/listen"
	// Listen streams stay open indefinitely: they do not take one of the
	// in-flight slots (the server's MaxSubscriptions bounds them), so
	// that a client with many of them can still send requests and
	// cancellations.
	if !call.listen {
		select {
		case c.sem <- struct{}{}:
		default:
			// Reading pauses until a request ends: first write what is
			// pending, which may not wait for that.
			c.flush()
			c.sem <- struct{}{}
		}
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		c.release(call)
		call.cancel()
		return false
	}
	if _, dup := c.inflight[call.key]; dup {
		c.mu.Unlock()
		c.release(call)
		call.cancel()
		c.reply(jsonrpc.AppendError(nil, msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: a request with this id is already in flight"}))
		return true
	}
	c.inflight[call.key] = call
	c.calls.Add(1)
	c.wg.Add(1)
	c.mu.Unlock()
	c.run(call)
	return true
}

// release gives back the in-flight slot call took.
func (c *stdioConn) release(call *stdioCall) {
	if !call.listen {
		<-c.sem
	}
}

// serve runs a call that start admitted, in a worker, and writes its
// response.
func (c *stdioConn) serve(call *stdioCall) {
	defer func() {
		c.release(call)
		c.wg.Done()
	}()
	buf := c.s.getBuf()
	// A pointer to the notifier in the call: the Notifier costs no
	// allocation of its own.
	call.notifier = stdioNotifier{c: c, call: call, sess: call.sess}
	mv := metaVisitor{rm: call.rm, err: call.merr, done: true}
	resp, _ := c.s.handle(call.ctx, *buf, &Incoming{Message: &call.msg, Transport: TransportStdio, session: call.sess}, &call.notifier, nil, &mv)
	call.mu.Lock()
	call.done = true
	if !call.cancelled && len(resp) > 0 {
		c.writeMsg(resp)
	}
	call.mu.Unlock()
	*buf = resp[:0]
	c.s.putBuf(buf)
	c.mu.Lock()
	delete(c.inflight, call.key)
	c.calls.Add(-1)
	c.mu.Unlock()
	call.cancel()
}

// inline serves a modern server/discover on a server without interceptors
// (it never blocks) in the reading goroutine, from the reader's buffer,
// with the _meta read while decoding; its response waits in the pending
// output (queueMsg). Interceptors may take their time: with them, discover
// runs in a worker like any request. It reports whether it served the
// request (false: a request with the same id is in flight, and dispatch
// answers that) and, like dispatch, false as its second result when the
// connection has been stopped.
func (c *stdioConn) inline(msg *jsonrpc.Message, mv *metaVisitor) (served, ok bool) {
	if c.halted.Load() {
		return true, false
	}
	if c.calls.Load() > 0 {
		c.mu.Lock()
		_, dup := c.inflight[string(msg.ID.Raw())]
		c.mu.Unlock()
		if dup {
			return false, true
		}
	}
	// What handle does for server/discover without interceptors, with
	// msg on the caller's frame: no allocation.
	// The response goes straight into the queued output (see queueMsg).
	c.local, _ = c.s.discover(c.local, msg, nil, mv)
	c.local = append(c.local, '\n')
	if len(c.local) >= stdioQueueBytes {
		c.flush()
	}
	return true, true
}

// run runs call on an idle worker goroutine, or on a new one. Workers stay
// (up to maxIdleWorkers idle ones) for the life of the connection, so that
// a request runs on a stack an earlier one already grew instead of growing
// a fresh goroutine's stack.
func (c *stdioConn) run(call *stdioCall) {
	select {
	case c.jobs <- call:
	default:
		go c.worker(call)
	}
}

func (c *stdioConn) worker(call *stdioCall) {
	for {
		c.serve(call)
		if c.idle.Add(1) > maxIdleWorkers {
			c.idle.Add(-1)
			return
		}
		select {
		case call = <-c.jobs:
			c.idle.Add(-1)
		case <-c.quit:
			c.idle.Add(-1)
			return
		}
	}
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

// endListens ends every listen stream at the end of input: with its
// completion result, which a client that closed only its end of the pipe
// still reads (it may also be signalling the server to stop, and the
// result must not be lost to the race), or abandoned before it is open.
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
		call.mu.Lock()
		finish := call.finish
		call.mu.Unlock()
		if finish != nil {
			finish()
		} else {
			call.abandon()
		}
	}
}
