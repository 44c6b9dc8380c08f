package mcp

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"sync"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// An Interceptor wraps the handling of every call the server serves, on
// every transport and in both eras: it sees the validated request (c) and
// the outcome that next returns, and may change the context the method
// runs with (a tracing span, a deadline), or answer without calling next
// (a rate limit, an authorization rule) by returning an Outcome with Err
// set. It must call next at most once, on the goroutine it was called on.
//
// An interceptor that calls next and then returns an Outcome with Err set
// refuses a call whose handler already ran: what the client was not told
// does not stay behind. A tools/call that became a task has its task
// cancelled (the client never learns its id), and a legacy session's
// logging/setLevel, resources/subscribe and resources/unsubscribe change
// the session only once the interceptors' outcome is a success. Other
// effects of a handler (what a tool did) are the handler's own.
//
// Interceptors run in the order of ServerOptions.Interceptors, the first
// outermost. A panic in an interceptor is recovered and answered as an
// internal error (-32603), like a panic in a handler.
//
// A request for a known method that fails validation (missing _meta, a
// version not served, header mismatches) goes through the interceptors
// too, so that metrics and traces count it: next returns its error, and
// its Info holds only what the transport saw (Header, Principal, Era).
// Requests for methods the server does not serve are answered without
// interceptors, which would otherwise see method names without bound. A subscriptions/listen stream is one call
// that lasts as long as the stream. A tool call that becomes a task is a
// call (whose outcome has ResultType "task"), and so is the background run
// of its handler (Phase PhaseTaskRun). In a legacy session, the requests
// the server sends its client (elicitation/create, sampling/createMessage,
// roots/list) are calls too (Phase PhaseClientRequest), nested in the
// context of the call that asked.
type Interceptor func(ctx context.Context, c *Call, next CallHandler) Outcome

// CallHandler handles a call: the next interceptor, or the method itself.
type CallHandler func(ctx context.Context, c *Call) Outcome

// Transport names a transport of MCP: the one a call arrived on
// (Call.Transport), the one a client speaks over (client's
// Client.Transport), the one `mcpkit discover --json` reports. The three
// names below are the only ones this module uses.
type Transport string

// The transports. A custom transport calling Handle may name itself in
// Incoming.Transport.
const (
	// TransportStdio, "stdio", is newline-delimited JSON-RPC over a
	// process's stdin and stdout (either era).
	TransportStdio Transport = protocol.TransportStdio
	// TransportStreamableHTTP, "streamable-http", is Streamable HTTP
	// (either era).
	TransportStreamableHTTP Transport = protocol.TransportStreamableHTTP
	// TransportSSE, "http+sse", is the HTTP+SSE transport of revision
	// 2024-11-05, deprecated since: a client may fall back to it for an
	// old server; the server does not serve it.
	TransportSSE Transport = protocol.TransportSSE
)

// Phase says which part of the protocol a call is.
type Phase uint8

// The phases.
const (
	// PhaseRequest is a request from the client, answered by the server.
	PhaseRequest Phase = iota
	// PhaseTaskRun is the background run of a tool handler whose call
	// became a task. It has no JSON-RPC response of its own: its outcome
	// is what the task's result will say.
	PhaseTaskRun
	// PhaseClientRequest is a request the server sends to a legacy
	// client (elicitation, sampling, roots) while it handles a call.
	PhaseClientRequest
)

// String returns "request", "task-run" or "client-request".
func (p Phase) String() string {
	switch p {
	case PhaseTaskRun:
		return "task-run"
	case PhaseClientRequest:
		return "client-request"
	}
	return "request"
}

