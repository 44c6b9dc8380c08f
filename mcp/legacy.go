package mcp

// The legacy era: clients of revisions 2025-11-25 and earlier, which open
// with an initialize handshake and then speak within a session (an HTTP
// session named by Mcp-Session-Id, or the whole stdio connection).
//
// One Server serves both eras on the same endpoint and process, choosing per
// request by how the client opens (2026-07-28 basic/versioning.mdx,
// "Backward Compatibility"). The routing rule, applied by the transports:
//
//  1. A request whose params._meta carries
//     "io.modelcontextprotocol/protocolVersion" is modern, whatever else it
//     carries (an Mcp-Session-Id header on it is ignored, as a modern-only
//     server would).
//  2. Otherwise, on Streamable HTTP, a message with an Mcp-Session-Id header
//     belongs to that legacy session (unknown or expired: 404), and an
//     initialize request without one opens a new session. On stdio, an
//     initialize request switches the connection to the legacy era for the
//     rest of its life; a connection that never sends initialize stays
//     modern.
//  3. Everything else is modern, and modern validation answers it (a
//     request without _meta gets -32602, HTTP 400; on HTTP, one whose
//     MCP-Protocol-Version header names a legacy version is told that it
//     needs a session instead).
//
// A server with Legacy.Only applies rule 2 alone, as a server written before
// 2026-07-28: modern _meta does not make a request modern, initialize
// always opens a session, and anything else without one is refused
// (stdio: -32601 before initialize; HTTP: 400, errNeedSession).
//
// Legacy requests then flow through Handle like modern ones: the session
// supplies the protocol version, client capabilities and log level that a
// modern request carries in _meta, and results are encoded by the legacy
// schema. An InputRequired outcome of a handler is turned into real
// server-to-client requests on the session, and the handler is re-invoked
// with the answers.

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/jsonrpc"

	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/internal/wire"
)

// Era is the generation of the protocol a request speaks.
type Era uint8

// The eras: EraModern is 0, EraLegacy 1.
const (
	// EraModern is revision 2026-07-28 and later: stateless, every request
	// carries its version and client capabilities in _meta.
	EraModern Era = Era(protocol.EraModern)
	// EraLegacy is revisions 2025-11-25 and earlier: an initialize
	// handshake opens a session that fixes the version and capabilities.
	EraLegacy Era = Era(protocol.EraLegacy)
)

// String returns "modern" or "legacy".
func (e Era) String() string { return protocol.Era(e).String() }

// LegacyVersion is the newest legacy (initialize-based) revision served,
// "2025-11-25". The legacy revisions served are protocol.LegacyVersions:
// 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05, the last over stdio
// and Streamable HTTP only (not over its own, deprecated HTTP+SSE
// transport).
const LegacyVersion = protocol.LegacyVersion

// primingVersion is the first revision whose clients expect a priming SSE
// event (an id and empty data); older clients would choke on empty data.
const primingVersion = protocol.LegacyVersion

// legacyEra holds the state of the legacy era of one Server.
type legacyEra struct {
	sessions      *sessions
	clientTimeout time.Duration
	only          bool          // Legacy.Only: no modern era
	busOnce       sync.Once     // subscribeBus
	workers       legacyWorkers // run the requests of HTTP sessions
}

// initLegacy enables the legacy era; called by NewServer unless
// Legacy.Disable.
func (s *Server) initLegacy() {
	o := &s.opts.Legacy
	s.versions = append(slices.Clone(s.modern), protocol.LegacyVersions...)
	if o.Only {
		s.versions = slices.Clone(protocol.LegacyVersions)
	}
	idle := setting("Legacy.SessionIdleTimeout", o.SessionIdleTimeout, DefaultSessionIdleTimeout)
	store := o.SessionStore
	if store == nil {
		store = NewMemorySessionStore(idle)
	}
	max := setting("Legacy.MaxSessions", o.MaxSessions, 10000)
	timeout := setting("Legacy.ClientRequestTimeout", o.ClientRequestTimeout, 5*time.Minute)
	s.legacy = &legacyEra{
		sessions:      newSessions(s, store, idle, max),
		clientTimeout: timeout,
		only:          o.Only,
		workers:       newLegacyWorkers(),
	}
}

