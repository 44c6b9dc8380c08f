package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The error codes MCP defines on top of JSON-RPC's own, which are declared
// once, in package jsonrpc (jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest,
// jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidParams and jsonrpc.CodeInternalError).
const (
	// CodeHeaderMismatch (-32020): HTTP headers disagree with the body, or
	// a required header is missing or malformed.
	CodeHeaderMismatch = protocol.CodeHeaderMismatch
	// CodeMissingCapability (-32021): the request needs a client
	// capability the client did not declare in this request's _meta (see
	// MissingCapability).
	CodeMissingCapability = protocol.CodeMissingCapability
	// CodeUnsupportedVersion (-32022): the request's protocol version is
	// not served.
	CodeUnsupportedVersion = protocol.CodeUnsupportedVersion
	// CodeResourceNotFound (-32002) is the legacy (2025-11-25) code for a
	// resource that does not exist. Revision 2026-07-28 uses
	// jsonrpc.CodeInvalidParams instead; ResourceNotFound makes the modern
	// error, and a legacy session gets this code in its place.
	CodeResourceNotFound = protocol.CodeResourceNotFound
)

// Error is a protocol error: it becomes a JSON-RPC error response with its
// Code, Message and Data. Handlers return one (directly or wrapped) to fail a
// request at the protocol level; any other error from a tool handler becomes
// an isError tool result instead, and from other handlers an internal error
// (-32603). A *jsonrpc.Error that a handler returns (directly or wrapped)
// counts as an Error with the same code, message and data: it is the one
// coded error, whichever package made it. Match it with errors.As.
//
// The constructors InvalidParams, ResourceNotFound, InsufficientScope and
// MissingCapability make the errors handlers return most.
type Error struct {
	// Code is the JSON-RPC error code: one of jsonrpc's, one of this
	// package's Code constants, or an application-defined one.
	Code    int
	Message string
	// Data is encoded as the error's data member when non-nil.
	Data any
	// Err is an optional underlying cause, reachable through Unwrap. It is
	// never sent to the client.
	Err error

	// status overrides the HTTP status that the code maps to; used for
	// transport-level failures such as 413 and 415.
	status int
}

// Error returns the message, followed by the cause when there is one.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// HTTPStatus returns the HTTP status code this error is sent with on
// Streamable HTTP. This is the one table that maps protocol errors to
// statuses.
func (e *Error) HTTPStatus() int {
	if e.status != 0 {
		return e.status
	}
	switch e.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeInvalidParams,
		CodeHeaderMismatch, CodeMissingCapability, CodeUnsupportedVersion:
		return http.StatusBadRequest
	case jsonrpc.CodeInternalError:
		return http.StatusInternalServerError
	}
	// Application-defined codes are still JSON-RPC errors of a request
	// that was understood.
	return http.StatusOK
}

// wire returns the JSON-RPC error object.
func (e *Error) wire() *jsonrpc.Error {
	w := &jsonrpc.Error{Code: e.Code, Message: e.Message}
	if e.Data != nil {
		if raw, ok := e.Data.(json.RawMessage); ok {
			w.Data = raw
		} else if b, err := json.Marshal(e.Data); err == nil {
			w.Data = b
		}
	}
	return w
}

// asError returns err as a protocol *Error if it is (or wraps) one, or a
// *jsonrpc.Error.
func asError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	var w *jsonrpc.Error
	if errors.As(err, &w) {
		e := fromWire(w)
		e.Err = err
		return e, true
	}
	return nil, false
}

// fromWire converts a *jsonrpc.Error (a decoding error, or one a handler
// returned) to an Error with the same code, message and data.
func fromWire(e *jsonrpc.Error) *Error {
	out := &Error{Code: e.Code, Message: e.Message}
	if len(e.Data) > 0 {
		out.Data = e.Data
	}
	return out
}

// Errors of the transport layer, with their HTTP statuses.
var (
	errBodyTimeout      = &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Request body timed out", status: http.StatusRequestTimeout}
	errBodyTooLarge     = &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Request body too large", status: http.StatusRequestEntityTooLarge}
	errHeaderTooLarge   = &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Request header fields too large", status: http.StatusRequestHeaderFieldsTooLarge}
	errMediaType        = &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Unsupported Media Type: Content-Type must be application/json", status: http.StatusUnsupportedMediaType}
	errMethodNotAllowed = &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Method Not Allowed: the MCP endpoint accepts POST only", status: http.StatusMethodNotAllowed}
	errForbiddenOrigin  = &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Forbidden: Origin not allowed", status: http.StatusForbidden}
	errForbiddenHost    = &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Forbidden: Host not allowed", status: http.StatusForbidden}
	errResponseNotExp   = &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: the server sent no request this could answer"}
)

// cancelled is the epilogue every handler call shares: for an ordinary
// error (not a protocol *Error) of a handler whose request was cancelled,
// it returns the "Request cancelled" error the request is answered with
// (if anyone still listens) instead of the handler's error; otherwise nil.
func cancelled(ctx context.Context, err error) *Error {
	if _, ok := asError(err); !ok && ctx.Err() != nil {
		return requestCancelled(ctx)
	}
	return nil
}

// requestCancelled is the answer to a request whose context ended before
// it was answered.
func requestCancelled(ctx context.Context) *Error {
	return &Error{Code: jsonrpc.CodeInternalError, Message: "Request cancelled", Err: ctx.Err()}
}

// InvalidParams returns the protocol error jsonrpc.CodeInvalidParams with
// message msg.
func InvalidParams(msg string) *Error { return &Error{Code: jsonrpc.CodeInvalidParams, Message: msg} }

// ResourceNotFound returns the error for a resource that does not exist:
// Invalid Params (-32602) with data {"uri": uri}, as revision 2026-07-28
// requires.
func ResourceNotFound(uri string) *Error {
	data, _ := json.Marshal(struct {
		URI string `json:"uri"`
	}{uri})
	return &Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found: " + uri, Data: json.RawMessage(data)}
}

// MissingCapability returns the MissingRequiredClientCapability error
// (CodeMissingCapability, -32021) for the given missing client
// capabilities, which data.requiredCapabilities names, and so does the
// message, for a person: "Missing required client capability: sampling
// (declare it in the request's clientCapabilities)".
func MissingCapability(required ClientCapabilities) *Error {
	return &Error{
		Code:    CodeMissingCapability,
		Message: missingCapabilityMessage(required),
		Data:    map[string]any{"requiredCapabilities": required},
	}
}