// Call is an interceptor's view of one call. It and what it points to are
// read-only and valid until the interceptor returns; copy what must be
// kept.
type Call struct {
	// Method is the JSON-RPC method, such as "tools/call".
	Method string
	// Name is the tool or prompt name (tools/call, prompts/get), the
	// resource URI (resources/read, resources/subscribe), the task id
	// (tasks/get, tasks/update, tasks/cancel) or the name a custom
	// method's MethodOptions.NameParam designates; "" otherwise.
	Name string
	// ID is the request's JSON-RPC id (for PhaseClientRequest, the id the
	// server gave its request).
	ID jsonrpc.ID
	// Info is what the request said about itself, as its handler sees it
	// (its Era says which era the call belongs to).
	Info *RequestInfo
	// Params is the raw params object of the request (for
	// PhaseClientRequest, of the request the server sends).
	Params json.RawMessage
	// Transport is the transport the request arrived on ("" for a custom
	// transport that did not name itself).
	Transport Transport
	// Phase says which part of the protocol the call is.
	Phase Phase
	// SessionID is the legacy session's Mcp-Session-Id on Streamable HTTP;
	// "" for modern requests and on stdio.
	SessionID string
	// TaskID is the task's id in PhaseTaskRun, and "" otherwise.
	TaskID string

	session *session
	// remote is Incoming.remote (see PeerAddr), and srv the server, whose
	// quotas know the trusted proxies (see ClientAddr) and whose registry
	// the names (see Registered).
	remote string
	srv    *Server
	// The innermost handler runs xc.serve (an exchange's method), or else
	// serve; st records that it was called, and the attributes it set.
	xc    *exchangeCall
	serve CallHandler
	st    *callState // shared by the copies of the Call given to the interceptors
}

// Attribute is a fact a handler attaches to its call with Annotate, for
// the server's interceptors.
type Attribute struct {
	Key, Value string
}

// MaxAttributes bounds the attributes of one call: Annotate drops a new
// key past it.
const MaxAttributes = 16

// Annotate attaches the attribute key=value to the call that ctx (a
// handler's or a Provider's) belongs to, for the server's interceptors,
// which read it with Call.Attributes once next returned: the otel
// interceptor records each one on the call's span and metrics (key
// "mcp.backend": the backend a gateway routed the call to), and `mcpkit
// serve --log-requests` logs them. It is for the server's own facts of
// few values, never a client's strings: they become metric labels. A key
// set again keeps the last value; at most MaxAttributes keys are kept. It
// does nothing outside a call, and on a server without interceptors (but a
// call's context that reaches an in-process server, over
// client.MemoryTransport, reaches its handlers too: when that server has
// no interceptors of its own, its Annotate lands on the outer call). It is
// safe for concurrent use.
func Annotate(ctx context.Context, key, value string) {
	st, _ := ctx.Value(callStateKey{}).(*callState)
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for i := range st.attrs {
		if st.attrs[i].Key == key {
			st.attrs[i].Value = value
			return
		}
	}
	if len(st.attrs) < MaxAttributes {
		st.attrs = append(st.attrs, Attribute{key, value})
	}
}

