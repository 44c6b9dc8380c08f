package mcp

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Code is a JSON-RPC error code.
type Code int

// The error codes mcpkit sends. The first five are JSON-RPC's own; the rest
// are defined by MCP revision 2026-07-28.
const (
	CodeParseError     Code = jsonrpc.CodeParseError
	CodeInvalidRequest Code = jsonrpc.CodeInvalidRequest
	CodeMethodNotFound Code = jsonrpc.CodeMethodNotFound
	CodeInvalidParams  Code = jsonrpc.CodeInvalidParams
	CodeInternalError  Code = jsonrpc.CodeInternalError

	// CodeHeaderMismatch: HTTP headers disagree with the body, or a required
	// header is missing or malformed.
	CodeHeaderMismatch Code = -32020
	// CodeMissingCapability: the request needs a client capability the
	// client did not declare in this request's _meta.
	CodeMissingCapability Code = -32021
	// CodeUnsupportedVersion: the request's protocol version is not served.
	CodeUnsupportedVersion Code = -32022
)

// Error is a protocol error: it becomes a JSON-RPC error response with its
// Code, Message and Data. Handlers return one (directly or wrapped) to fail a
// request at the protocol level; any other error from a tool handler becomes
// an isError tool result instead. Match it with errors.As.
type Error struct {
	Code    Code
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
	case CodeMethodNotFound:
		return http.StatusNotFound
	case CodeParseError, CodeInvalidRequest, CodeInvalidParams,
		CodeHeaderMismatch, CodeMissingCapability, CodeUnsupportedVersion:
		return http.StatusBadRequest
	case CodeInternalError:
		return http.StatusInternalServerError
	}
	// Application-defined codes are still JSON-RPC errors of a request
	// that was understood.
	return http.StatusOK
}

// wire returns the JSON-RPC error object.
func (e *Error) wire() *jsonrpc.Error {
	w := &jsonrpc.Error{Code: int(e.Code), Message: e.Message}
	if e.Data != nil {
		if raw, ok := e.Data.(json.RawMessage); ok {
			w.Data = raw
		} else if b, err := json.Marshal(e.Data); err == nil {
			w.Data = b
		}
	}
	return w
}

// asError returns err as a protocol *Error if it is (or wraps) one.
func asError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// fromWire converts a decoding error from the jsonrpc package.
func fromWire(e *jsonrpc.Error) *Error {
	return &Error{Code: Code(e.Code), Message: e.Message}
}

// Errors of the transport layer, with their HTTP statuses.
var (
	errBodyTooLarge     = &Error{Code: CodeInvalidRequest, Message: "Request body too large", status: http.StatusRequestEntityTooLarge}
	errHeaderTooLarge   = &Error{Code: CodeInvalidRequest, Message: "Request header fields too large", status: http.StatusRequestHeaderFieldsTooLarge}
	errMediaType        = &Error{Code: CodeInvalidRequest, Message: "Unsupported Media Type: Content-Type must be application/json", status: http.StatusUnsupportedMediaType}
	errMethodNotAllowed = &Error{Code: CodeInvalidRequest, Message: "Method Not Allowed: the MCP endpoint accepts POST only", status: http.StatusMethodNotAllowed}
	errForbiddenOrigin  = &Error{Code: CodeInvalidRequest, Message: "Forbidden: Origin not allowed", status: http.StatusForbidden}
	errForbiddenHost    = &Error{Code: CodeInvalidRequest, Message: "Forbidden: Host not allowed", status: http.StatusForbidden}
	errResponseNotExp   = &Error{Code: CodeInvalidRequest, Message: "Invalid Request: the server sent no request this could answer"}
)

// InvalidParams returns a protocol error with CodeInvalidParams.
func InvalidParams(msg string) *Error { return &Error{Code: CodeInvalidParams, Message: msg} }

// MissingCapabilityError returns the MissingRequiredClientCapability error
// (-32021) for the given missing client capabilities.
func MissingCapabilityError(required ClientCapabilities) *Error {
	return &Error{
		Code:    CodeMissingCapability,
		Message: "Missing required client capability",
		Data:    map[string]any{"requiredCapabilities": required},
	}
}
