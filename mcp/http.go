package mcp

import (
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// ServeHTTP serves the Streamable HTTP transport of revision 2026-07-28 on
// whatever path the Server is mounted at (conventionally /mcp): one POST per
// JSON-RPC message, answered with one JSON object, or with an SSE stream when
// the handler sends notifications before its result. GET and DELETE get 405.
// The transport only frames bytes: every request goes through Handle. On a
// server with ServerOptions.Auth, a request also needs a bearer token (see
// AuthOptions), checked after the Origin, size and media type checks.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Everything read of the POST lives in one value on this frame (see
	// postedRequest); the legacy era's paths get a pointer to it.
	var post postedRequest
	post.w, post.r = w, r
	hh, buf, msg, mv := &post.hh, &post.buf, &post.msg, &post.mv
	hh.scan(r.Header)
	if !s.admitHTTP(w, r, hh) {
		return
	}
	// Admission (quota.go), before the body is read: a slot of the
	// in-flight requests first.
	if !s.quota.enter() {
		writeHTTPError(w, jsonrpc.ID{}, s.quota.busyError())
		return
	}
	slot := true
	defer func() {
		if slot {
			s.quota.exit()
		}
	}()
	*buf = s.getReqBuf()
	defer buf.release(s) // nothing once a legacy call took it (legacy_call.go)
	body, counted, ok := s.readHTTPBody(w, r, buf.p)
	if counted > 0 {
		defer s.quota.unadmit(counted)
	}
	if !ok {
		return
	}
	post.body = len(body)
	if !decodeHTTP(w, body, msg, mv) {
		return
	}
	principal, ok := s.authenticate(w, r, msg)
	if !ok {
		return
	}
	post.principal = principal
	// Legacy-era traffic, by the routing rule in legacy.go: messages of a
	// session (Mcp-Session-Id) and initialize (legacy_http.go).
	if s.legacy != nil && s.serveLegacyPost(&post) {
		return
	}
	if msg.IsNotification() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if msg.IsResponse() {
		writeHTTPError(w, jsonrpc.ID{}, errResponseNotExp)
		return
	}
	out := (*buf.p)[len(body):len(body)]
	if msg.Method == "server/discover" && s.icpt == nil {
		s.serveDiscoverHTTP(w, buf.p, out, msg, hh, mv)
		return
	}
	if msg.Method == methodListen {
		// A listen stream is held by MaxSubscriptions, not by the
		// in-flight requests.
		slot = false
		s.quota.exit()
		s.detachListen(body, buf, msg, mv)
		out = nil
	}
	// The message and the sink share one allocation: both outlive this
	// frame (Handle keeps the message, handlers the sink).
	hx := &httpExchange{msg: *msg}
	sink := &hx.sink
	sink.w, sink.allowSSE, sink.keepAlive = w, acceptsSSE(hh.accept), s.keepAlive
	resp, status := s.handle(r.Context(), out, &Incoming{Message: &hx.msg, Header: r.Header, Principal: principal, Transport: TransportStreamableHTTP, remote: r.RemoteAddr}, sink, hh, mv)
	keepGrown(buf.p, out, resp)
	// The response counts against the in-flight budget while it is
	// written, so that large responses being sent shed new requests.
	if n := int64(len(resp)); n >= countedBytes {
		s.quota.charge(n)
		defer s.quota.unadmit(n)
	}
	sink.finish(resp, status)
}

// admitHTTP is the first step of ServeHTTP, before any admission slot is
// taken: the Origin and Host check, the header size limit, the method (GET
// and DELETE go to a legacy session, anything else but POST gets 405) and
// the media type. It reports whether the request goes on; when not, it has
// written the response.
func (s *Server) admitHTTP(w http.ResponseWriter, r *http.Request, hh *httpHeaders) bool {
	if e := s.checkOrigin(r, hh.origin); e != nil {
		writeHTTPError(w, jsonrpc.ID{}, e)
		return false
	}
	if hh.size > s.maxHeader {
		writeHTTPError(w, jsonrpc.ID{}, errHeaderTooLarge)
		return false
	}
	if r.Method != http.MethodPost {
		// GET and DELETE of a legacy session (legacy_http.go).
		if s.serveLegacyStream(w, r) {
			return false
		}
		w.Header().Set("Allow", "POST")
		writeHTTPError(w, jsonrpc.ID{}, errMethodNotAllowed)
		return false
	}
	if !isJSONContentType(hh.contentType) {
		writeHTTPError(w, jsonrpc.ID{}, errMediaType)
		return false
	}
	return true
}