// Attributes returns a copy of the attributes the call's handler attached
// with Annotate, in the order first set; nil when there are none or next
// has not run. An interceptor reads them after next returned.
func (c *Call) Attributes() []Attribute {
	if c.st == nil {
		return nil
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	if len(c.st.attrs) == 0 {
		return nil
	}
	return append([]Attribute(nil), c.st.attrs...)
}

// Attribute returns the value of the call's attribute key (see Annotate),
// or "".
func (c *Call) Attribute(key string) string {
	if c.st == nil {
		return ""
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	for _, a := range c.st.attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// callState is what the copies of one intercepted Call share: whether its
// handler ran, and the attributes the handler attached. It is also the
// context the handler runs in (the innermost handler's, wrapped), so that
// Annotate finds it. An exchange's lives in its exchangeCall; other calls
// (task runs, a legacy client's requests) allocate one.
type callState struct {
	context.Context
	ran   bool
	mu    sync.Mutex
	attrs []Attribute
}

type callStateKey struct{}

// Value implements context.Context.
func (st *callState) Value(key any) any {
	if key == (callStateKey{}) {
		return st
	}
	return st.Context.Value(key)
}

// PeerAddr returns the address of the call's transport peer, as
// http.Request.RemoteAddr gives it ("host:port"), for a request that
// arrived on Streamable HTTP. It returns "" on stdio, for custom
// transports, for the background run of a task and for the requests the
// server sends a legacy client. Behind a proxy, the peer is the proxy: see
// ClientAddr.
func (c *Call) PeerAddr() string { return c.remote }

// ClientAddr returns the IP address of the call's client as the per-client
// quotas attribute it: the peer's (see PeerAddr), or, when the peer is one
// of QuotaOptions.TrustedProxies, the address that the proxies report in
// X-Forwarded-For, in which case forwarded is true. An X-Forwarded-For
// header from any other peer is ignored. It returns the zero Addr when the
// call has no peer address or the peer's is not an IP address.
func (c *Call) ClientAddr() (addr netip.Addr, forwarded bool) {
	if c.remote == "" || c.srv == nil {
		return netip.Addr{}, false
	}
	var h http.Header
	if c.Info != nil {
		h = c.Info.Header
	}
	return c.srv.quota.clientAddr(c.remote, h)
}

// Registered reports whether the call's Name is one the server registered:
// a tool's name (tools/call), a prompt's (prompts/get), or a resource's
// URI or one that a resource template matches (resources/read,
// resources/subscribe, resources/unsubscribe), in the registry the call
// is served from. It reports false for other methods and for names the
// server does not know, which the client chose without bound: telemetry
// that labels metrics by name uses it to label those with a fixed value
// instead (the otel module uses "_OTHER"), so that a client cannot make a
// series per request. Visibility filters are not consulted: a registered
// name is bounded whoever asks. The items of a ServerOptions.Provider are
// not the registry's: Registered reports false for them. It is safe to
// call from any interceptor.
func (c *Call) Registered() bool {
	if c.srv == nil || c.Name == "" {
		return false
	}
	sn := c.srv.snapshot()
	if c.xc != nil && c.xc.x.snap != nil {
		sn = c.xc.x.snap
	}
	switch c.Method {
	case "tools/call":
		return sn.tools[c.Name] != nil
	case "prompts/get":
		return sn.prompts[c.Name] != nil
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		if sn.resources[c.Name] != nil {
			return true
		}
		for _, t := range sn.templates {
			if t.tmpl.Match(c.Name) != nil {
				return true
			}
		}
	}
	return false
}

// peerHost is the host part of a "host:port" address, or all of it.
func peerHost(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}

// SessionDone returns a channel that is closed when the call's legacy
// session ends, and nil for calls outside a legacy session. Interceptors
// that measure sessions (their duration, say) wait on it from the
// initialize call on.
func (c *Call) SessionDone() <-chan struct{} {
	if c.session == nil {
		return nil
	}
	return c.session.ctx.Done()
}

// Outcome is how a call ended.
type Outcome struct {
	// ResultType is the modern result's resultType ("complete",
	// "input_required", "task"), or "complete" for a legacy result; ""
	// when the call failed with Err or sent no response.
	ResultType string
	// ToolError reports a tools/call result with isError true: the tool
	// failed, and said so in its result.
	ToolError bool
	// Err is the protocol error the call is answered with; nil on success.
	// An interceptor answers a call itself by returning an Outcome with
	// Err set, without calling next.
	Err *Error
	// HTTPStatus is the HTTP status the response travels with on
	// Streamable HTTP (200 for every legacy-session response); 0 when no
	// response is sent (a listen stream dropped for a slow reader, a
	// notification-like end).
	HTTPStatus int
}

// chain builds the CallHandler that runs the interceptors around the
// call's own handler; NewServer builds it once.
func (s *Server) chain() CallHandler {
	h := CallHandler(func(ctx context.Context, c *Call) Outcome {
		// Interceptors call next at most once, on their own goroutine.
		st := c.st
		st.ran = true
		st.Context = ctx
		if c.xc != nil {
			return c.xc.run(st)
		}
		return c.serve(st, c)
	})
	for i := len(s.icpt) - 1; i >= 0; i-- {
		ic, next := s.icpt[i], h
		h = func(ctx context.Context, c *Call) Outcome { return ic(ctx, c, next) }
	}
	return h
}

// intercept runs the interceptors around the call's handler (c.xc or
// c.serve). It recovers a panic of an interceptor as an internal error.
// ran reports whether the handler was called.
func (s *Server) intercept(ctx context.Context, c *Call) (o Outcome, ran bool) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("mcp: interceptor panicked", "method", c.Method, "panic", p, "stack", string(debug.Stack()))
			e := &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
			o = Outcome{Err: e, HTTPStatus: e.HTTPStatus()}
		}
		ran = c.st.ran
	}()
	if c.st == nil {
		c.st = &callState{}
	}
	return s.chained(ctx, c), false
}

