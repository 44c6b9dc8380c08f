// Package mcpwire builds raw MCP requests for tests: the one place in the
// repository that knows how a 2026-07-28 request and a legacy (2025-11-25
// era) request look on the wire, body and HTTP headers together, with an
// explicit knob for each rule a test needs to break.
//
// Tests that make ordinary MCP calls do not use it: they use the public
// client (github.com/mcpkit/mcpkit/client) or mcptest, which is built on
// it. This package is for what a well-behaved client never sends (a wrong
// or missing header, an unsupported version, a request without _meta,
// malformed JSON) and for tests that check the raw wire: status codes,
// content types, SSE framing.
//
// It lives under internal/ and imports neither mcp nor client, so that
// package mcp's own (internal) tests can use it: client imports mcp, so
// those tests cannot import client, and mcpwire must not either. It takes
// the header rules (MCP-Protocol-Version, Mcp-Method, Mcp-Name and their
// encoding) from internal/client, the transport layer of the public
// client, rather than declaring them again, and reads SSE with that
// package's reader.
//
// The nested modules (redis, otel, full) import it too: Go's internal rule
// goes by import path, not by module, and their paths lie under the root
// module's, as their tests' use of internal/demo already shows. Their
// ordinary calls go through the public client as well.
package mcpwire
