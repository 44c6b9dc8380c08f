package mcp

// Streamable HTTP of the legacy era (2025-11-25 basic/transports.mdx):
// sessions minted by initialize, the standalone GET stream, DELETE, and
// resumable SSE streams (event ids, the priming event, retry, Last-Event-ID).

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// sseRetry is the reconnection delay sent in priming events: how long a
// polling client waits before it resumes a stream.
var sseRetry = time.Second

// Retention bounds of stream events kept for a replay.
const (
	maxStreamEvents     = 1024 // per POST stream, while it is not complete
	maxStandaloneEvents = 64   // for the GET stream
)

var (
	errSessionNotFound = &Error{Code: -32001, Message: "Session not found: it expired or was ended; send initialize to open a new one", status: http.StatusNotFound}
	errSessionStore    = &Error{Code: jsonrpc.CodeInternalError, Message: "Session store unavailable", status: http.StatusServiceUnavailable}
	errTooMany         = &Error{Code: jsonrpc.CodeInternalError, Message: "Too many sessions; try again later", status: http.StatusServiceUnavailable}
	errNeedSession     = &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Bad Request: missing Mcp-Session-Id header; a legacy client sends initialize first and then the session id it got on every request", status: http.StatusBadRequest}
	errBadLastEventID  = &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Bad Request: unknown Last-Event-ID", status: http.StatusBadRequest}
	errDuplicateID     = &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: a request with this id is already in flight in this session"}
)

// postedRequest is one POST as ServeHTTP read it: the parameters of the legacy
// era's paths (serveLegacyPost, session.serveRequest) in one value.
// ServeHTTP keeps it on its frame and hands out a pointer, which nothing
// keeps past the call. The headers, the message, its _meta and the buffer
// are held by value, not by pointer: escape analysis does not tell a
// struct's fields apart, so once a session's call keeps the ResponseWriter,
// the Request or the Principal, every pointer in the struct is taken to
// leak, and pointers to ServeHTTP's locals would move them to the heap.
// Held by value, only what they point to (the pooled buffer, the request's
// header map, all on the heap already) is taken to leak.
type postedRequest struct {
	w         http.ResponseWriter
	r         *http.Request
	principal *Principal // the authenticated caller, if any
	// hh holds the request's headers, picked by ServeHTTP.
	hh httpHeaders
	// msg and its _meta mv were decoded from the body, the first body
	// bytes of buf.
	msg jsonrpc.Message
	mv  metaVisitor
	// buf is ServeHTTP's pooled buffer: a request of a session takes it
	// (serveRequest); body is the length of the body in it.
	buf  reqBuf
	body int
}