// exchangeCall is the Call of an exchange and what running its method
// needs, its callState included, in one allocation.
type exchangeCall struct {
	Call
	state  callState
	s      *Server
	x      *exchange
	h      methodHandler
	n      Notifier // for answerError (modern exchanges)
	dst    []byte
	mark   int
	out    []byte
	status int
	inner  Outcome
}

// newCall returns the Call of an exchange, ready to run h.
func (x *exchange) newCall(t Transport, ss *session, h methodHandler, n Notifier, dst []byte) *exchangeCall {
	xc := &exchangeCall{s: x.s, x: x, h: h, n: n, dst: dst, mark: len(dst)}
	xc.Call = Call{Method: x.method, ID: x.id, Info: &x.info, Params: x.params, Transport: t, session: ss,
		remote: x.remote, srv: x.s, xc: xc, st: &xc.state}
	c := &xc.Call
	if ss != nil {
		c.SessionID = ss.id
	}
	field := x.s.nameField(x.method)
	if field == "" && (x.method == "resources/subscribe" || x.method == "resources/unsubscribe") {
		field = "uri"
	}
	if field != "" {
		if v, ok := x.param(field); ok {
			c.Name, _ = jsonscan.String(v)
		}
	}
	return xc
}

// run runs the exchange's method (the innermost handler) and appends its
// response, result or error, to dst.
func (xc *exchangeCall) run(ctx context.Context) Outcome {
	x := xc.x
	var out []byte
	var err error
	w := x.era()
	out, err = w.invoke(ctx, x, xc.h, xc.dst)
	err = xc.s.quota.boundResponse(len(out)-xc.mark, err)
	x.finish()
	if err != nil {
		xc.out, xc.status = w.answerError(x, xc.n, err, xc.dst[:xc.mark])
		switch {
		case err == errParkedComplete:
			xc.inner = Outcome{ResultType: resultComplete, HTTPStatus: http.StatusOK}
		case err == errParkedGone:
			xc.inner = Outcome{Err: &Error{Code: jsonrpc.CodeInternalError, Message: "Request cancelled", Err: err}, HTTPStatus: http.StatusOK}
		case noResponse(err):
			xc.inner = Outcome{HTTPStatus: xc.status}
		default:
			xc.inner = Outcome{HTTPStatus: xc.status, Err: answeredError(x, err)}
		}
		return xc.inner
	}
	xc.out, xc.status = out, http.StatusOK
	xc.inner = resultOutcome(out[xc.mark:], w)
	return xc.inner
}

// runIntercepted runs a validated exchange's method inside the
// interceptors and returns its response, appended to the dst newCall was
// given, and HTTP status.
func (s *Server) runIntercepted(ctx context.Context, xc *exchangeCall) ([]byte, int) {
	x, dst, mark := xc.x, xc.dst, xc.mark
	o, ran := s.intercept(ctx, &xc.Call)
	if !ran {
		x.finish()
	}
	out, status := xc.out, xc.status
	switch {
	case o.Err != nil && (!ran || o.Err != xc.inner.Err):
		// An interceptor answered, or replaced the method's answer.
		if ran && xc.inner.Err == nil {
			if xc.inner.ResultType == resultTask {
				s.cancelRefusedTask(ctx, xc)
			}
			xc.undoRefusedSubscribe(ctx)
		}
		out, status = appendEraError(x.era(), dst[:mark], x.id, o.Err)
	case ran && o.Err == nil && xc.inner.Err == nil:
		xc.commitSessionChange(ctx)
	case !ran:
		s.log.Error("mcp: an interceptor returned without calling next or setting Outcome.Err", "method", x.method)
		e := &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
		out, status = appendEraError(x.era(), dst[:mark], x.id, e)
	}
	return out, status
}

