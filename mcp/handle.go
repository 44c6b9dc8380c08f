package mcp

import (
	"context"
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Incoming is one JSON-RPC request as a transport received it.
type Incoming struct {
	// Message is the decoded request. Its slices point into the transport's
	// buffer, which must stay unchanged until Handle returns.
	Message *jsonrpc.Message
	// Header holds the HTTP request headers on Streamable HTTP, and is nil
	// on transports without headers (stdio). Header checks run only when it
	// is non-nil.
	Header http.Header
	// Principal is the authenticated caller, when the transport verified
	// one. Per-primitive scope checks and list filtering apply to requests
	// with a Principal; a request without one is trusted by its transport.
	Principal *Principal
	// Transport names the transport, for interceptors (Call.Transport).
	// The built-in transports set it.
	Transport Transport

	// remote is the peer's address (http.Request.RemoteAddr) on Streamable
	// HTTP, for the per-client quotas and Call.PeerAddr; "" elsewhere.
	remote string

	// session is the legacy-era session (HTTP session or stdio connection
	// after initialize) the request belongs to. The built-in transports set
	// it for legacy traffic; it is nil for modern requests. See legacy.go.
	session *session
}

// Notifier receives the notifications that relate to one request (progress,
// log messages, subscription events) while the request is handled. Each call
// passes one complete JSON-RPC message without a trailing newline; the slice
// is only valid during the call. Notify is called from the handler's
// goroutines and must be safe for concurrent use. Notifications sent after
// Handle returned are dropped before they reach the Notifier.
type Notifier interface {
	Notify(msg []byte)
}

// Handle serves one JSON-RPC request: it validates the request, runs the
// method, and appends the complete JSON-RPC response (result or error) to
// dst, returning it with the HTTP status that the response travels with on
// Streamable HTTP. It is the single seam where every transport meets the
// protocol; ctx is cancelled when the client goes away. n may be nil.
//
// A subscriptions/listen request stays in Handle for as long as its stream
// is open, sending its notifications through n. (ServeHTTP instead parks
// the streams of HTTP/1.x clients outside net/http and returns; see
// ServerOptions.HTTP.DisableListenParking.) In one case Handle appends
// nothing and returns status 0: when the server drops a listen stream
// whose client reads too slowly; the transport then ends the stream
// without a response, which tells the client to reconnect. A server with
// Legacy.Only answers a request outside a legacy session with -32601.
func (s *Server) Handle(ctx context.Context, dst []byte, in *Incoming, n Notifier) ([]byte, int) {
	if in.session == nil && s.legacy != nil && s.legacy.only && in.Message.IsRequest() {
		// Legacy.Only: the modern era is not served. The transports
		// refuse such requests before they get here (stdio.go,
		// legacy_http.go); Handle does for any other.
		return refuseModern(dst, in)
	}
	return s.handle(ctx, dst, in, n, nil, nil)
}

// refuseModern answers a request without a session on a server of the
// legacy era alone (Legacy.Only): -32601, as servers before 2026-07-28
// answer anything before initialize.
func refuseModern(dst []byte, in *Incoming) ([]byte, int) {
	return appendEraError(legacyWire{}, dst, in.Message.ID, &Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + in.Message.Method + "; send initialize first"})
}

// handle is Handle, with the headers the validator reads already picked
// out of in.Header when hh is not nil (ServeHTTP does that in its one pass
// over the header map), and with the request's _meta already read when mv
// is not nil (the transport decoded with decodeVisit).
func (s *Server) handle(ctx context.Context, dst []byte, in *Incoming, n Notifier, hh *httpHeaders, mv *metaVisitor) ([]byte, int) {
	if in.session != nil {
		// Legacy era (2025-11-25 and earlier): served by legacy.go.
		return s.handleLegacy(ctx, dst, in, n, nil)
	}
	// handle itself keeps a small frame: a listen stream idles below it,
	// and the runtime shrinks an idle goroutine's stack only when its
	// frames use less than a quarter of it. The work is in prepare and
	// answerError, which have returned by then.
	x, h, out, status := s.prepare(dst, in, n, hh, mv)
	if x == nil {
		if s.icpt != nil && status >= 400 {
			return s.rejectedIntercepted(ctx, dst, out, status, in)
		}
		return out, status
	}
	if s.icpt != nil {
		return s.handleIntercepted(ctx, dst, x, h, in, n)
	}
	mark := len(dst)
	out, err := x.run(ctx, h, dst)
	return s.finishExchange(modernWire{}, x, n, out, err, dst, mark)
}