// initializeHint explains, in the -32601 answer to a modern initialize,
// what this server speaks.
func (s *Server) initializeHint() string {
	if s.legacy == nil {
		return "this server speaks the stateless MCP protocol without an initialize handshake, versions " + strings.Join(s.versions, ", ")
	}
	return "a request carrying _meta[\"" + protocol.MetaProtocolVersion + "\"] speaks the stateless protocol (" + strings.Join(s.modern, ", ") +
		"), which has no handshake; legacy clients (" + strings.Join(protocol.LegacyVersions, ", ") + ") send initialize without it"
}

// legacyOnly reports whether s serves the legacy era alone (Legacy.Only).
func (s *Server) legacyOnly() bool { return s.legacy != nil && s.legacy.only }

// isLegacyVersion reports whether v names a served legacy version.
func (s *Server) isLegacyVersion(v string) bool {
	return s.legacy != nil && slices.Contains(protocol.LegacyVersions, v)
}

// hasModernMeta reports whether params carry the modern era's marker,
// _meta["io.modelcontextprotocol/protocolVersion"].
func hasModernMeta(params []byte) bool {
	if len(params) == 0 {
		return false
	}
	meta, ok := jsonscan.Lookup(params, "_meta")
	if !ok || !jsonscan.IsObject(meta) {
		return false
	}
	_, ok = jsonscan.Lookup(meta, protocol.MetaProtocolVersion)
	return ok
}

// modernOnlyMethods are not part of any legacy revision.
var modernOnlyMethods = map[string]bool{
	"server/discover":      true,
	"subscriptions/listen": true,
}

// legacyMethods are the methods only the legacy era has (initialize and
// ping are answered before these).
var legacyMethods = map[string]methodHandler{
	"logging/setLevel":      handleSetLevel,
	"resources/subscribe":   handleSubscribe,
	"resources/unsubscribe": handleSubscribe,
}

// legacyPre is what a transport prepared for handleLegacy: the request's
// _meta, read while the transport decoded it, and the memory of its
// exchange, in the allocation of the transport's own state of the request
// (legacyCall).
type legacyPre struct {
	rm  reqMeta
	err *Error // a malformed _meta
	tx  toolExchange
}

