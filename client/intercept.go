package client

import (
	"context"
	"encoding/json"
	"errors"
	"maps"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/mcp"
)

// An Interceptor wraps each call the client makes (CallTool, ListTools,
// ReadResource, GetPrompt, Call and the others that send one request), the
// client-side mirror of mcp.Interceptor: it sees the call (c) and the
// outcome that next returns, may change the context, may add members to
// the requests' _meta through c.Meta (trace context, say), and may answer
// without calling next by returning an Outcome with Err set. A call is
// one interceptor call however many input_required rounds it takes, and a
// result served from the cache is one too. Interceptors run in the order
// of Options.Interceptors, the first outermost; they must call next at
// most once, on the goroutine they were called on.
type Interceptor func(ctx context.Context, c *Call, next CallHandler) Outcome

// CallHandler handles a call: the next interceptor, or the call itself.
type CallHandler func(ctx context.Context, c *Call) Outcome

// Call is an interceptor's view of one call.
type Call struct {
	// Method is the JSON-RPC method, such as "tools/call".
	Method string
	// Name is the tool or prompt name, the resource URI or the task id the
	// call names; "" otherwise.
	Name string
	// Params are the call's params, without _meta. Read-only.
	Params map[string]any
	// Meta holds _meta members to send with each request of the call, on
	// top of the protocol's own and the caller's WithMeta; an interceptor
	// adds to it before calling next. It is never nil.
	Meta map[string]any
	// Era and ProtocolVersion are the connection's.
	Era             mcp.Era
	ProtocolVersion string
	// Transport is the connection's transport, as Client.Transport says.
	Transport mcp.Transport
	// ServerURL is the server's MCP endpoint URL on Streamable HTTP and
	// HTTP+SSE (the URL the transport was given), and "" on stdio and in
	// memory.
	ServerURL string
}

// Outcome is how a call ended.
type Outcome struct {
	// Result is the result object; nil when the call failed.
	Result json.RawMessage
	// ResultType is the result's resultType ("complete", "task"); "" for
	// a result without one (the legacy era) or a failure.
	ResultType string
	// ToolError reports a tools/call result with isError true.
	ToolError bool
	// Err is the call's error: a *mcp.Error for a JSON-RPC error
	// response, a *ProtocolError, a transport error, or what an
	// interceptor answered with.
	Err error
}

// Code returns the JSON-RPC error code of the outcome's error, and 0 when
// it has none (success, or an error that is not a JSON-RPC error).
func (o Outcome) Code() int {
	var e *mcp.Error
	if errors.As(o.Err, &e) {
		return e.Code
	}
	return 0
}

// interceptedKey marks a context whose call runs inside the interceptors
// of the client it holds. It names the client: the context of a call
// reaches an in-process server (MemoryTransport), and the calls that
// server's handlers make with their own clients (a bridge's to its
// backend) go through those clients' interceptors.
type interceptedKey struct{}

// intercepting reports whether the call with ctx must go through the
// interceptors first.
func (c *Client) intercepting(ctx context.Context) bool {
	return len(c.opts.Interceptors) > 0 && ctx.Value(interceptedKey{}) != c
}

// callIntercepted runs call inside the interceptors.
func (c *Client) callIntercepted(ctx context.Context, method string, params map[string]any, cfg *callConfig) (json.RawMessage, error) {
	conn := c.sess.Conn()
	ic := &Call{Method: method, Params: params, Meta: map[string]any{}, Era: c.Era(), ProtocolVersion: c.ProtocolVersion(),
		Transport: c.Transport()}
	if u, ok := conn.(interface{ URL() string }); ok {
		ic.ServerURL = u.URL()
	}
	for _, k := range []string{"name", "uri", "taskId"} {
		switch v := params[k].(type) {
		case string:
			ic.Name = v
		case json.RawMessage: // Call's params pass through as JSON
			json.Unmarshal(v, &ic.Name)
		}
		if ic.Name != "" {
			break
		}
	}
	var inner Outcome
	ran := false
	h := CallHandler(func(ctx context.Context, ic *Call) Outcome {
		ran = true
		run := cfg
		if len(ic.Meta) > 0 {
			cp := *cfg
			cp.icMeta = maps.Clone(ic.Meta) // under the caller's WithMeta keys
			run = &cp
		}
		res, err := c.call(context.WithValue(ctx, interceptedKey{}, c), method, params, run)
		inner = Outcome{Result: res, Err: err}
		if err == nil {
			inner.ResultType = resultType(res)
			if v, ok := jsonscan.Lookup(res, "isError"); ok && string(v) == "true" {
				inner.ToolError = true
			}
		}
		return inner
	})
	for i := len(c.opts.Interceptors) - 1; i >= 0; i-- {
		icp, next := c.opts.Interceptors[i], h
		h = func(ctx context.Context, ic *Call) Outcome { return icp(ctx, ic, next) }
	}
	o := h(ctx, ic)
	switch {
	case o.Err != nil:
		return nil, o.Err
	case !ran:
		return nil, errors.New("client: " + method + ": an interceptor returned without calling next or setting Outcome.Err")
	}
	return inner.Result, inner.Err
}