// The dispatcher skeleton both eras share, after each has validated the
// request its own way (prepare; handleLegacy with the session's state):
//
//	snapshot.handlerFor (the era's builtin table, the provider, custom methods)
//	  ─▶ newExchange (a tools/call's exchange with its ToolRequest, one allocation)
//	  ─▶ the era fills the exchange's RequestInfo
//	  ─▶ the era's invoke (modern: x.run; legacy: the bridge)
//	  ─▶ finishExchange (the response bound, finish, the era's error answer)
//
// With interceptors, the last step goes through runIntercepted instead.

// handlerFor returns the handler of method for a request of era w: the
// era's builtin handler, the provider's when the server has a provider for
// it, or a custom method's (AddMethod) that w serves.
func (sn *snapshot) handlerFor(method string, w era) (methodHandler, bool) {
	h, ok := w.builtin(method)
	if ph, provided := sn.provided(method); provided {
		h, ok = ph, true
	}
	if !ok {
		h, ok = sn.customHandler(method, w)
	}
	return h, ok
}

// newExchange returns the exchange of a request of method: for
// tools/call, one with its ToolRequest in the same allocation (in tx when
// not nil, which a legacy call brings preallocated with itself).
func newExchange(method string, tx *toolExchange) *exchange {
	if method == "tools/call" {
		if tx == nil {
			tx = &toolExchange{}
		}
		x := &tx.x
		x.toolReq = &tx.req
		return x
	}
	if tx != nil {
		return &tx.x
	}
	return &exchange{}
}

// finishExchange is the epilogue of both eras without interceptors, once
// the era ran the handler (out, err; dst[:mark] is what preceded the
// response): the response bounded by MaxResponseBytes, the exchange
// finished (later notifications dropped), and the era's answer to an
// error. The handler runs in the caller's frame, not below this function:
// an idle listen stream's stack must stay small enough for the runtime to
// shrink it (TestIdleListenStack).
func (s *Server) finishExchange(w era, x *exchange, n Notifier, out []byte, err error, dst []byte, mark int) ([]byte, int) {
	err = s.quota.boundResponse(len(out)-mark, err)
	x.finish()
	if err != nil {
		return w.answerError(x, n, err, dst[:mark])
	}
	return out, http.StatusOK
}

// prepare validates a modern request and answers what needs no method
// handler: errors, and server/discover. It returns the exchange and the
// handler of a request to run, or a nil exchange and the complete response.
func (s *Server) prepare(dst []byte, in *Incoming, n Notifier, hh *httpHeaders, mv *metaVisitor) (*exchange, methodHandler, []byte, int) {
	msg := in.Message
	if msg.Method == "initialize" {
		// A modern request (or a transport without legacy sessions).
		e := &Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: initialize; " + s.initializeHint()}
		return nil, nil, jsonrpc.AppendError(dst, msg.ID, e.wire()), e.HTTPStatus()
	}
	var picked httpHeaders
	if hh == nil && in.Header != nil {
		picked = pickHeaders(in.Header)
		hh = &picked
	} else if in.Header == nil {
		hh = nil
	}
	if msg.Method == "server/discover" && s.icpt == nil {
		out, status := s.discover(dst, msg, hh, mv)
		return nil, nil, out, status
	}
	version, rm, perr := s.validate(msg, hh, mv)
	if perr != nil {
		return nil, nil, jsonrpc.AppendError(dst, msg.ID, perr.wire()), perr.HTTPStatus()
	}
	sn := s.snapshot()
	h, ok := sn.handlerFor(msg.Method, modernWire{})
	if msg.Method == "server/discover" { // with interceptors
		h, ok = handleDiscover, true
	}
	if !ok {
		e := methodNotFound(msg.Method)
		return nil, nil, jsonrpc.AppendError(dst, msg.ID, e.wire()), e.HTTPStatus()
	}
	x := newExchange(msg.Method, nil)
	*x = exchange{s: s, snap: sn, id: msg.ID, method: msg.Method, params: msg.Params, meta: rm, info: RequestInfo{ProtocolVersion: version}, notifier: n, toolReq: x.toolReq}
	x.info.Header = in.Header
	x.info.Principal = in.Principal
	x.remote = in.remote
	return x, h, nil, 0
}

