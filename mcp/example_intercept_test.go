package mcp_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/mcp"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// limiter allows a number of tool calls per caller and window.
type limiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	start  time.Time
	calls  map[string]int
}

// intercept refuses the calls of a caller past its quota with a clear
// error; other methods pass.
func (l *limiter) intercept(ctx context.Context, c *mcp.Call, next mcp.CallHandler) mcp.Outcome {
	if c.Method != "tools/call" || c.Phase != mcp.PhaseRequest {
		return next(ctx, c)
	}
	who := c.Info.ClientInfo.Name // or c.Info.Principal.Subject behind OAuth
	l.mu.Lock()
	if now := time.Now(); now.Sub(l.start) > l.window {
		l.start, l.calls = now, map[string]int{}
	}
	l.calls[who]++
	over := l.calls[who] > l.max
	l.mu.Unlock()
	if over {
		return mcp.Outcome{Err: &mcp.Error{
			Code:    jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("Rate limit: at most %d tool calls per %s", l.max, l.window),
		}}
	}
	return next(ctx, c)
}

// An interceptor that rate-limits tool calls, on every transport and era.
func ExampleInterceptor() {
	l := &limiter{max: 2, window: time.Minute}
	s := mcp.NewServer(&mcp.ServerOptions{Interceptors: []mcp.Interceptor{l.intercept}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "ok", nil })
	for range 3 {
		fmt.Println(exampleRPC(s, "tools/call", `{"name":"echo","arguments":{}}`, ""))
	}
	// Output:
	// {"id":1,"result":{"content":[{"text":"ok","type":"text"}],"resultType":"complete"}}
	// {"id":1,"result":{"content":[{"text":"ok","type":"text"}],"resultType":"complete"}}
	// {"error":{"code":-32600,"message":"Rate limit: at most 2 tool calls per 1m0s"},"id":1}
}

// An access log: one line per call with its method, name, duration and
// outcome (never its arguments).
func ExampleInterceptor_accessLog() {
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" {
				return slog.Attr{} // left out of the example's output
			}
			return a
		},
	}))
	accessLog := func(ctx context.Context, c *mcp.Call, next mcp.CallHandler) mcp.Outcome {
		start := time.Now()
		o := next(ctx, c)
		attrs := []any{"method", c.Method, "name", c.Name, "duration", time.Since(start), "transport", c.Transport}
		if o.Err != nil {
			attrs = append(attrs, "code", int(o.Err.Code))
		} else {
			attrs = append(attrs, "result", o.ResultType, "toolError", o.ToolError)
		}
		log.Info("mcp call", attrs...)
		return o
	}
	s := mcp.NewServer(&mcp.ServerOptions{Interceptors: []mcp.Interceptor{accessLog}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "ok", nil })
	exampleRPC(s, "tools/call", `{"name":"echo","arguments":{}}`, "")
	exampleRPC(s, "tools/call", `{"name":"missing","arguments":{}}`, "")
	// Output:
	// level=INFO msg="mcp call" method=tools/call name=echo transport=streamable-http result=complete toolError=false
	// level=INFO msg="mcp call" method=tools/call name=missing transport=streamable-http code=-32602
}

// A custom method of an extension, declared in server/discover.
func ExampleServer_AddMethod() {
	s := mcp.NewServer(nil)
	s.AddMethod("example/hello", func(ctx context.Context, req *mcp.MethodRequest) (any, error) {
		return map[string]string{"greeting": "hello, " + req.Info.ClientInfo.Name}, nil
	}, &mcp.MethodOptions{Extension: "io.example/hello"})
	fmt.Println(exampleRPC(s, "example/hello", `{}`, `"io.modelcontextprotocol/clientInfo":{"name":"docs","version":"1"}`))
	fmt.Println(exampleRPC(s, "server/discover", `{}`, ""))
	// Output:
	// {"id":1,"result":{"greeting":"hello, docs","resultType":"complete"}}
	// {"id":1,"result":{"cacheScope":"public","capabilities":{"extensions":{"io.example/hello":{}}},"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"ttlMs":3600000}}
}

// An interceptor that counts tool calls by name for a metric: a name the
// server did not register is the client's to choose, without bound, so it
// is counted as "_OTHER" rather than given a series of its own.
func ExampleCall_Registered() {
	var mu sync.Mutex
	counts := map[string]int{}
	count := func(ctx context.Context, c *mcp.Call, next mcp.CallHandler) mcp.Outcome {
		if c.Method == "tools/call" {
			label := "_OTHER"
			if c.Registered() {
				label = c.Name
			}
			mu.Lock()
			counts[label]++
			mu.Unlock()
		}
		return next(ctx, c)
	}
	s := mcp.NewServer(&mcp.ServerOptions{Interceptors: []mcp.Interceptor{count}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "ok", nil })
	for _, name := range []string{"echo", "made-up-1", "made-up-2", "echo"} {
		exampleRPC(s, "tools/call", `{"name":"`+name+`","arguments":{}}`, "")
	}
	fmt.Println(counts)
	// Output:
	// map[_OTHER:2 echo:2]
}