// serveLegacyPost serves a POST of the legacy era and reports true, or
// reports false for modern traffic, which ServeHTTP then serves. A request
// of a session takes the pooled buffer (see serveRequest).
func (s *Server) serveLegacyPost(post *postedRequest) bool {
	w, r, p, hh, msg := post.w, post.r, post.principal, &post.hh, &post.msg
	if s.legacy == nil {
		return false
	}
	// The checks are ordered so that modern traffic (no session id, not
	// initialize) reads two headers and does not scan the body.
	sid := hh.sessionID
	only := s.legacy.only
	if len(sid) == 0 {
		switch {
		case only && msg.IsRequest() && msg.Method == "initialize":
			s.legacyInitialize(w, r, heapMsg(msg), p)
			return true
		case only:
			// A server of the legacy era alone answers what comes
			// without a session as servers before 2026-07-28 do.
			writeHTTPError(w, msg.ID, errNeedSession)
			return true
		case !msg.IsRequest():
			return false
		case msg.Method == "initialize":
			if hasModernMeta(msg.Params) {
				return false
			}
			s.legacyInitialize(w, r, heapMsg(msg), p)
			return true
		}
		if v := hh.protocolVersion; len(v) == 1 && s.isLegacyVersion(v[0]) && !hasModernMeta(msg.Params) {
			writeHTTPError(w, msg.ID, errNeedSession)
			return true
		}
		return false
	}
	if !only && hasModernMeta(msg.Params) {
		return false
	}
	ss, err := s.legacy.sessions.lookup(r.Context(), sid[0], p)
	if err != nil {
		writeSessionError(w, msg.ID, err)
		return true
	}
	if v := hh.protocolVersion; len(v) > 0 && !s.isLegacyVersion(v[0]) {
		writeHTTPError(w, msg.ID, &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Bad Request: unsupported MCP-Protocol-Version " + strconv.Quote(v[0]) + " for this session; supported: " + strings.Join(protocol.LegacyVersions, ", "), status: http.StatusBadRequest})
		return true
	}
	switch {
	case msg.IsResponse():
		ss.deliver(heapMsg(msg))
		w.WriteHeader(http.StatusAccepted)
	case msg.IsNotification():
		ss.handleNotification(heapMsg(msg))
		w.WriteHeader(http.StatusAccepted)
	default:
		ss.serveRequest(post)
	}
	return true
}

// heapMsg returns a copy of msg for the legacy paths that keep it, so that
// ServeHTTP's own message need not live on the heap.
func heapMsg(msg *jsonrpc.Message) *jsonrpc.Message {
	c := *msg
	return &c
}

func writeSessionError(w http.ResponseWriter, id jsonrpc.ID, err error) {
	switch {
	case errors.Is(err, ErrSessionNotFound):
		writeHTTPError(w, id, errSessionNotFound)
	case errors.Is(err, errTooManySessions):
		writeHTTPError(w, id, errTooMany)
	default:
		writeHTTPError(w, id, errSessionStore)
	}
}

// legacyInitialize serves an initialize POST without a session: it opens a
// session and names it in the Mcp-Session-Id header of the response. On a
// server with authentication the session belongs to the caller p: other
// callers get 404 for it.
func (s *Server) legacyInitialize(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, p *Principal) {
	key := s.quota.clientKey(p, r.RemoteAddr, r.Header)
	if err := s.quota.take(quotaSessions, key); err != nil {
		writeHTTPError(w, msg.ID, err.(*Error))
		return
	}
	ss := newSession(s, newSessionID())
	ss.quotaKey = key // released when the session closes
	buf := s.getBuf()
	defer s.putBuf(buf)
	resp, status := s.Handle(r.Context(), *buf, &Incoming{Message: msg, Header: r.Header, Principal: p, Transport: TransportStreamableHTTP, remote: r.RemoteAddr, session: ss}, nil)
	*buf = resp[:0]
	if ss.state() == nil {
		ss.close() // initialize failed: no session
	}
	if st := ss.state(); st != nil {
		if p != nil {
			owned := *st
			owned.Owner = p.ID()
			ss.st.Store(&owned)
		}
		if err := s.legacy.sessions.add(r.Context(), ss); err != nil {
			ss.close()
			writeSessionError(w, msg.ID, err)
			return
		}
		w.Header().Set(protocol.HeaderSessionID, ss.id)
	}
	w.Header()["Content-Type"] = jsonContentType
	setRetryAfter(w.Header(), status)
	w.WriteHeader(status)
	w.Write(resp)
}

// serveLegacyStream serves GET (the standalone stream, or the resumption of
// a stream) and DELETE (the end of a session) of a legacy session, and
// reports true; it reports false for requests without Mcp-Session-Id,
// which ServeHTTP answers with 405 as a modern-only server does.
func (s *Server) serveLegacyStream(w http.ResponseWriter, r *http.Request) bool {
	if s.legacy == nil {
		return false
	}
	sid := r.Header[protocol.HeaderSessionID]
	if len(sid) == 0 || (r.Method != http.MethodGet && r.Method != http.MethodDelete) {
		return false
	}
	p, ok := s.authenticate(w, r, &jsonrpc.Message{})
	if !ok {
		return true
	}
	if r.Method == http.MethodDelete {
		if !s.legacy.sessions.remove(r.Context(), sid[0], p) {
			writeHTTPError(w, jsonrpc.ID{}, errSessionNotFound)
			return true
		}
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	ss, err := s.legacy.sessions.lookup(r.Context(), sid[0], p)
	if err != nil {
		writeSessionError(w, jsonrpc.ID{}, err)
		return true
	}
	if !acceptsSSE(r.Header["Accept"]) {
		writeHTTPError(w, jsonrpc.ID{}, &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Not Acceptable: the GET stream is text/event-stream", status: http.StatusNotAcceptable})
		return true
	}
	st, after := ss.standalone, int64(math.MaxInt64) // a fresh GET: no replay
	if le := r.Header.Get("Last-Event-ID"); le != "" {
		num, seq, ok := parseEventID(le)
		if !ok {
			writeHTTPError(w, jsonrpc.ID{}, errBadLastEventID)
			return true
		}
		if num != 0 {
			ss.mu.Lock()
			st = ss.streams[num]
			gone := num < ss.nextStream
			ss.mu.Unlock()
			if st == nil {
				if gone {
					// The stream is complete and was delivered: nothing is
					// left on it. 204 tells the client to stop polling.
					w.WriteHeader(http.StatusNoContent)
				} else {
					writeHTTPError(w, jsonrpc.ID{}, errBadLastEventID)
				}
				return true
			}
		}
		after = seq
	}
	c := newSSEConn(w, true)
	st.attach(c, after)
	st.hold(r.Context(), c)
	return true
}

// closeLegacyStreams ends the connections of the standalone GET streams of
// all sessions, so that a graceful shutdown of the HTTP server need not wait
// for them; clients reconnect (to another process) and resume. Requests in
// flight are left to finish.
func (s *Server) closeLegacyStreams() {
	if s.legacy == nil {
		return
	}
	m := s.legacy.sessions
	m.mu.Lock()
	all := make([]*session, 0, len(m.live))
	for _, ss := range m.live {
		all = append(all, ss)
	}
	m.mu.Unlock()
	for _, ss := range all {
		st := ss.standalone
		st.mu.Lock()
		c := st.conn
		st.conn = nil
		st.mu.Unlock()
		if c != nil {
			c.close()
		}
	}
}

// parseEventID parses an event id "<stream>_<seq>".
func parseEventID(id string) (num, seq int64, ok bool) {
	a, b, found := strings.Cut(id, "_")
	if !found {
		return 0, 0, false
	}
	n, err1 := strconv.ParseInt(a, 10, 64)
	q, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || n < 0 || q < 0 {
		return 0, 0, false
	}
	return n, q, true
}

// addStream opens st, the zero stream of a POST request.
func (ss *session) addStream(st *sseStream) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	st.sess, st.num = ss, ss.nextStream
	ss.nextStream++
	ss.streams[st.num] = st
}

// maxUndelivered bounds the complete streams a session keeps for a
// resumption that may never come.
const maxUndelivered = 16

// keepUndelivered notes a complete stream that waits for its client to
// resume it, dropping the oldest such stream past maxUndelivered.
func (ss *session) keepUndelivered(st *sseStream) {
	ss.mu.Lock()
	ss.undelivered = append(ss.undelivered, st.num)
	var evict []*sseStream
	for len(ss.undelivered) > maxUndelivered {
		if old := ss.streams[ss.undelivered[0]]; old != nil {
			evict = append(evict, old)
			delete(ss.streams, old.num)
		}
		ss.undelivered = ss.undelivered[1:]
	}
	ss.mu.Unlock()
	for _, old := range evict {
		old.shut()
	}
}

func (ss *session) dropStream(st *sseStream) {
	ss.mu.Lock()
	if ss.streams[st.num] == st {
		delete(ss.streams, st.num)
	}
	ss.mu.Unlock()
}

// sseStream is one logical SSE stream of a legacy session: the response
// stream of a POST, or the standalone GET stream (number 0). It outlives
// the connections that carry it: its events are numbered (id
// "<stream>_<seq>") and kept until the stream is complete and delivered,
// so a client that lost its connection, or was asked to poll, resumes with
// Last-Event-ID. It implements Notifier for the request it carries.
type sseStream struct {
	sess       *session
	num        int64
	standalone bool

	mu        sync.Mutex
	conn      *sseConn   // the connection carrying the stream, or nil
	events    []sseEvent // retained events, oldest first
	seq       int64      // the last event number given out
	resumable bool       // the client holds an event id of this stream
	done      bool       // the final response is in events
}

type sseEvent struct {
	seq  int64
	data []byte
}

// sseConn is one HTTP response that carries an sseStream.
type sseConn struct {
	w        http.ResponseWriter
	rc       *http.ResponseController // made when the response becomes a stream
	allowSSE bool
	sse      bool // the SSE header is written
	failed   bool
	closed   chan struct{} // closed when the server is done with the response
	once     sync.Once
	scratch  []byte
}

func newSSEConn(w http.ResponseWriter, allowSSE bool) *sseConn {
	c := &sseConn{}
	c.init(w, allowSSE)
	return c
}

// init readies the zero connection c.
func (c *sseConn) init(w http.ResponseWriter, allowSSE bool) {
	c.w, c.allowSSE, c.closed = w, allowSSE, make(chan struct{})
}

// sseWriteTimeout bounds one write to a client, so that a client that
// stops reading loses its connection (and resumes later) instead of
// holding up the handlers and broadcasts that write to it.
var sseWriteTimeout = 10 * time.Second

func (c *sseConn) close() { c.once.Do(func() { close(c.closed) }) }

func (c *sseConn) startSSE() {
	c.rc = http.NewResponseController(c.w)
	hd := c.w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	c.w.WriteHeader(http.StatusOK)
	c.sse = true
}

// write writes raw SSE text and flushes; it reports false on failure.
func (c *sseConn) write(b []byte) bool {
	if c.failed {
		return false
	}
	c.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout)) // not supported by every ResponseWriter
	if _, err := c.w.Write(b); err != nil {
		c.failed = true
		return false
	}
	if err := c.rc.Flush(); err != nil {
		c.failed = true
		return false
	}
	return true
}

