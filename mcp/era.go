package mcp

import (
	"context"
	"net/http"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// era is the seam between the protocol's two generations. Everything an
// exchange does differently for a legacy client (revisions 2025-11-25 and
// older, in a session opened by initialize) than for a modern one
// (2026-07-28, stateless) goes through it: how a result and an error are
// encoded, how the client is asked for input, and who the caller is. The
// handlers, the encoders and the transports call it instead of branching
// on RequestInfo.Era, which stays as information for handlers.
//
// There are two implementations, modernWire and legacyWire; eraOf picks
// one. Neither has state, so calling through the interface allocates
// nothing.
type era interface {
	// builtin returns this era's handler of a method the package serves
	// itself (the methods table; the legacy era adds initialize's
	// company and leaves out the methods it lacks).
	builtin(method string) (methodHandler, bool)
	// invoke runs the method handler h of exchange x and appends its
	// response to dst: at once (modern), or through the legacy bridge,
	// which asks the client for input with real requests.
	invoke(ctx context.Context, x *exchange, h methodHandler, dst []byte) ([]byte, error)
	// answerError appends the error response for err, which h returned,
	// with its HTTP status.
	answerError(x *exchange, n Notifier, err error, dst []byte) ([]byte, int)
	// appendResultObject appends a result object: resultType first, the
	// cache hint members (hint, nil when not cacheable), body's members,
	// and _meta with serverInfo merged with userMeta. See
	// Server.appendResultObjectHint.
	appendResultObject(s *Server, dst []byte, resultType string, hint, body, userMeta []byte) []byte
	// appendRaw appends the response for id whose result object is
	// already encoded for the modern era, as the snapshot caches it.
	appendRaw(dst []byte, id jsonrpc.ID, result []byte) []byte
	// errorFor returns the error this era's clients get for e, answering
	// method.
	errorFor(method string, e *Error) *Error
	// errorStatus is the HTTP status that an error response travels with.
	errorStatus(e *Error) int
	// askClient is how a handler's round of input requests reaches the
	// client, once the state is sealed in tok: nil means "answer
	// input_required" (modern); an error is the round that the legacy
	// bridge sends as real requests before the handler runs again.
	askClient(rd *round, tok string) error
	// session returns the caller's legacy session (nil for modern).
	session(n Notifier) *session
	// resultType reads the resultType of an encoded result object.
	resultType(result []byte) string
	// paramHeaders reports whether requests mirror tool parameters into
	// HTTP headers that must agree with the arguments.
	paramHeaders() bool
	// cacheHints reports whether results carry ttlMs and cacheScope.
	cacheHints() bool
	// serves reports whether a custom method (AddMethod) with options o
	// is served in this era.
	serves(o *MethodOptions) bool
}

// eraOf returns the implementation of e. It is the only place that looks
// at an Era value to decide what to do.
func eraOf(e Era) era {
	if e == EraLegacy {
		return legacyWire{}
	}
	return modernWire{}
}

// era returns the exchange's era.
func (x *exchange) era() era { return eraOf(x.info.Era) }

// appendEraError appends the error response for e in era w, with its
// HTTP status.
func appendEraError(w era, dst []byte, id jsonrpc.ID, e *Error) ([]byte, int) {
	return jsonrpc.AppendError(dst, id, e.wire()), w.errorStatus(e)
}

// modernWire is revision 2026-07-28.
type modernWire struct{}

func (modernWire) builtin(method string) (methodHandler, bool) {
	h, ok := methods[method]
	return h, ok
}

func (modernWire) invoke(ctx context.Context, x *exchange, h methodHandler, dst []byte) ([]byte, error) {
	return x.run(ctx, h, dst)
}

func (modernWire) answerError(x *exchange, n Notifier, err error, dst []byte) ([]byte, int) {
	return x.s.answerError(x, n, err, dst)
}

func (modernWire) appendResultObject(s *Server, dst []byte, resultType string, hint, body, userMeta []byte) []byte {
	return s.appendModernResultObject(dst, resultType, hint, body, userMeta)
}

func (modernWire) appendRaw(dst []byte, id jsonrpc.ID, result []byte) []byte {
	return jsonrpc.AppendResult(dst, id, result)
}

func (modernWire) errorFor(method string, e *Error) *Error { return e }
func (modernWire) errorStatus(e *Error) int                { return e.HTTPStatus() }
func (modernWire) askClient(rd *round, tok string) error   { return nil }
func (modernWire) session(n Notifier) *session             { return nil }
func (modernWire) paramHeaders() bool                      { return true }
func (modernWire) cacheHints() bool                        { return true }
func (modernWire) serves(o *MethodOptions) bool            { return true }

func (modernWire) resultType(result []byte) string {
	if rt, ok := jsonscan.Lookup(result, "resultType"); ok {
		if s, ok := jsonscan.String(rt); ok {
			return s
		}
	}
	return resultComplete
}

// legacyWire is revisions 2025-11-25 and older (legacy.go,
// legacy_session.go, legacy_http.go, legacy_bridge.go).
type legacyWire struct{}

func (legacyWire) builtin(method string) (methodHandler, bool) {
	if h, ok := legacyMethods[method]; ok {
		return h, true
	}
	if modernOnlyMethods[method] {
		return nil, false
	}
	h, ok := methods[method]
	return h, ok
}

func (legacyWire) invoke(ctx context.Context, x *exchange, h methodHandler, dst []byte) ([]byte, error) {
	return x.s.legacyInvoke(ctx, x, h, dst)
}

func (legacyWire) answerError(x *exchange, n Notifier, err error, dst []byte) ([]byte, int) {
	return x.s.answerLegacyError(x, err, dst)
}

// appendResultObject follows the 2025-11-25 schema: no resultType, no
// cache hints, and _meta only when userMeta has members (serverInfo
// travels in the initialize result).
func (legacyWire) appendResultObject(s *Server, dst []byte, resultType string, hint, body, userMeta []byte) []byte {
	return appendLegacyResultObject(dst, body, userMeta)
}

// appendRaw reshapes the modern result by the 2025-11-25 schema.
func (legacyWire) appendRaw(dst []byte, id jsonrpc.ID, result []byte) []byte {
	dst = appendResponsePrefix(dst, id)
	dst = appendLegacyResult(dst, result)
	return append(dst, '}')
}

func (legacyWire) errorFor(method string, e *Error) *Error { return legacyError(method, e) }

// errorStatus is always 200: clients of that era read 404 as "session
// gone" and 400 as a transport failure.
func (legacyWire) errorStatus(e *Error) int { return http.StatusOK }

// askClient hands the round to the legacy bridge, which asks with real
// requests, and runs the handler again with the answers.
func (legacyWire) askClient(rd *round, tok string) error { return legacyRoundOf(rd, tok) }

func (legacyWire) session(n Notifier) *session {
	if sn, ok := n.(sessionNotifier); ok {
		return sn.legacySession()
	}
	return nil
}

func (legacyWire) resultType(result []byte) string { return resultComplete }
func (legacyWire) paramHeaders() bool              { return false }
func (legacyWire) cacheHints() bool                { return false }
func (legacyWire) serves(o *MethodOptions) bool    { return !o.DisableLegacy }