// handleIntercepted is the rest of handle on a server with interceptors.
func (s *Server) handleIntercepted(ctx context.Context, dst []byte, x *exchange, h methodHandler, in *Incoming, n Notifier) ([]byte, int) {
	if _, err := x.requestInfo(); err != nil {
		x.finish()
		return s.answerError(x, n, err, dst)
	}
	return s.runIntercepted(ctx, x.newCall(in.Transport, nil, h, n, dst))
}

// handleDiscover serves server/discover as a method, on a server with
// interceptors (otherwise discover answers it on its own fast path).
func handleDiscover(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	return jsonrpc.AppendResult(dst, x.id, x.snap.discover), nil
}

// answerError appends the error response of a method handler's error to
// dst (nothing for errNoResponse).
func (s *Server) answerError(x *exchange, n Notifier, err error, dst []byte) ([]byte, int) {
	if noResponse(err) {
		return dst, 0
	}
	e, ok := asError(err)
	if !ok {
		s.log.Error("mcp: internal error", "method", x.method, "err", err)
		e = &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
	}
	s.challengeFor(n, e)
	return jsonrpc.AppendError(dst, x.id, e.wire()), e.HTTPStatus()
}

// pickHeaders picks the headers that validate reads out of h.
func pickHeaders(h http.Header) httpHeaders {
	return httpHeaders{
		protocolVersion: h[protocol.HeaderProtocolVersion],
		method:          h[protocol.HeaderMethod],
		name:            h[protocol.HeaderName],
	}
}

// discover answers a modern server/discover request (the hot path): it is
// validated like any request, and its result is encoded once per snapshot.
// hh and mv are as for handle; msg does not escape.
func (s *Server) discover(dst []byte, msg *jsonrpc.Message, hh *httpHeaders, mv *metaVisitor) ([]byte, int) {
	if _, _, perr := s.validate(msg, hh, mv); perr != nil {
		return jsonrpc.AppendError(dst, msg.ID, perr.wire()), perr.HTTPStatus()
	}
	return jsonrpc.AppendResult(dst, msg.ID, s.snapshot().discover), http.StatusOK
}

// run calls the method handler, turning a panic into an internal error so
// that one bad handler cannot take the server (or a stdio connection) down.
func (x *exchange) run(ctx context.Context, h methodHandler, dst []byte) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			x.s.log.Error("mcp: handler panicked", "method", x.method, "panic", p, "stack", string(debug.Stack()))
			out, err = nil, &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
		}
	}()
	return h(ctx, x, dst)
}

// methodHandler serves one method: it appends the complete JSON-RPC
// response to dst or returns an error (a *Error for protocol errors).
type methodHandler func(ctx context.Context, x *exchange, dst []byte) ([]byte, error)

// methods is the table of the methods this package serves. A method whose
// feature has nothing registered answers -32601 by itself.
var methods map[string]methodHandler