// cancelRefusedTask cancels the task that the call of xc created when an
// interceptor answered the call with an error after its handler ran: the
// client never learns the task's id, so the task must not go on running
// (and counting against its quotas) unseen.
func (s *Server) cancelRefusedTask(ctx context.Context, xc *exchangeCall) {
	res, ok := jsonscan.Lookup(xc.out[xc.mark:], "result")
	if !ok {
		return
	}
	v, _ := jsonscan.Lookup(res, "taskId")
	id, ok := jsonscan.String(v)
	if !ok || id == "" {
		return
	}
	if err := s.tasks.cancelTask(context.WithoutCancel(ctx), id, "Cancelled: an interceptor refused the call that created it"); err != nil {
		s.log.Warn("mcp: cancelling the task of a refused call", "task", id, "err", err)
	}
}

// answeredError is the *Error that answers err, as answerError makes it.
func answeredError(x *exchange, err error) *Error {
	e, ok := asError(err)
	if !ok {
		return &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
	}
	return x.era().errorFor(x.method, e)
}

// resultOutcome reads the outcome of a complete result response.
func resultOutcome(resp []byte, w era) Outcome {
	o := Outcome{HTTPStatus: http.StatusOK, ResultType: resultComplete}
	res, ok := jsonscan.Lookup(resp, "result")
	if !ok {
		return o
	}
	o.ResultType = w.resultType(res)
	if v, ok := jsonscan.Lookup(res, "isError"); ok && string(v) == "true" {
		o.ToolError = true
	}
	return o
}

// errorOutcome is the Outcome of a call that failed with err.
func errorOutcome(err error) Outcome {
	e, ok := asError(err)
	if !ok {
		e = &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
	}
	return Outcome{Err: e, HTTPStatus: e.HTTPStatus()}
}

// rawOutcome reads the outcome of a complete response, result or error.
func rawOutcome(resp []byte, w era) Outcome {
	if ev, ok := jsonscan.Lookup(resp, "error"); ok {
		e := &Error{Code: jsonrpc.CodeInternalError}
		if v, ok := jsonscan.Lookup(ev, "code"); ok {
			if n, err := strconv.Atoi(string(v)); err == nil {
				e.Code = n
			}
		}
		if v, ok := jsonscan.Lookup(ev, "message"); ok {
			e.Message, _ = jsonscan.String(v)
		}
		return Outcome{Err: e, HTTPStatus: w.errorStatus(e)}
	}
	return resultOutcome(resp, w)
}

// rejectedIntercepted runs the interceptors around the answer to a request
// for a known method that failed validation (resp, appended to dst, with
// status), so that they count and trace it too: next returns its error.
// Requests for methods the server does not know stay outside the
// interceptors, which would otherwise see names without bound.
func (s *Server) rejectedIntercepted(ctx context.Context, dst, resp []byte, status int, in *Incoming) ([]byte, int) {
	msg := in.Message
	_, known := methods[msg.Method]
	if !known && msg.Method != "server/discover" {
		if _, known = s.snapshot().customHandler(msg.Method, modernWire{}); !known {
			return resp, status
		}
	}
	mark := len(dst)
	c := &Call{Method: msg.Method, ID: msg.ID, Params: msg.Params, Transport: in.Transport,
		remote: in.remote, srv: s, Info: &RequestInfo{Header: in.Header, Principal: in.Principal, Era: EraModern}}
	if field := s.nameField(msg.Method); field != "" {
		if v, ok := jsonscan.Lookup(msg.Params, field); ok {
			c.Name, _ = jsonscan.String(v)
		}
	}
	var inner Outcome
	c.serve = func(ctx context.Context, c *Call) Outcome {
		inner = rawOutcome(resp[mark:], modernWire{})
		inner.HTTPStatus = status
		return inner
	}
	o, ran := s.intercept(ctx, c)
	if o.Err != nil && (!ran || o.Err != inner.Err) {
		return jsonrpc.AppendError(dst[:mark], msg.ID, o.Err.wire()), o.Err.HTTPStatus()
	}
	return resp, status
}