// handleLegacy serves one request of a legacy session: the counterpart of
// Handle's modern path. pre, when not nil, is what the transport prepared.
func (s *Server) handleLegacy(ctx context.Context, dst []byte, in *Incoming, n Notifier, pre *legacyPre) ([]byte, int) {
	msg := in.Message
	ss := in.session
	switch msg.Method {
	case "initialize", "ping":
		if s.icpt != nil {
			return s.legacyHandshakeIntercepted(ctx, dst, in)
		}
		if msg.Method == "ping" {
			return jsonrpc.AppendResult(dst, msg.ID, []byte("{}")), http.StatusOK
		}
		return s.initialize(dst, ss, msg)
	}
	st := ss.state()
	if st == nil {
		return appendLegacyError(dst, msg.ID, &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: the session is not initialized; send initialize first"})
	}
	sn := s.snapshot()
	h, ok := sn.handlerFor(msg.Method, legacyWire{})
	if !ok {
		return appendLegacyError(dst, msg.ID, methodNotFound(msg.Method))
	}
	var rm reqMeta
	var perr *Error
	var tx *toolExchange
	if pre != nil {
		rm, perr, tx = pre.rm, pre.err, &pre.tx
	} else {
		rm, perr = scanMeta(msg.Params)
	}
	if perr != nil {
		return appendLegacyError(dst, msg.ID, perr)
	}
	x := newExchange(msg.Method, tx)
	*x = exchange{s: s, snap: sn, id: msg.ID, method: msg.Method, params: msg.Params, meta: rm,
		notifier: withSession(n, ss), remote: in.remote, toolReq: x.toolReq}
	x.info = RequestInfo{
		ProtocolVersion:    st.ProtocolVersion,
		ClientInfo:         st.ClientInfo,
		ClientCapabilities: st.ClientCapabilities,
		LogLevel:           cmpOr(st.LogLevel, LevelDebug),
		Header:             in.Header,
		Principal:          in.Principal,
		Era:                EraLegacy,
		Meta:               decodeMeta(rm.extraMeta(msg.Params)),
	}
	x.infoDone = true
	if len(rm.progressToken) > 0 {
		x.token = append([]byte(nil), rm.progressToken...)
	}
	if s.icpt != nil {
		return s.runIntercepted(ctx, x.newCall(in.Transport, ss, h, nil, dst))
	}
	mark := len(dst)
	out, err := s.legacyInvoke(ctx, x, h, dst)
	return s.finishExchange(legacyWire{}, x, n, out, err, dst, mark)
}

// answerLegacyError appends the error response of a legacy exchange's
// method handler to dst.
func (s *Server) answerLegacyError(x *exchange, err error, dst []byte) ([]byte, int) {
	e, ok := asError(err)
	if !ok {
		s.log.Error("mcp: internal error", "method", x.method, "err", err)
		e = &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
	}
	var se *scopeError
	if errors.As(e, &se) {
		// As in the modern era: 403 with the insufficient_scope challenge
		// (when the answer is JSON), so that the client can step up.
		s.challengeFor(x.notifier, e)
		return jsonrpc.AppendError(dst, x.id, legacyError(x.method, e).wire()), e.HTTPStatus()
	}
	return appendLegacyError(dst, x.id, legacyError(x.method, e))
}

// legacyHandshakeIntercepted serves initialize and ping of a legacy
// session inside the interceptors. The Call's Info has the session's
// version and client once initialize has succeeded.
func (s *Server) legacyHandshakeIntercepted(ctx context.Context, dst []byte, in *Incoming) ([]byte, int) {
	msg, ss := in.Message, in.session
	info := &RequestInfo{Header: in.Header, Principal: in.Principal, Era: EraLegacy}
	fill := func() {
		if st := ss.state(); st != nil {
			info.ProtocolVersion, info.ClientInfo, info.ClientCapabilities = st.ProtocolVersion, st.ClientInfo, st.ClientCapabilities
			info.LogLevel = cmpOr(st.LogLevel, LevelDebug)
		}
	}
	fill()
	c := &Call{Method: msg.Method, ID: msg.ID, Info: info, Params: msg.Params, Transport: in.Transport, SessionID: ss.id, session: ss,
		remote: in.remote, srv: s}
	mark := len(dst)
	var out []byte
	var inner Outcome
	var began *SessionState // the state this initialize gave the session
	c.serve = func(ctx context.Context, c *Call) Outcome {
		if msg.Method == "ping" {
			out = jsonrpc.AppendResult(dst, msg.ID, []byte("{}"))
		} else {
			before := ss.state()
			out, _ = s.initialize(dst, ss, msg)
			if before == nil {
				began = ss.state()
			}
			fill()
		}
		inner = rawOutcome(out[mark:], legacyWire{})
		return inner
	}
	o, ran := s.intercept(ctx, c)
	// An initialize that an interceptor fails opens no session, even when
	// the handshake itself succeeded: the transport then ends it (and its
	// quota) instead of naming it in Mcp-Session-Id.
	failed := !ran || (o.Err != nil && o.Err != inner.Err)
	if failed && began != nil {
		ss.unbegin(began)
	}
	if o.Err != nil && (!ran || o.Err != inner.Err) {
		return appendLegacyError(dst[:mark], msg.ID, o.Err)
	}
	if !ran {
		s.log.Error("mcp: an interceptor returned without calling next or setting Outcome.Err", "method", msg.Method)
		return appendLegacyError(dst[:mark], msg.ID, &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"})
	}
	return out, http.StatusOK
}

func cmpOr(l, def LogLevel) LogLevel {
	if l == "" {
		return def
	}
	return l
}

// appendLegacyError appends an error response. In a legacy session every
// JSON-RPC error travels with HTTP 200: clients of that era read 404 as
// "session gone" and 400 as a transport failure.
func appendLegacyError(dst []byte, id jsonrpc.ID, e *Error) ([]byte, int) {
	return jsonrpc.AppendError(dst, id, e.wire()), http.StatusOK
}

// legacyError maps a modern protocol error to its legacy form.
func legacyError(method string, e *Error) *Error {
	if method == "resources/read" && e.Code == jsonrpc.CodeInvalidParams && isResourceNotFound(e) {
		le := *e
		le.Code = CodeResourceNotFound
		le.Message = "Resource not found"
		return &le
	}
	return e
}

// isResourceNotFound recognizes the modern resource-not-found error (as
// ResourceNotFound makes it): -32602 whose data names the uri.
func isResourceNotFound(e *Error) bool {
	if !strings.HasPrefix(e.Message, "Resource not found") {
		return false
	}
	switch d := e.Data.(type) {
	case json.RawMessage:
		_, ok := jsonscan.Lookup(d, "uri")
		return ok
	case map[string]any:
		_, ok := d["uri"]
		return ok
	case map[string]string:
		_, ok := d["uri"]
		return ok
	}
	return false
}

// initializeParams are the params of initialize.
type initializeParams struct {
	ProtocolVersion *string            `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
}

// initialize performs the handshake: it negotiates the version, records the
// client in the session and answers with the server's capabilities.
func (s *Server) initialize(dst []byte, ss *session, msg *jsonrpc.Message) ([]byte, int) {
	var p initializeParams
	if len(msg.Params) > 0 {
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			return appendLegacyError(dst, msg.ID, InvalidParams("Invalid params: initialize takes {protocolVersion: string, capabilities: object, clientInfo: {name, version}}"))
		}
	}
	if p.ProtocolVersion == nil {
		return appendLegacyError(dst, msg.ID, InvalidParams("Invalid params: initialize needs a protocolVersion"))
	}
	// The 2025-11-25 schema has no extensions member, but clients of
	// extensions made for that era (MCP Apps: io.modelcontextprotocol/ui)
	// declare them here, so the session keeps them for handlers to read in
	// RequestInfo. The tasks extension is the modern era's only: a legacy
	// session never runs tools as tasks.
	if p.Capabilities.Extensions != nil {
		p.Capabilities.Extensions = maps.Clone(p.Capabilities.Extensions)
		delete(p.Capabilities.Extensions, TasksExtension)
		if len(p.Capabilities.Extensions) == 0 {
			p.Capabilities.Extensions = nil
		}
	}
	version := LegacyVersion
	if slices.Contains(protocol.LegacyVersions, *p.ProtocolVersion) {
		version = *p.ProtocolVersion
	}
	st := &SessionState{ProtocolVersion: version, ClientInfo: p.ClientInfo, ClientCapabilities: p.Capabilities}
	if !ss.begin(st) {
		return appendLegacyError(dst, msg.ID, &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: the session is already initialized"})
	}
	return jsonrpc.AppendResult(dst, msg.ID, s.initializeResult(version)), http.StatusOK
}

// legacyCapabilities are the server capabilities of the 2025-11-25 schema.
type legacyCapabilities struct {
	Completions  *struct{}                  `json:"completions,omitempty"`
	Logging      *struct{}                  `json:"logging"`
	Prompts      *ListCapability            `json:"prompts,omitempty"`
	Resources    *ResourcesCapability       `json:"resources,omitempty"`
	Tools        *ListCapability            `json:"tools,omitempty"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	// Extensions are those of the custom methods that legacy sessions are
	// served (AddMethod without DisableLegacy), such as the skills
	// extension: the 2025-11-25 schema has no such member, but extensions
	// built on custom methods are declared here for clients that look.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// initializeResult encodes the InitializeResult for version. Sessions learn
// of list changes and subscribed resource updates, so listChanged and
// subscribe are advertised for every family the server has.
func (s *Server) initializeResult(version string) []byte {
	sn := s.snapshot()
	caps := sn.caps
	lc := legacyCapabilities{Completions: caps.Completions, Logging: &struct{}{}, Experimental: caps.Experimental}
	for _, cm := range sn.custom {
		if ext := cm.opts.Extension; ext != "" && !cm.opts.DisableLegacy && caps.Extensions[ext] != nil {
			if lc.Extensions == nil {
				lc.Extensions = map[string]json.RawMessage{}
			}
			lc.Extensions[ext] = caps.Extensions[ext]
		}
	}
	if caps.Tools != nil {
		lc.Tools = &ListCapability{ListChanged: true}
	}
	if caps.Prompts != nil {
		lc.Prompts = &ListCapability{ListChanged: true}
	}
	if caps.Resources != nil {
		lc.Resources = &ResourcesCapability{ListChanged: true, Subscribe: true}
	}
	if sn.advertised {
		// Advertise: only what the declaration grants.
		lc.Tools, lc.Prompts, lc.Resources, lc.Logging = caps.Tools, caps.Prompts, caps.Resources, caps.Logging
	}
	res := struct {
		ProtocolVersion string             `json:"protocolVersion"`
		Capabilities    legacyCapabilities `json:"capabilities"`
		ServerInfo      Implementation     `json:"serverInfo"`
		Instructions    string             `json:"instructions,omitempty"`
	}{version, lc, s.implementation(), sn.instructions}
	return mustMarshal(res)
}

// handleSetLevel serves logging/setLevel: later log notifications of the
// session go out at this level and above.
func handleSetLevel(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	change, err := x.sessionChange()
	if err != nil {
		return nil, err
	}
	x.applySessionChange(ctx, change)
	return x.appendRaw(dst, []byte("{}")), nil
}

// sessionChange returns the change that a legacy logging/setLevel,
// resources/subscribe or resources/unsubscribe makes to its session's
// state, or the error that answers invalid params.
func (x *exchange) sessionChange() (func(st *SessionState), error) {
	if x.method == "logging/setLevel" {
		v, _ := jsonscan.Lookup(x.params, "level")
		l, ok := jsonscan.String(v)
		if !ok || LogLevel(l).severity() < 0 {
			return nil, InvalidParams("Invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency")
		}
		return func(st *SessionState) { st.LogLevel = LogLevel(l) }, nil
	}
	v, _ := jsonscan.Lookup(x.params, "uri")
	uri, ok := jsonscan.String(v)
	if !ok || uri == "" {
		return nil, InvalidParams("Invalid params: " + x.method + " needs a string uri")
	}
	sub := x.method == "resources/subscribe"
	return func(st *SessionState) {
		i := slices.Index(st.Subscriptions, uri)
		switch {
		case sub && i < 0:
			st.Subscriptions = append(slices.Clip(st.Subscriptions), uri)
		case !sub && i >= 0:
			st.Subscriptions = slices.Delete(slices.Clone(st.Subscriptions), i, i+1)
		}
	}, nil
}

// applySessionChange applies change to the session's state at once on a
// server without interceptors. With interceptors it is applied once their
// outcome is known to be a success (commitSessionChange): a call that an
// interceptor fails after its handler ran leaves the session as it was.
func (x *exchange) applySessionChange(ctx context.Context, change func(st *SessionState)) {
	if x.s.icpt == nil {
		x.session().update(ctx, change)
	}
}

// commitSessionChange applies the session change of a legacy call that
// changes its session's state (sessionChange) and that the interceptors
// answered with success.
func (xc *exchangeCall) commitSessionChange(ctx context.Context) {
	x := xc.x
	switch x.method {
	case "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
	default:
		return
	}
	if xc.session == nil {
		return
	}
	if change, err := x.sessionChange(); err == nil {
		xc.session.update(ctx, change)
		if x.method == "resources/unsubscribe" {
			// Deferred by handleSubscribe, like the change.
			xc.session.observe(ctx, x, subscribeURI(x), false)
		}
	}
}

// undoRefusedSubscribe ends the ListenOptions.Observe subscription that a
// legacy resources/subscribe began when an interceptor refused the call
// after its handler ran, unless the session was subscribed to the URI
// before: the session change was never applied, so neither is it.
func (xc *exchangeCall) undoRefusedSubscribe(ctx context.Context) {
	x, ss := xc.x, xc.session
	if x.method != "resources/subscribe" || ss == nil {
		return
	}
	uri := subscribeURI(x)
	if st := ss.state(); st != nil && slices.Contains(st.Subscriptions, uri) {
		return
	}
	ss.observe(ctx, x, uri, false)
}

// subscribeURI is the uri of a resources/subscribe or unsubscribe whose
// params sessionChange accepted.
func subscribeURI(x *exchange) string {
	v, _ := jsonscan.Lookup(x.params, "uri")
	uri, _ := jsonscan.String(v)
	return uri
}

// handleSubscribe serves resources/subscribe and resources/unsubscribe.
func handleSubscribe(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	if x.snap.caps.Resources == nil {
		return nil, methodNotFound(x.method)
	}
	change, err := x.sessionChange()
	if err != nil {
		return nil, err
	}
	// The observer (a bridge's backend subscription) sees a subscribe
	// now, so that it can refuse it; with interceptors, an unsubscribe
	// reaches it once they let the call succeed (commitSessionChange),
	// and a subscribe they refuse is undone (undoRefusedSubscribe).
	if sub := x.method == "resources/subscribe"; sub || x.s.icpt == nil {
		if err := x.session().observe(ctx, x, subscribeURI(x), sub); err != nil {
			return nil, err
		}
	}
	x.applySessionChange(ctx, change)
	return x.appendRaw(dst, []byte("{}")), nil
}

// handleNotification handles a notification from a legacy client.
func (ss *session) handleNotification(msg *jsonrpc.Message) {
	switch msg.Method {
	case "notifications/initialized":
		ss.markInitialized()
	case "notifications/cancelled":
		ss.cancelRequest(msg.Params)
	}
	// Other notifications (roots/list_changed, progress of our requests)
	// need no action.
}

// appendLegacyResultObject encodes a result object by the 2025-11-25
// schema: body's members, then _meta when userMeta has members.
func appendLegacyResultObject(dst, body, userMeta []byte) []byte {
	dst = append(dst, '{')
	inner := objectInner(body)
	dst = append(dst, inner...)
	if um := objectInner(userMeta); len(um) > 0 {
		if len(inner) > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `"_meta":{`...)
		dst = append(dst, um...)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendLegacyResult reshapes a complete modern result object (as cached
// in a snapshot) for the legacy era: resultType, ttlMs and cacheScope are
// dropped, and serverInfo is dropped from _meta (and _meta with it when
// nothing else is left).
func appendLegacyResult(dst, result []byte) []byte {
	it, ok := jsonscan.Object(result)
	if !ok {
		return append(dst, result...)
	}
	dst = append(dst, '{')
	first := true
	var m jsonscan.Member
	for it.Next(&m) {
		switch {
		case m.KeyIs("resultType"), m.KeyIs("ttlMs"), m.KeyIs("cacheScope"):
			continue
		case m.KeyIs("_meta"):
			mark := len(dst)
			if !first {
				dst = append(dst, ',')
			}
			dst = append(dst, `"_meta":{`...)
			n := 0
			mi, _ := jsonscan.Object(m.Value)
			var mm jsonscan.Member
			for mi.Next(&mm) {
				if mm.KeyIs(protocol.MetaServerInfo) {
					continue
				}
				if n > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, '"')
				dst = append(dst, mm.Key...)
				dst = append(dst, `":`...)
				dst = append(dst, mm.Value...)
				n++
			}
			if n == 0 {
				dst = dst[:mark]
				continue
			}
			dst = append(dst, '}')
		default:
			if !first {
				dst = append(dst, ',')
			}
			dst = append(dst, '"')
			dst = append(dst, m.Key...)
			dst = append(dst, `":`...)
			dst = append(dst, m.Value...)
		}
		first = false
	}
	return append(dst, '}')
}

// deliverChange tells the legacy sessions of this process about a change
// published on the server's Bus (by a registration here, or on another
// replica with a distributed Bus): list changes go to every initialized
// session, a resource update to the sessions subscribed to its URI. Task
// changes go to none: legacy sessions have no tasks (extensions are not
// negotiated in that era), and a bare notifications/tasks is no message of
// revision 2025-11-25; it would also tell every session of another
// principal's activity. It returns at once (Bus subscribers must): the
// sessions are written to on another goroutine.
func (l *legacyEra) deliverChange(c Change) {
	method := c.Kind.String()
	if method == "" || c.Kind == TaskChanged {
		return
	}
	var params []byte
	want := func(ss *session, st *SessionState) bool { return c.Scope == "" || c.Scope == st.Owner }
	if c.Kind == ResourceUpdated {
		params = append(wire.AppendString([]byte(`{"uri":`), c.URI), '}')
		want = func(ss *session, st *SessionState) bool {
			return (c.Scope == "" || c.Scope == st.Owner) && slices.Contains(st.Subscriptions, c.URI)
		}
	}
	msg := jsonrpc.AppendNotification(nil, method, params)
	go l.sessions.broadcast(want, msg)
}

// subscribeBus subscribes the legacy era to the server's Bus, once, when
// the first legacy session opens.
func (l *legacyEra) subscribeBus(s *Server) {
	l.busOnce.Do(func() { s.bus.Subscribe(l.deliverChange) })
}

// LegacyRequest is the one place for what only the legacy era has for a
// request (revisions 2025-11-25 and older, in a session that initialize
// opened). Get it with the Legacy method of a request. It is nil for a
// modern request, and its methods do nothing on nil, so a handler written
// for both eras calls them unconditionally.
type LegacyRequest struct {
	x *exchange
}

// Legacy returns the legacy side of the request, or nil for a modern
// request (see LegacyRequest).
func (r *requestBase) Legacy() *LegacyRequest {
	if r.x == nil || r.x.session() == nil {
		return nil
	}
	return &LegacyRequest{x: r.x}
}

// CloseSSEStream asks a legacy Streamable HTTP client (revision 2025-11-25)
// to poll for the rest of the request: the server ends the HTTP connection
// that carries the request's SSE stream, after an event with an id and a
// retry delay, without ending the stream. The client reconnects with a GET
// and Last-Event-ID and receives what the handler sent since, including the
// result. It lets a long-running handler free a connection. Elsewhere
// (stdio, older legacy revisions) it does nothing. It is safe for
// concurrent use.
func (l *LegacyRequest) CloseSSEStream() {
	if l == nil {
		return
	}
	if st, ok := l.x.notifier.(*sseStream); ok {
		st.closeConn()
	}
}
