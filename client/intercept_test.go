package client_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestClientInterceptors checks the client's interceptors: their order,
// the _meta members they add reaching the server (RequestInfo.Meta), the
// outcome they see, and an answer of their own.
func TestClientInterceptors(t *testing.T) {
	var serverSaw string
	s := mcp.NewServer(nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		serverSaw = req.Info.Meta.String("traceparent")
		return "ok", nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return "", errors.New("no")
	})
	var mu sync.Mutex
	var log []string
	add := func(s string) { mu.Lock(); log = append(log, s); mu.Unlock() }
	outer := func(ctx context.Context, c *client.Call, next client.CallHandler) client.Outcome {
		c.Meta["traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		add("outer " + c.Method + " " + c.Name)
		o := next(ctx, c)
		switch {
		case o.Err != nil:
			add("outer error " + errors.Unwrap(o.Err).Error())
		case o.ToolError:
			add("outer tool error")
		default:
			add("outer " + o.ResultType)
		}
		return o
	}
	inner := func(ctx context.Context, c *client.Call, next client.CallHandler) client.Outcome {
		if c.Name == "refused" {
			return client.Outcome{Err: &mcp.Error{Code: jsonrpc.CodeInvalidRequest, Message: "refused here", Err: errors.New("refused here")}}
		}
		add("inner transport=" + string(c.Transport))
		return next(ctx, c)
	}
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, &client.Options{Interceptors: []client.Interceptor{outer, inner}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(context.Background(), "echo", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	c.CallTool(context.Background(), "fail", map[string]any{})
	_, err = c.CallTool(context.Background(), "refused", map[string]any{})
	var e *mcp.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("refused call: %v", err)
	}
	want := []string{
		"outer tools/call echo", "inner transport=", "outer complete",
		"outer tools/call fail", "inner transport=", "outer tool error",
		"outer tools/call refused", "outer error refused here",
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("interceptor log (-want +got):\n%s", diff)
	}
	if serverSaw != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" {
		t.Errorf("the server saw traceparent %q", serverSaw)
	}
}

// A handler of an in-process server that calls on with a client of its
// own (a bridge, a gateway) has its calls go through that client's
// interceptors, though its context comes from the caller's intercepted
// call; and a call through Client.Call, whose params pass through as JSON,
// names its tool to the interceptors.
func TestClientInterceptorsNested(t *testing.T) {
	var mu sync.Mutex
	var log []string
	record := func(who string) client.Interceptor {
		return func(ctx context.Context, c *client.Call, next client.CallHandler) client.Outcome {
			mu.Lock()
			log = append(log, who+" "+c.Method+" "+c.Name)
			mu.Unlock()
			return next(ctx, c)
		}
	}
	back := mcp.NewServer(nil)
	mcp.AddTool(back, &mcp.Tool{Name: "leaf", Description: "Answers."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return "ok", nil
	})
	inner, err := client.Connect(context.Background(), &client.MemoryTransport{Server: back}, &client.Options{Interceptors: []client.Interceptor{record("inner")}})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	front := mcp.NewServer(nil)
	mcp.AddTool(front, &mcp.Tool{Name: "relay", Description: "Calls the backend."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		_, err := inner.Call(ctx, "tools/call", map[string]any{"name": "leaf"})
		return "relayed", err
	})
	outer, err := client.Connect(context.Background(), &client.MemoryTransport{Server: front}, &client.Options{Interceptors: []client.Interceptor{record("outer")}})
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Close()
	mu.Lock()
	log = nil
	mu.Unlock()
	if _, err := outer.CallTool(context.Background(), "relay", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"outer tools/call relay", "inner tools/call leaf"}, log); diff != "" {
		t.Errorf("interceptor log (-want +got):\n%s", diff)
	}
}