// readHTTPBody reads the request body into the pooled buffer buf, within
// MaxBodyBytes and the in-flight byte budget. The budget counts bodies of
// countedBytes or more (the small ones are bounded by the connections that
// carry them, and skipping them keeps the common request free of shared
// counters): a body's declared length is reserved before it is read, and
// what it really holds once it is. It returns the body, capped so that an
// append to a span of it cannot reach the response appended after it, and
// the bytes it reserved, which the caller gives back when the request
// ends, also when ok is false; when ok is false it has written the
// response.
func (s *Server) readHTTPBody(w http.ResponseWriter, r *http.Request, buf *[]byte) (body []byte, counted int64, ok bool) {
	if r.ContentLength > s.maxBody {
		// Refused before a byte of it is read or counted.
		w.Header()["Connection"] = connectionClose
		writeHTTPError(w, jsonrpc.ID{}, errBodyTooLarge)
		return nil, 0, false
	}
	// net/http's ResponseWriters can set the connection's read deadline;
	// a wrapper that hides the method leaves the body untimed.
	dl, timed := w.(interface{ SetReadDeadline(time.Time) error })
	timed = timed && s.bodyTimeout > 0 && dl.SetReadDeadline(time.Now().Add(s.bodyTimeout)) == nil
	body, counted, err := s.readCounted(r.Body, *buf)
	*buf = body[:0]
	if err != nil {
		// The rest of the body is not read: net/http must not wait for it
		// to reuse the connection (nor, after a timeout, without end).
		w.Header()["Connection"] = connectionClose
		var ne net.Error
		switch {
		case errors.Is(err, errBusy):
			writeHTTPError(w, jsonrpc.ID{}, errBusy)
		case errors.Is(err, errTooLarge):
			writeHTTPError(w, jsonrpc.ID{}, errBodyTooLarge)
		case errors.As(err, &ne) && ne.Timeout():
			writeHTTPError(w, jsonrpc.ID{}, errBodyTimeout)
		default:
			writeHTTPError(w, jsonrpc.ID{}, &Error{Code: jsonrpc.CodeInvalidRequest, Message: "reading the request body failed"})
		}
		return nil, counted, false
	}
	if timed {
		dl.SetReadDeadline(time.Time{})
	}
	return body[:len(body):len(body)], counted, true
}

var connectionClose = []string{"close"}

// readCounted reads a request body into buf, failing with errTooLarge past
// MaxMessageBytes. It counts the body's bytes in the in-flight byte budget
// as they arrive (once there are countedBytes of them), never what a
// Content-Length only declares: a client that declares a large body and
// stalls holds nothing. It returns the bytes counted, which the caller
// gives back, and errBusy when the budget is spent.
func (s *Server) readCounted(r io.Reader, buf []byte) (body []byte, counted int64, err error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, rerr := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > s.maxBody {
			return buf, counted, errTooLarge
		}
		if l := int64(len(buf)); l >= countedBytes && l > counted {
			if !s.quota.admit(l - counted) {
				return buf, counted, errBusy
			}
			counted = l
		}
		if rerr == io.EOF {
			return buf, counted, nil
		}
		if rerr != nil {
			return buf, counted, rerr
		}
	}
}

// decodeHTTP decodes body into msg, collecting its _meta into mv. It
// reports whether the message decoded; when not, it has written the error.
func decodeHTTP(w http.ResponseWriter, body []byte, msg *jsonrpc.Message, mv *metaVisitor) bool {
	var derr *jsonrpc.Error
	if *msg, derr = decodeVisit(body, mv.visit); derr != nil {
		writeHTTPError(w, msg.ID, fromWire(derr))
		return false
	}
	mv.finish(msg.Params)
	return true
}

