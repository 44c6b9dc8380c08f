// Package protocol is MCP's vocabulary, declared once for both halves of
// the module: the protocol versions and the eras they belong to, the
// transport names, the error codes MCP adds to JSON-RPC's, the reserved
// _meta keys and the HTTP headers.
//
// Package mcp exports these under its own documented names
// (mcp.LatestVersion, mcp.EraLegacy, mcp.CodeUnsupportedVersion,
// mcp.TransportStdio, ...), each defined from the one here, and the server
// uses the rest directly. Package internal/client, the client's transports
// and negotiation, uses them here because it cannot import mcp: mcp's own
// tests reach internal/client through internal/mcpwire. This package
// imports only the standard library, so that either side may import it.
//
// The identities (mcp.Implementation and its Icons) stay mcp's types:
// internal/client carries them encoded (json.RawMessage), so every field
// crosses without a second declaration.
package protocol

import "slices"

// The protocol revisions, by the date that names them.
const (
	// LatestVersion is the newest revision, the stateless one: every
	// request carries its version, client capabilities and client
	// identity in _meta.
	LatestVersion = "2026-07-28"
	// LegacyVersion is the newest revision that opens a session with an
	// initialize handshake.
	LegacyVersion = "2025-11-25"
	// The older legacy revisions. 2024-11-05 also names the deprecated
	// HTTP+SSE transport.
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
	Version20241105 = "2024-11-05"
)

// ModernVersions are the modern (per-request _meta) revisions, newest
// first. Callers must not modify it; clone it to hand it out.
var ModernVersions = []string{LatestVersion}

// LegacyVersions are the legacy (initialize handshake) revisions, newest
// first. Callers must not modify it; clone it to hand it out.
var LegacyVersions = []string{LegacyVersion, Version20250618, Version20250326, Version20241105}

// IsLegacy reports whether v is one of LegacyVersions.
func IsLegacy(v string) bool { return slices.Contains(LegacyVersions, v) }

// Era is the generation of the protocol a request, a session or a server
// speaks. mcp.Era has the same values (the one converts to the other).
type Era uint8

// The eras.
const (
	// EraModern is revision 2026-07-28 and later: stateless, every request
	// carries its version and client capabilities in _meta.
	EraModern Era = iota
	// EraLegacy is revisions 2025-11-25 and earlier: an initialize
	// handshake opens a session that fixes the version and capabilities.
	EraLegacy
)

// String returns "modern" or "legacy".
func (e Era) String() string {
	if e == EraLegacy {
		return "legacy"
	}
	return "modern"
}

// The transport names (mcp.Transport's values).
const (
	// TransportStdio is newline-delimited JSON-RPC over a process's stdin
	// and stdout (either era).
	TransportStdio = "stdio"
	// TransportStreamableHTTP is Streamable HTTP (either era).
	TransportStreamableHTTP = "streamable-http"
	// TransportSSE is the deprecated HTTP+SSE transport of revision
	// 2024-11-05.
	TransportSSE = "http+sse"
)

// The error codes MCP defines on top of JSON-RPC's own (which package
// jsonrpc declares).
const (
	// CodeHeaderMismatch: HTTP headers disagree with the body, or a
	// required header is missing or malformed.
	CodeHeaderMismatch = -32020
	// CodeMissingCapability: the request needs a client capability the
	// client did not declare in its _meta.
	CodeMissingCapability = -32021
	// CodeUnsupportedVersion: the request's protocol version is not
	// served.
	CodeUnsupportedVersion = -32022
	// CodeResourceNotFound is the legacy (2025-11-25) code for a resource
	// that does not exist; revision 2026-07-28 uses -32602.
	CodeResourceNotFound = -32002
)

// IsModernCode reports whether code is one that only revision 2026-07-28
// and later define (CodeHeaderMismatch, CodeMissingCapability,
// CodeUnsupportedVersion): an answer carrying one comes from a modern
// server.
func IsModernCode(code int) bool {
	switch code {
	case CodeHeaderMismatch, CodeMissingCapability, CodeUnsupportedVersion:
		return true
	}
	return false
}

// The reserved _meta keys of revision 2026-07-28, and their common prefix.
const (
	MetaPrefix             = "io.modelcontextprotocol/"
	MetaProtocolVersion    = MetaPrefix + "protocolVersion"
	MetaClientInfo         = MetaPrefix + "clientInfo"
	MetaClientCapabilities = MetaPrefix + "clientCapabilities"
	MetaLogLevel           = MetaPrefix + "logLevel"
	MetaServerInfo         = MetaPrefix + "serverInfo"
	MetaSubscriptionID     = MetaPrefix + "subscriptionId"
)

// The HTTP headers of Streamable HTTP, in canonical form (as
// http.Header's Set and Get spell them).
const (
	// HeaderProtocolVersion carries the request's protocol version (every
	// request of revision 2026-07-28; a legacy session's requests after
	// initialize).
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	// HeaderMethod and HeaderName mirror the request's method and the
	// name of the tool, prompt or resource it is about (2026-07-28).
	HeaderMethod = "Mcp-Method"
	HeaderName   = "Mcp-Name"
	// HeaderParamPrefix begins the headers that mirror a tool's
	// x-mcp-header arguments (Mcp-Param-NAME).
	HeaderParamPrefix = "Mcp-Param-"
	// HeaderSessionID carries a legacy session's id.
	HeaderSessionID = "Mcp-Session-Id"
)
