// Package client is a small MCP client for probing and testing servers of
// either era: the modern, stateless revision 2026-07-28 (every request
// carries _meta, and on HTTP the MCP-Protocol-Version, Mcp-Method and
// Mcp-Name headers) and the legacy revisions 2025-11-25, 2025-06-18,
// 2025-03-26 and 2024-11-05 (an initialize handshake, Mcp-Session-Id on
// Streamable HTTP, and the 2024-11-05 HTTP+SSE transport).
//
// It speaks Streamable HTTP and stdio. Connect tells a server's era exactly
// as the specification describes (basic/versioning, "Backward
// Compatibility"); the raw Conn API sends requests exactly as given, so that
// conformance checks can send deliberately malformed ones.
//
// It is the private transport and negotiation layer of the public client
// package (github.com/mcpkit/mcpkit/client), which adds the typed API,
// input handlers and notifications on top, and it backs `mcpkit discover`,
// whose checks need the raw replies. There is one SSE reader (sse.go) for
// every stream the client reads.
package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The protocol's vocabulary (versions, eras, transport names, error codes,
// _meta keys, headers) is package internal/protocol's, which mcp exports
// under its own names; this package speaks the versions of
// protocol.ModernVersions and protocol.LegacyVersions.

// IsModernError reports whether e is a recognized modern JSON-RPC error: one
// of the error codes that revision 2026-07-28 defines
// (protocol.IsModernCode). Any other error (a -32601 or -32602 from a
// legacy server, say) says nothing about the era.
func IsModernError(e *jsonrpc.Error) bool {
	return e != nil && protocol.IsModernCode(e.Code)
}

// Request is one JSON-RPC request or notification as it goes on the wire.
// Conn sends it as given; Session fills in _meta and headers.
type Request struct {
	Method string
	// Params is the complete params object, _meta included, or nil.
	Params json.RawMessage
	// Header holds the HTTP headers to send besides Content-Type, Accept,
	// the user's headers and, on a legacy session, Mcp-Session-Id. It is
	// ignored on stdio.
	Header http.Header
	// OnNotify, when set, gets the notifications that arrive for this
	// request while it is pending: on its HTTP response stream, or (on
	// stdio and the HTTP+SSE transport, where nothing ties a notification
	// to a request) none; those go to the connection's Handler.
	OnNotify func(raw []byte, m *jsonrpc.Message)
	// OnID, when set, is called with the request's JSON-RPC id before it
	// is sent (a subscriptions/listen stream is named by it).
	OnID func(id jsonrpc.ID)
	// Cancel makes a request whose context ends send
	// notifications/cancelled for it: on stdio, on HTTP+SSE, and on
	// Streamable HTTP in a legacy session (a modern server learns of it
	// from the aborted request).
	Cancel bool
}

// Reply is what came back for one request.
type Reply struct {
	// Status is the HTTP status code; 0 on stdio.
	Status int
	// Header holds the HTTP response headers; nil on stdio.
	Header http.Header
	// Body is the raw response body on HTTP (at most 64 KiB of it), or the
	// response line on stdio. It is kept for diagnostics.
	Body []byte
	// Msg is the JSON-RPC response, or nil when none could be read (an
	// empty or non-JSON-RPC body).
	Msg *jsonrpc.Message
	// Notifications are the notifications that arrived with the response
	// (on its SSE stream, or on stdio while it was pending).
	Notifications [][]byte
	// Latency is the time from sending the request to reading its
	// response.
	Latency time.Duration
	// TooLarge reports that the response was larger than the bound (16
	// MiB) and was not read.
	TooLarge bool
}

// Result returns the JSON-RPC result, or nil.
func (r *Reply) Result() json.RawMessage {
	if r == nil || r.Msg == nil || r.Msg.Error != nil {
		return nil
	}
	return r.Msg.Result
}

// RPCError returns the JSON-RPC error, or nil.
func (r *Reply) RPCError() *jsonrpc.Error {
	if r == nil || r.Msg == nil {
		return nil
	}
	return r.Msg.Error
}

// Describe summarizes the reply in a few words for messages: the status,
// and the JSON-RPC error or a sign of what the body was.
func (r *Reply) Describe() string {
	var parts []string
	if r.Status != 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", r.Status))
	}
	switch {
	case r.Msg != nil && r.Msg.Error != nil:
		parts = append(parts, fmt.Sprintf("error %d %q", r.Msg.Error.Code, truncate(r.Msg.Error.Message, 200)))
	case r.Msg != nil:
		parts = append(parts, "a result")
	case len(bytes.TrimSpace(r.Body)) == 0:
		parts = append(parts, "empty body")
	default:
		parts = append(parts, "body "+strconvQuote(truncate(string(r.Body), 80))+" (not a JSON-RPC response)")
	}
	return strings.Join(parts, ", ")
}

// TransportError is a failure to reach the server at all: a refused
// connection, a failed process start, a broken pipe. It says nothing about
// the server's protocol.
type TransportError struct {
	Op  string
	Err error
}

func (e *TransportError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *TransportError) Unwrap() error { return e.Err }

// ErrTimeout is returned when no response arrived in time.
var ErrTimeout = errors.New("no response within the timeout")

// ErrClosed is returned when the server closed the connection (or its
// process exited) before responding.
var ErrClosed = errors.New("the server closed the connection before responding")

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func strconvQuote(s string) string { return strconv.Quote(s) }

// maxListed is how many items of a list a server sent ListSummary shows.
const maxListed = 8

// ListSummary formats a list of strings a server sent (supportedVersions,
// data.supported) for a message: the first eight items, each cut at 40
// bytes, separated by sep, then how many more there are. A hostile list of
// thousands of versions stays one short line.
func ListSummary(items []string, sep string) string {
	var b strings.Builder
	for i, it := range items {
		if i == maxListed {
			fmt.Fprintf(&b, "%s... (%d more, %d in all)", sep, len(items)-maxListed, len(items))
			break
		}
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(truncate(it, 40))
	}
	return b.String()
}

// parseMessage decodes one JSON-RPC message, returning nil if data is not
// one.
func parseMessage(data []byte) *jsonrpc.Message {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil
	}
	return parseOwned(bytes.Clone(data))
}

// parseOwned is parseMessage of a buffer that nothing else writes to: the
// message's byte slices point into it, without a copy.
func parseOwned(data []byte) *jsonrpc.Message {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil
	}
	m, err := jsonrpc.Decode(data)
	if err != nil {
		return nil
	}
	return &m
}