func init() {
	methods = map[string]methodHandler{
		"tools/list":               handleToolsList,
		"tools/call":               handleToolsCall,
		"resources/list":           handleResourcesList,
		"resources/templates/list": handleResourceTemplatesList,
		"resources/read":           handleResourcesRead,
		"prompts/list":             handlePromptsList,
		"prompts/get":              handlePromptsGet,
		"completion/complete":      handleComplete,
		methodListen:               handleListen,
		"tasks/get":                handleTasksGet,
		"tasks/update":             handleTasksUpdate,
		"tasks/cancel":             handleTasksCancel,
	}
}

func methodNotFound(method string) *Error {
	return &Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + method}
}

// exchange is the server side of one request while it is handled.
type exchange struct {
	s      *Server
	snap   *snapshot
	id     jsonrpc.ID
	method string
	params []byte
	meta   reqMeta
	// info.ProtocolVersion is the request's validated revision from the
	// start (not only once info is decoded): a separate version field
	// would push the exchange of a tools/call into a larger size class.
	info     RequestInfo
	notifier Notifier // for a legacy request, it also carries the session (legacy.go)
	remote   string   // Incoming.remote
	// task is the task run of a tools/call that may become a task, and of
	// a task's later runs; nil otherwise.
	task *taskRun

	// toolReq, when not nil, is a ToolRequest allocated with the exchange
	// for its first tools/call run (newToolRequest).
	toolReq *ToolRequest

	mu           sync.Mutex
	done         bool
	sentProgress bool   // next to done: the exchange stays in its size class
	infoDone     bool   // info is decoded (requestInfo); here for the same reason
	token        []byte // progress token, copied out of the request buffer
	lastProgress float64
}

// clientKey names the request's client for the quotas.
func (x *exchange) clientKey() string {
	return x.s.quota.clientKey(x.info.Principal, x.remote, x.info.Header)
}

// newToolRequest returns the ToolRequest allocated with the exchange the
// first time and a new one after that (a rerun must not overwrite a request that an earlier
// run's goroutines may still hold).
func (x *exchange) newToolRequest() *ToolRequest {
	if r := x.toolReq; r != nil {
		x.toolReq = nil
		return r
	}
	return new(ToolRequest)
}

// toolExchange is an exchange for tools/call with its ToolRequest, in one
// allocation.
type toolExchange struct {
	x   exchange
	req ToolRequest
}

// requestInfo decodes the typed RequestInfo on first use.
func (x *exchange) requestInfo() (*RequestInfo, error) {
	if !x.infoDone {
		if e := x.meta.decodeInfoCached(&x.info, x.info.ProtocolVersion, &x.s.clientInfo); e != nil {
			return nil, e
		}
		if raw := x.meta.extraMeta(x.params); raw != nil {
			x.info.Meta = decodeMeta(raw)
		}
		if len(x.meta.progressToken) > 0 {
			x.token = append([]byte(nil), x.meta.progressToken...)
		}
		x.infoDone = true
	}
	return &x.info, nil
}

// param returns the value of the top-level params member key, and whether
// it is present.
func (x *exchange) param(key string) ([]byte, bool) {
	return x.meta.p.lookup(x.params, key)
}

// finish marks the exchange as answered: later notifications are dropped.
func (x *exchange) finish() {
	x.mu.Lock()
	x.done = true
	x.mu.Unlock()
}

// notify sends a request-scoped notification unless the request is done.
func (x *exchange) notify(method string, params []byte) {
	if x.notifier == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return
	}
	buf := x.s.getBuf()
	*buf = jsonrpc.AppendNotification(*buf, method, params)
	x.notifier.Notify(*buf)
	x.s.putBuf(buf)
}

// cursorParam reads params.cursor of a list request.
func cursorParam(params []byte) (string, error) {
	v, ok := jsonscan.Lookup(params, "cursor")
	if !ok || jsonscan.Kind(v) == 'n' {
		return "", nil
	}
	c, ok := jsonscan.String(v)
	if !ok {
		return "", InvalidParams("Invalid params: cursor must be a string")
	}
	return c, nil
}