func (c *sseConn) writeEvent(num, seq int64, data []byte) bool {
	b := append(c.scratch[:0], "event: message\nid: "...)
	b = strconv.AppendInt(b, num, 10)
	b = append(b, '_')
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, '\n', '\n')
	c.scratch = b
	return c.write(b)
}

// primes reports whether the session's clients expect a priming event.
func (st *sseStream) primes() bool {
	v := st.sess.state()
	return v != nil && v.ProtocolVersion >= primingVersion
}

// beginSSE turns the stream's connection into an SSE response, with the
// priming event (an id, the retry delay and empty data) for clients that
// expect one. Callers hold st.mu.
func (st *sseStream) beginSSE(c *sseConn) {
	st.openSSE(c)
	if st.primes() {
		b := []byte("id: ")
		b = strconv.AppendInt(b, st.num, 10)
		b = append(b, '_')
		b = strconv.AppendInt(b, st.seq, 10)
		b = append(b, "\nretry: "...)
		b = strconv.AppendInt(b, sseRetry.Milliseconds(), 10)
		b = append(b, "\ndata: \n\n"...)
		if c.write(b) {
			st.resumable = true
		}
	}
}

// attach makes c the stream's connection, replacing (and closing) an
// earlier one. after is -1 for a fresh POST, math.MaxInt64 for a fresh GET
// of the standalone stream, and otherwise the seq of the Last-Event-ID of a
// resumption, after which the retained events are replayed. A complete
// stream ends the connection after the replay.
func (st *sseStream) attach(c *sseConn, after int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if old := st.conn; old != nil {
		old.close()
	}
	st.conn = c
	st.sess.begun()
	switch {
	case after < 0:
		return // a fresh POST: JSON until something makes it a stream
	case after == math.MaxInt64:
		st.beginSSE(c) // a fresh GET stream: primed
		return
	}
	st.openSSE(c) // a resumption: the client has an id already
	for _, ev := range st.events {
		if ev.seq > after && !c.writeEvent(st.num, ev.seq, ev.data) {
			break
		}
	}
	if st.done && !c.failed {
		st.sess.dropStream(st) // before the client can see the end
		st.conn = nil
		c.close()
	}
}

