// Package servers builds the one small MCP server that the benchmarks
// compare, once per implementation: on mcpkit, on the official go-sdk, on
// mcp-go, and two floors that do no MCP work at all (a net/http handler that
// writes a fixed body and a bufio line echo on stdio).
//
// Every implementation serves the same thing: server name, version and
// instructions; server/discover with cache hints of one hour, public; and the
// tool echo, whose {"text": string} input is validated against its schema
// and whose result is the text as one text content item. The tools burn
// (about 1 ms of CPU) and sleep (50 ms) take and return the same, for the
// overload runs (work.go).
package servers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// The server every implementation builds.
const (
	Name         = "bench-server"
	Version      = "1.0.0"
	Instructions = "A benchmark server with one tool, echo, that returns its text."
	ToolName     = "echo"
	ToolDesc     = "Echoes the given text back as one text content item."
	// CacheTTL is the freshness hint of server/discover.
	CacheTTL = time.Hour
	// CacheScope is the cacheScope of server/discover.
	CacheScope = "public"
	// Path is where the HTTP servers serve MCP.
	Path = "/mcp"
)

// The fan-out case's tools. A server started with -touch (Touch) also has
// the tool touch, whose every call changes the tool list by exactly one
// tool: it adds the tool transient when it is absent and removes it when it
// is present, so that each call publishes one tools/list_changed.
const (
	TouchTool     = "touch"
	TouchDesc     = "Adds the tool transient, or removes it when present: one tools list change per call."
	TouchText     = "touched"
	TransientTool = "transient"
	TransientDesc = "A tool that touch adds and removes."
)

// MaxInFlight, when set before a handler is built, is mcpkit's
// Quotas.MaxInFlightRequests (0: its default; mcp.Off: no limit). The peers
// have no such limit and ignore it.
var MaxInFlight int

// FixedInFlight, when set before a handler is built, turns mcpkit's
// adaptive in-flight limit off (Quotas.MaxQueueDelay Off): the limit is
// then MaxInFlight, fixed.
var FixedInFlight bool

// Touch, when set before a handler is built, registers the touch tool.
var Touch bool

// Stateful, when set before a handler is built, configures the peers'
// Streamable HTTP handlers in their stateful mode, with sessions, as
// 2025-11-25 clients need them: go-sdk's StreamableHTTPHandler with
// Stateless false (JSON responses, as in the stateless mode), mcp-go's
// StreamableHTTPServer with sessions (its default). mcpkit serves legacy
// clients with sessions from the same handler and ignores it.
var Stateful bool

// EchoIn is the input of the echo tool.
type EchoIn struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

// Implementations, in report order. Floor is the baseline the others are
// measured against.
const (
	Mcpkit = "mcpkit"
	GoSDK  = "gosdk"
	McpGo  = "mcpgo"
	Floor  = "floor"
)

// Impls lists every implementation, floor last.
var Impls = []string{Mcpkit, GoSDK, McpGo, Floor}

// Describe names an implementation with its library version for reports.
func Describe(impl string) string {
	switch impl {
	case Mcpkit:
		return "mcpkit (this repository)"
	case GoSDK:
		return "github.com/modelcontextprotocol/go-sdk v1.8.0 (stateless Streamable HTTP, JSON responses; for legacy HTTP clients a stateful handler with sessions, JSON responses)"
	case McpGo:
		return "github.com/mark3labs/mcp-go v1.2.1 (stateless Streamable HTTP, input validation on; for legacy HTTP clients the default stateful server with sessions)"
	case Floor:
		return "floor: net/http handler writing a fixed body / bufio line echo on stdio"
	}
	return impl
}

// implementation is how one implementation serves.
type implementation struct {
	http  func() http.Handler
	stdio func(ctx context.Context, r io.Reader, w io.Writer) error
}

// built holds the implementations compiled into this binary. Each peer's
// file is excluded by the build tags only_mcpkit, only_gosdk, only_mcpgo and
// only_floor, so that a benchserver built with one of them links only that
// implementation's dependencies (and runs only their package init): start
// times then compare libraries, not one binary holding all of them.
var built = map[string]implementation{
	Floor: {
		http:  func() http.Handler { return FloorHandler{} },
		stdio: func(_ context.Context, r io.Reader, w io.Writer) error { return FloorStdio(r, w) },
	},
}

func lookup(impl string) (implementation, error) {
	if im, ok := built[impl]; ok {
		return im, nil
	}
	if slices.Contains(Impls, impl) {
		return implementation{}, fmt.Errorf("implementation %q is not built into this binary (build tags)", impl)
	}
	return implementation{}, fmt.Errorf("unknown implementation %q", impl)
}

// HTTPHandler returns the http.Handler of impl, to be mounted at Path.
func HTTPHandler(impl string) (http.Handler, error) {
	im, err := lookup(impl)
	if err != nil {
		return nil, err
	}
	return im.http(), nil
}

// ServeStdio serves impl over newline-delimited JSON-RPC on r and w until r
// ends or ctx is cancelled.
func ServeStdio(ctx context.Context, impl string, r io.Reader, w io.Writer) error {
	im, err := lookup(impl)
	if err != nil {
		return err
	}
	return im.stdio(ctx, r, w)
}
