package mcp

// The request of a legacy Streamable HTTP session while it is served, and
// the goroutines that run it (issue 20, bench/NOTES.md "Legacy tools/call,
// profiled").

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// legacyCall is one request of a legacy HTTP session, from its POST to its
// response, in one allocation: the message and its _meta as ServeHTTP
// decoded them, the pooled buffer they point into (the call owns it from
// ServeHTTP on, since the handler may outlive the POST), the stream that
// carries the response, and the connection of the POST.
type legacyCall struct {
	ss     *session
	msg    jsonrpc.Message
	pre    legacyPre
	in     Incoming
	buf    reqBuf // the body, then the response after it: the call owns it
	body   int    // the length of the body in buf
	ctx    context.Context
	cancel context.CancelFunc
	st     sseStream
	conn   sseConn
}

// run serves the call on a worker goroutine: the handler, then the
// response on the call's stream, whichever connection carries it by then.
func (c *legacyCall) run() {
	ss := c.ss
	s := ss.srv
	out := (*c.buf.p)[c.body:c.body]
	resp, status := s.handleLegacy(c.ctx, out, &c.in, &c.st, &c.pre)
	keepGrown(c.buf.p, out, resp)
	// The id may be used again once the client has the response.
	ss.untrackRequest(c.msg.ID)
	c.st.finish(resp, status)
	c.cancel()
	c.buf.release(s)
}

// legacyWorkers runs the requests of legacy HTTP sessions. A request runs
// on a goroutine of its own, not on ServeHTTP's, so that the POST can end
// while the handler goes on (the client lost the connection, or the
// handler called LegacyRequest.CloseSSEStream). A fresh goroutine per
// request spent a fifth of a call growing its stack (bench/NOTES.md), so
// the goroutines are kept and reused: a goroutine that finishes a request
// waits for the next, at most maxIdleLegacyWorkers wait, and every
// workerIdle the goroutines waiting then end (a timer per goroutine, reset
// per request, cost more than the reuse saves). The goroutines belong to
// the Server that made them, so a Server made outside a synctest bubble
// must not serve requests inside one; Server.Shutdown ends them.
type legacyWorkers struct {
	jobs  chan *legacyCall // unbuffered: a send succeeds only if a worker waits
	quit  chan struct{}    // unbuffered: tells a waiting worker to end
	idle  atomic.Int32     // workers waiting on jobs
	armed atomic.Bool      // reap is scheduled
	// stopped is closed by Server.Shutdown: waiting workers end at once,
	// busy ones when their request is done.
	stopped  chan struct{}
	stopOnce sync.Once
}

const (
	// maxIdleLegacyWorkers bounds the goroutines kept waiting for
	// requests (each holds a stack, which the runtime shrinks while it
	// idles).
	maxIdleLegacyWorkers = 128
	// workerIdle is how often the waiting goroutines end.
	workerIdle = 10 * time.Second
)

func newLegacyWorkers() legacyWorkers {
	return legacyWorkers{jobs: make(chan *legacyCall), quit: make(chan struct{}), stopped: make(chan struct{})}
}

// stop ends the waiting workers and keeps the busy ones from waiting
// again. A request dispatched after stop still runs, on a goroutine that
// ends with it.
func (p *legacyWorkers) stop() {
	p.stopOnce.Do(func() { close(p.stopped) })
}

// dispatch runs c on a waiting worker, or on a new one if none waits.
func (p *legacyWorkers) dispatch(c *legacyCall) {
	select {
	case p.jobs <- c:
	default:
		go p.work(c)
	}
}

func (p *legacyWorkers) work(c *legacyCall) {
	for {
		c.run()
		c = nil
		select {
		case <-p.stopped:
			return
		default:
		}
		if p.idle.Add(1) > maxIdleLegacyWorkers {
			p.idle.Add(-1)
			return
		}
		if p.armed.CompareAndSwap(false, true) {
			time.AfterFunc(workerIdle, p.reap)
		}
		select {
		case c = <-p.jobs:
			p.idle.Add(-1)
		case <-p.quit:
			p.idle.Add(-1)
			return
		case <-p.stopped:
			p.idle.Add(-1)
			return
		}
	}
}

// reap ends the workers that wait, and runs again in workerIdle while any
// wait.
func (p *legacyWorkers) reap() {
	for done := false; !done; {
		select {
		case p.quit <- struct{}{}:
		default:
			done = true
		}
	}
	p.armed.Store(false)
	if p.idle.Load() > 0 && p.armed.CompareAndSwap(false, true) {
		time.AfterFunc(workerIdle, p.reap)
	}
}

// serveRequest serves a request of the session. The handler runs on a
// worker goroutine (legacyWorkers) with a context of the session, not of
// the HTTP request: in this era a lost connection is not a cancellation
// (notifications/cancelled and the end of the session are). The response
// travels on the request's stream, which outlives its connection: if the
// connection is lost or the handler calls LegacyRequest.CloseSSEStream, the
// client resumes with GET and Last-Event-ID. post is the POST as ServeHTTP
// read it; the call takes its buffer unless it answers at once.
func (ss *session) serveRequest(post *postedRequest) {
	w, r, msg := post.w, post.r, &post.msg
	s := ss.srv
	c := &legacyCall{ss: ss, msg: *msg, body: post.body}
	c.pre.rm, c.pre.err = post.mv.rm, post.mv.err
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(r.Context()))
	if !ss.trackRequest(msg.ID, c.cancel) {
		c.cancel()
		writeHTTPError(w, msg.ID, errDuplicateID)
		return
	}
	c.buf = post.buf.take()
	// The handler may outlive ServeHTTP; it only reads the request's
	// header map, which net/http does not reuse.
	c.in = Incoming{Message: &c.msg, Header: r.Header, Principal: post.principal, Transport: TransportStreamableHTTP, remote: r.RemoteAddr, session: ss}
	ss.addStream(&c.st)
	c.conn.init(w, acceptsSSE(post.hh.accept))
	c.st.attach(&c.conn, -1)
	s.legacy.workers.dispatch(c)
	c.st.hold(r.Context(), &c.conn)
}