// hold keeps the HTTP handler of connection c alive until the server is
// done with it or the client goes away.
func (st *sseStream) hold(rctx context.Context, c *sseConn) {
	defer st.sess.ended()
	select {
	case <-c.closed:
		if c.sse {
			// Give net/http's end of the stream a fresh deadline.
			c.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
		}
	case <-rctx.Done():
		st.detach(c)
	}
}

// openSSE writes the SSE header on c and starts its keep-alive comments.
// Callers hold st.mu.
func (st *sseStream) openSSE(c *sseConn) {
	c.startSSE()
	go st.keepAlive(c)
}

// keepAlive sends a comment on connection c every ServerOptions.HTTP.KeepAlive
// while it carries the stream; it also keeps the session from idling out
// (every 15 s when KeepAlive turns the comments off).
func (st *sseStream) keepAlive(c *sseConn) {
	every := st.sess.srv.keepAlive
	comment := every > 0
	if !comment {
		every = 15 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.closed:
			return
		case <-t.C:
			st.mu.Lock()
			if comment && st.conn == c && !c.write([]byte(":\n\n")) {
				st.conn = nil
				c.close()
			}
			st.mu.Unlock()
			if ss := st.sess; ss.id != "" && ss.srv.legacy != nil {
				ss.srv.legacy.sessions.store.Load(context.Background(), ss.id) // renew
				ss.touch()
			}
		}
	}
}

