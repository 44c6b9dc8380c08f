// Package client is an MCP client for servers of both protocol eras: the
// stateless revision 2026-07-28 (server/discover, per-request _meta) and
// the legacy session revisions up to 2025-11-25 (an initialize handshake).
// It shares its wire types with package [github.com/mcpkit/mcpkit/mcp]: a
// listed tool is an [*mcp.Tool], a tool result an [*mcp.CallToolResult], a
// protocol error an [*mcp.Error], the era an [mcp.Era], the transport an
// [mcp.Transport]. It exports nothing that duplicates a name of mcp.
//
// # Connecting
//
// [Connect] reaches a server through a [Transport]: [HTTPTransport]
// (Streamable HTTP, with a custom *http.Client and extra headers; the 2024-11-05
// HTTP+SSE transport is tried when the endpoint refuses Streamable HTTP),
// [CommandTransport] (a stdio server process: its stderr is kept and shown
// when it fails, and Close closes its stdin, waits, and then kills it) or
// [MemoryTransport] (an [*mcp.Server] in the same process, without sockets).
//
// Connect negotiates discover first: it sends server/discover at the
// newest version; on UnsupportedProtocolVersion (-32022) it retries at the
// newest version both sides support (from the error's data.supported);
// when the answer shows a legacy server (anything but a DiscoverResult or
// a modern error), it sends initialize at 2025-11-25 and speaks the session
// protocol from then on. [Options].Version pins a version and
// [Options].Eras restricts the eras ([ModernOnly], [LegacyOnly]). Whatever
// the era, the caller sees one API: [Client.ServerInfo],
// [Client.Capabilities], [Client.Instructions], [Client.Era],
// [Client.ProtocolVersion] and [Client.Transport] describe the server.
//
// # Calls
//
// CallTool calls a tool and CallToolAs decodes its structuredContent into
// a Go value. ListTools, ListResources, ListResourceTemplates and
// ListPrompts are iterators that follow cursors. ReadResource, GetPrompt
// and Complete do what their names say. Every call takes CallOptions: extra
// _meta keys (WithMeta), a progress callback (WithProgress), a log
// callback and level (WithLog, WithLogLevel). On Streamable HTTP the client
// sends the headers the revision requires (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name) and mirrors arguments whose schema property is
// annotated with x-mcp-header into Mcp-Param-* headers; a listed tool
// whose x-mcp-header declaration is invalid is left out of ListTools, as
// the specification requires.
//
// # Input from the client
//
// Options.Elicit, Options.Sample and Options.Roots answer a server's
// requests for input: on a modern server the InputRequiredResult rounds
// of multi round-trip requests (requestState is echoed untouched, at most
// Options.MaxInputRounds rounds), on a legacy server real
// elicitation/create, sampling/createMessage and roots/list requests. The
// client declares exactly the capabilities whose handlers are set.
//
// # Errors
//
// A JSON-RPC error from the server is an *mcp.Error (match it with
// errors.As). A tool result with isError set comes back with a *ToolError.
// A server that breaks the protocol (no JSON-RPC response, a wrong result
// shape) gives a *ProtocolError; a message over the size bound (16 MiB)
// gives ErrTooLarge; no answer within the timeout gives ErrTimeout; a
// server that went away gives ErrClosed. Nothing a server sends makes the
// client panic or wait without bound: every request has a timeout unless
// the caller opts out.
package client
