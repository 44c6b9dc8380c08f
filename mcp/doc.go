// Package mcp builds Model Context Protocol servers for protocol revision
// 2026-07-28, the stateless revision: every request carries its protocol
// version and client capabilities, any replica can serve any request, and
// server/discover describes the server in one call. The same [Server] also
// serves legacy clients (revisions up to 2025-11-25, which open a session
// with initialize), on the same endpoint and stdio process.
//
// The wire types (a [Tool], a [CallToolResult], an [Implementation], an
// [*Error]) are shared with the client, package
// [github.com/mcpkit/mcpkit/client].
//
// # Serving
//
// A [Server] made by [NewServer] holds the registered tools ([AddTool],
// [Server.AddRawTool]), resources and resource templates
// ([Server.AddResource], [Server.AddResourceTemplate]) and prompts
// ([Server.AddPrompt]), with argument completion for prompts and templates,
// and serves them over Streamable HTTP (it is an [net/http.Handler]) or
// over stdio ([Server.ServeStdio]). [ServerOptions] configures it; its zero
// value, and the zero value of each of its groups, is the default, and
// [Off] turns off a numeric setting that can be off. The server names
// itself with [ServerOptions].Info, as a client does with its ClientInfo.
//
// # Handlers
//
// A Server is safe for concurrent use, and so must handlers be: each
// request runs its handler in a goroutine of its own, so a handler runs
// concurrently with other calls of itself and of every other handler, on
// every transport and in both eras. Registering while serving is safe too;
// a request sees the registrations of the moment it arrived.
//
// A handler gets a context that is cancelled when the client goes away or
// cancels, or when the server shuts down; it should return soon after. The request value ([*ToolRequest],
// [*ResourceRequest], [*PromptRequest], ...) and everything it points to
// (Arguments, Info, the raw params) belong to the server and are valid only
// until the handler returns: the server may reuse them for later requests.
// Copy what must outlive the call; do not keep the request, or use its
// methods (Elicit, Progress, Log, ...), from another goroutine after the
// handler returned. Everything a request holds is read-only. The result a
// handler returns is the server's from then on: it is encoded once, and the
// handler must not change it afterwards.
//
// [AddTool] copies the [Tool] it is given (a shallow copy: Scopes is
// cloned, the rest is shared) and encodes it at once; change a tool by
// registering it again, never by modifying the maps, slices and schemas
// the registered value points to. The same holds for resources, templates
// and prompts. An ordinary error from a tool handler becomes an isError
// result the model can read; return an [*Error] for a protocol error. Other
// handlers' ordinary errors become an internal error whose details are
// logged, not sent. A panic in a handler is recovered and answered as an
// internal error.
//
// # Input from the client
//
// The handlers of tools, prompts and resources can ask the client for input
// (elicitation, sampling, roots) with the Elicit, Sample and ListRoots
// methods of their requests: the server answers input_required, the client
// retries with the answers, and the handler runs again. The state that
// travels with the retry is sealed with ServerOptions.State.Keys, which every
// replica must share. A legacy client is asked with real requests instead,
// and the handler runs again just the same.
//
// # Notifications
//
// Clients that want to hear about changes open a subscriptions/listen
// stream. Registering or removing tools, prompts and resources while
// serving notifies the streams that asked for that list, and
// [Server.NotifyResourceUpdated] notifies those that named the resource.
// Changes travel on ServerOptions.Bus ([Bus]), in-process by default; with
// a distributed Bus (the Redis one in [github.com/mcpkit/mcpkit/redis])
// they reach the streams of every replica. [Server.Shutdown] ends the
// streams gracefully.
//
// # Tasks
//
// A tool whose calls take long can declare Tool.TaskSupport: for clients
// that support the tasks extension ([TasksExtension]), its handler
// (unchanged) then runs in the background, and the client gets a task it
// polls with tasks/get, answers with tasks/update and stops with
// tasks/cancel. Tasks live in a [TaskStore] (ServerOptions.Tasks), which
// replicas share.
//
// # Errors
//
// [*Error] is the one coded error, with MCP's codes and the constructors
// [InvalidParams], [ResourceNotFound], [InsufficientScope] and
// [MissingCapability]; the transports map it to the right JSON-RPC code and
// HTTP status.
package mcp