// serveDiscoverHTTP is the fast path of server/discover on a server without
// interceptors: answered without a sink (discover sends no notifications),
// into out, the tail of the pooled buffer buf, with the message on the
// caller's frame: no allocation.
func (s *Server) serveDiscoverHTTP(w http.ResponseWriter, buf *[]byte, out []byte, msg *jsonrpc.Message, hh *httpHeaders, mv *metaVisitor) {
	resp, status := s.discover(out, msg, hh, mv)
	keepGrown(buf, out, resp)
	writeJSON(w, resp, status)
}

// detachListen prepares a subscriptions/listen request to outlive the
// pooled buffer. A listen stream that cannot be parked (park.go: HTTP/2, a
// ResponseWriter without Hijack, DisableListenParking) stays in handle for
// as long as it is open, and holds no pooled buffer meanwhile: the message
// and its _meta are read again from a copy of the body (msg refers to it),
// the pooled buffer goes back to the pool (buf.release: ServeHTTP's
// deferred release then does nothing), and the response buffer is
// allocated when the stream ends.
func (s *Server) detachListen(body []byte, buf *reqBuf, msg *jsonrpc.Message, mv *metaVisitor) {
	body = slices.Clone(body)
	*mv = metaVisitor{}
	*msg, _ = decodeVisit(body, mv.visit) // it decoded before
	mv.finish(msg.Params)
	buf.release(s)
}

// keepGrown makes buf, the pooled buffer whose tail out was, the array resp
// grew into, if it outgrew out, so that the pool keeps the larger buffer.
func keepGrown(buf *[]byte, out, resp []byte) {
	if buf != nil && cap(resp) != cap(out) {
		*buf = resp[:0]
	}
}

// httpExchange is the state of one Streamable HTTP request that outlives
// ServeHTTP's frame, in one allocation.
type httpExchange struct {
	msg  jsonrpc.Message
	sink httpSink
}

// httpSink turns request-scoped notifications into an SSE response stream.
// Until the first notification the response is undecided; the final
// response is then written as plain JSON or as the last SSE event.
type httpSink struct {
	w         http.ResponseWriter
	allowSSE  bool
	keepAlive time.Duration // <= 0: no keep-alive comments

	mu       sync.Mutex
	sse      bool
	done     bool
	failed   bool
	hijacked bool // a parked listen stream took the connection (park.go)
	ka       *time.Timer
}

func (h *httpSink) Notify(msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done || h.failed || !h.allowSSE {
		return
	}
	if !h.sse {
		h.startSSE()
	}
	h.writeEvent(msg)
	if h.ka != nil {
		h.ka.Reset(h.keepAlive)
	}
}

// streams reports whether notifications reach the client at all.
func (h *httpSink) streams() bool { return h.allowSSE }

// hijack takes the connection from net/http for a listen stream that is
// parked (park.go), if nothing has been written yet and the response can
// be taken over: HTTP/1.x, and every ResponseWriter wrapper passes Hijack
// on. pipelined reports request bytes that net/http had read past this
// request; they are dropped with its buffers.
func (h *httpSink) hijack() (net.Conn, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sse || h.done || h.failed || !h.allowSSE {
		return nil, false
	}
	conn, rw, err := http.NewResponseController(h.w).Hijack()
	if err != nil {
		return nil, false
	}
	h.hijacked = true
	return conn, rw.Reader.Buffered() > 0
}

// abort makes a write stuck on a client that stopped reading fail at once,
// and every later write too. The handler then ends the response.
func (h *httpSink) abort() {
	http.NewResponseController(h.w).SetWriteDeadline(time.Now())
}

// startSSE switches the response to an SSE stream. Callers hold h.mu.
func (h *httpSink) startSSE() {
	hd := h.w.Header()
	hd["Content-Type"] = sseContentType
	hd["Cache-Control"] = noCache
	hd["X-Accel-Buffering"] = no
	h.w.WriteHeader(http.StatusOK)
	h.sse = true
	if h.keepAlive > 0 {
		// A timer rather than a goroutine per stream: idle streams cost
		// no stack. Every event pushes the next comment back.
		h.ka = time.AfterFunc(h.keepAlive, h.ping)
	}
}