// detach forgets connection c (the client went away); the stream goes on.
func (st *sseStream) detach(c *sseConn) {
	st.mu.Lock()
	if st.conn == c {
		st.conn = nil
	}
	st.mu.Unlock()
	c.close()
}

// retain keeps an event for a replay. Callers hold st.mu.
func (st *sseStream) retain(data []byte) int64 {
	st.seq++
	max := maxStreamEvents
	if st.standalone {
		max = maxStandaloneEvents
	}
	if len(st.events) >= max {
		st.events = append(st.events[:0], st.events[1:]...)
	}
	st.events = append(st.events, sseEvent{seq: st.seq, data: bytes.Clone(data)})
	return st.seq
}

// Notify sends msg (a notification) on the stream. The first message
// turns a POST's response into an SSE stream; when the client accepts only
// JSON, it is dropped.
func (st *sseStream) Notify(msg []byte) {
	st.mu.Lock()
	st.send(msg)
	st.mu.Unlock()
}

// sendRequest sends a server-to-client request on the stream, as Notify
// does, and reports whether it went out or was kept for the client's
// resumption; it reports false when the stream cannot carry it (the client
// accepts only JSON, or lost the connection before it could resume).
func (st *sseStream) sendRequest(msg []byte) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.send(msg)
}

// send is Notify and sendRequest. Callers hold st.mu.
func (st *sseStream) send(msg []byte) bool {
	if st.done {
		return false
	}
	c := st.conn
	if c != nil && !c.sse {
		if !c.allowSSE {
			return false
		}
		st.beginSSE(c)
	}
	if c == nil && !st.resumable && !st.standalone {
		return false // nobody can ever read it
	}
	seq := st.retain(msg)
	if c != nil {
		if c.writeEvent(st.num, seq, msg) {
			st.resumable = true
		} else {
			st.conn = nil
			c.close()
		}
	}
	return true
}

// finish sends the response of the stream's request: as the JSON body when
// the response did not become a stream, otherwise as the last event. A
// stream whose response could not be delivered is kept for a resumption.
func (st *sseStream) finish(resp []byte, status int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.done = true
	c := st.conn
	delivered := false
	switch {
	case c != nil && !c.sse:
		hd := c.w.Header()
		hd["Content-Type"] = jsonContentType
		setRetryAfter(hd, status)
		c.w.WriteHeader(status)
		c.w.Write(resp)
		delivered = true
	default:
		seq := st.retain(resp)
		if c != nil {
			delivered = c.writeEvent(st.num, seq, resp)
		}
	}
	// The bookkeeping comes before the connection ends: a client that sees
	// its stream end and resumes at once must find it dropped (204), not
	// still listed.
	if delivered || !st.resumable {
		st.events = nil
		st.sess.dropStream(st)
	} else {
		st.sess.keepUndelivered(st)
	}
	if c != nil {
		st.conn = nil
		c.close()
	}
}

// closeConn ends the connection of a POST stream without ending the stream
// (LegacyRequest.CloseSSEStream): the client polls for the rest with Last-Event-ID.
// Clients older than 2025-11-25 do not poll, so for them it does nothing.
func (st *sseStream) closeConn() {
	st.mu.Lock()
	defer st.mu.Unlock()
	c := st.conn
	if c == nil || st.done || st.standalone || !st.primes() {
		return
	}
	if !c.sse {
		if !c.allowSSE {
			return
		}
		st.beginSSE(c)
	}
	if !st.resumable {
		return // the priming event did not go out: the client could not resume
	}
	st.conn = nil
	c.close()
}

// shut ends the stream's connection when the session ends.
func (st *sseStream) shut() {
	st.mu.Lock()
	c := st.conn
	st.conn = nil
	st.events = nil
	st.mu.Unlock()
	if c != nil {
		c.close()
	}
}