// ping writes a keep-alive comment and schedules the next one.
func (h *httpSink) ping() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done || h.failed {
		return
	}
	if _, err := io.WriteString(h.w, ":\n\n"); err != nil {
		h.failed = true
		return
	}
	if err := http.NewResponseController(h.w).Flush(); err != nil {
		h.failed = true
		return
	}
	h.ka.Reset(h.keepAlive)
}

// The values of the headers of an SSE response. net/http does not change
// the slices of a response's header map, so every response can share them.
var (
	sseContentType = []string{"text/event-stream"}
	noCache        = []string{"no-cache"}
	no             = []string{"no"}
)

// writeEvent writes one SSE event holding msg. Callers hold h.mu. The three
// writes land in the response's buffer, and leave it at the flush: no
// scratch buffer stays with an idle stream.
func (h *httpSink) writeEvent(msg []byte) {
	io.WriteString(h.w, "event: message\ndata: ")
	h.w.Write(msg)
	if _, err := io.WriteString(h.w, "\n\n"); err != nil {
		h.failed = true
		return
	}
	if err := http.NewResponseController(h.w).Flush(); err != nil {
		h.failed = true
	}
}

// finish writes the final response. An empty resp (status 0) ends an SSE
// stream without a response.
func (h *httpSink) finish(resp []byte, status int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.done = true
	if h.ka != nil {
		h.ka.Stop()
	}
	if h.hijacked {
		return // the parked stream writes its own end
	}
	if h.sse {
		if !h.failed && len(resp) > 0 {
			h.writeEvent(resp)
		}
		return
	}
	if len(resp) == 0 {
		// Not reached: only a listen stream, which is SSE by then, ends
		// without a response.
		writeHTTPError(h.w, jsonrpc.ID{}, &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"})
		return
	}
	writeJSON(h.w, resp, status)
}

// writeJSON writes resp as a JSON response with the given status.
func writeJSON(w http.ResponseWriter, resp []byte, status int) {
	w.Header()["Content-Type"] = jsonContentType
	if status != http.StatusOK {
		setRetryAfter(w.Header(), status)
	}
	w.WriteHeader(status)
	w.Write(resp)
}

var jsonContentType = []string{"application/json"}

func writeHTTPError(w http.ResponseWriter, id jsonrpc.ID, e *Error) {
	w.Header()["Content-Type"] = jsonContentType
	setRetryAfter(w.Header(), e.HTTPStatus())
	w.WriteHeader(e.HTTPStatus())
	w.Write(jsonrpc.AppendError(nil, id, e.wire()))
}

var errTooLarge = errors.New("body too large")

// loopbackOnly reports whether the listen address addr (HOST:PORT) takes
// connections from this host only: its host is localhost or a loopback IP.
// An empty or unspecified host listens on every interface.
func loopbackOnly(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// httpHeaders holds the request headers that ServeHTTP and the validator
// read, picked out of the header map in the one pass over it that also
// sums its size, so that none of them costs a map lookup of its own.
type httpHeaders struct {
	// size is the total size of the header names and values, as they
	// arrived less the separators.
	size            int
	contentType     []string
	accept          []string
	origin          []string
	sessionID       []string
	protocolVersion []string
	method          []string
	name            []string
}

// scan fills hh from h. Keys match exactly, as index expressions on h do.
func (hh *httpHeaders) scan(h http.Header) {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v)
		}
		switch k {
		case "Content-Type":
			hh.contentType = vs
		case "Accept":
			hh.accept = vs
		case "Origin":
			hh.origin = vs
		case protocol.HeaderSessionID:
			hh.sessionID = vs
		case protocol.HeaderProtocolVersion:
			hh.protocolVersion = vs
		case protocol.HeaderMethod:
			hh.method = vs
		case protocol.HeaderName:
			hh.name = vs
		}
	}
	hh.size = n
}

func isJSONContentType(v []string) bool {
	if len(v) != 1 {
		return false
	}
	if v[0] == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(v[0])
	return err == nil && mt == "application/json"
}

// acceptsSSE reports whether the client accepts text/event-stream. A missing
// Accept header accepts everything.
func acceptsSSE(v []string) bool {
	if len(v) == 0 {
		return true
	}
	for _, a := range v {
		if strings.Contains(a, "text/event-stream") || strings.Contains(a, "*/*") || strings.Contains(a, "text/*") {
			return true
		}
	}
	return false
}

// checkOrigin protects against DNS rebinding: an Origin header must be a
// loopback origin or allowed by ServerOptions.HTTP.AllowedOrigins, and a request
// that reached a loopback address must name a loopback Host or an allowed
// one.
// origins holds the request's Origin header values.
func (s *Server) checkOrigin(r *http.Request, origins []string) *Error {
	if len(origins) > 0 {
		// A request has at most one Origin (RFC 6454): a second one could
		// be what a proxy or browser acts on, so it is refused, not skipped.
		if len(origins) > 1 || !s.originAllowed(origins[0]) {
			return errForbiddenOrigin
		}
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && isLoopbackAddr(la) {
		if !s.hostAllowed(r.Host) {
			return errForbiddenHost
		}
	}
	return nil
}

func (s *Server) originAllowed(origin string) bool {
	for _, o := range s.opts.HTTP.AllowedOrigins {
		if o == "*" || o == origin {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

func (s *Server) hostAllowed(host string) bool {
	for _, h := range s.opts.HTTP.AllowedHosts {
		if h == "*" || strings.EqualFold(h, host) {
			return true
		}
	}
	if host == "" {
		return true // HTTP/1.0 without Host
	}
	name := hostName(host)
	for _, h := range s.opts.HTTP.AllowedHosts {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return isLoopbackHost(name)
}

// hostName returns the host part of a Host header value (without port or
// IPv6 brackets), or "" when the value is not host, host:port, [ipv6] or
// [ipv6]:port with a port of digits: "localhost:evil" and "[::1]evil.com"
// name no host.
func hostName(host string) string {
	if strings.HasPrefix(host, "[") {
		i := strings.IndexByte(host, ']')
		if i < 0 || !validPort(host[i+1:]) {
			return ""
		}
		return host[1:i]
	}
	if i := strings.IndexByte(host, ':'); i >= 0 {
		if strings.IndexByte(host[i+1:], ':') >= 0 || !validPort(host[i:]) {
			return "" // a bare IPv6 address is not a Host value
		}
		return host[:i]
	}
	return host
}

// validPort reports whether p is empty or ":" followed by at most 5 digits
// (RFC 3986 allows an empty port).
func validPort(p string) bool {
	if p == "" {
		return true
	}
	if p[0] != ':' || len(p) > 6 {
		return false
	}
	for i := 1; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	return true
}

func isLoopbackHost(h string) bool {
	switch h {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
	return ip != nil && ip.IsLoopback()
}

func isLoopbackAddr(a net.Addr) bool {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	return false
}

// NewHTTPServer returns an *http.Server that serves s at path (default
// "/mcp") on addr, with the limits a public endpoint needs: a header limit
// backing ServerOptions.HTTP.MaxHeaderBytes, read and idle timeouts, and no write
// timeout (SSE responses are
// long-lived; handlers are cancelled when the client goes away). A server
// with AuthOptions also serves its Protected Resource Metadata at the
// well-known paths (see ProtectedResourceMetadata). Every server also
// answers health probes: GET /healthz (LivenessHandler) and GET /readyz
// (ReadinessHandler).
// A server without a requestState key (ServerOptions.State.Keys or
// MCPKIT_STATE_KEYS) warns here, at start-up, when addr is not loopback-only
// (it may be one replica of several); on loopback, or with an empty addr
// (the caller serves on a listener of its own), it says so only at its
// first seal, at Info level.
func (s *Server) NewHTTPServer(addr, path string) *http.Server {
	// A replica behind a load balancer needs the shared key: say so now
	// rather than at the first elicitation.
	if addr != "" && !loopbackOnly(addr) {
		s.state.warnShared("listening on " + addr + ", not on loopback only")
	}
	if path == "" {
		path = "/mcp"
	}
	mux := http.NewServeMux()
	mux.Handle(path, s)
	s.mountAuth(mux)
	s.mountHealth(mux)
	hs := &http.Server{
		Addr:              addr,
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    4 * s.maxHeader,
		BaseContext:       func(net.Listener) context.Context { return context.Background() },
	}
	// Legacy sessions' GET streams never end by themselves (legacy_http.go).
	hs.RegisterOnShutdown(s.closeLegacyStreams)
	return hs
}
