package otel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
	mcpotel "github.com/mcpkit/mcpkit/otel"
)

// A call through a gateway is one trace too: the front's SERVER span
// names the backend (mcp.backend), and the backend hop (the bridge's
// Interceptors, which the gateway's Options.Bridge hands every backend)
// is a CLIENT span under it whose trace the backend request carries.
func TestGatewaySpanPerHop(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	o := &mcpotel.Options{TracerProvider: tp}
	metas := make(chan map[string]json.RawMessage, 4)
	record := func(ctx context.Context, c *mcp.Call, next mcp.CallHandler) mcp.Outcome {
		if c.Method == "tools/call" {
			var p struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			json.Unmarshal(c.Params, &p)
			metas <- p.Meta
		}
		return next(ctx, c)
	}
	be := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "backend"}, Logger: quiet,
		Interceptors: []mcp.Interceptor{record}})
	mcp.AddTool(be, &mcp.Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return "ok", nil
	})
	g, err := gateway.New(context.Background(), []gateway.Backend{
		{Name: "be", Transport: func() client.Transport { return &client.MemoryTransport{Server: be} }},
	}, &gateway.Options{
		Server: mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: [][]byte{bytes.Repeat([]byte{9}, 32)}},
			Interceptors: []mcp.Interceptor{mcpotel.ServerInterceptor(o)}},
		Bridge: bridge.Options{Eras: client.LegacyOnly, Interceptors: []client.Interceptor{mcpotel.ClientInterceptor(o)}},
		Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: g.Server()}, &client.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(context.Background(), "be_echo", nil); err != nil {
		t.Fatal(err)
	}
	var front, hop sdktrace.ReadOnlySpan
	for _, sp := range spans.Ended() {
		switch {
		case sp.SpanKind() == trace.SpanKindServer && sp.Name() == "tools/call":
			front = sp
		case sp.SpanKind() == trace.SpanKindClient && sp.Name() == "tools/call echo":
			hop = sp
		}
	}
	if front == nil || hop == nil {
		t.Fatalf("spans: front %v, backend hop %v; want both", front != nil, hop != nil)
	}
	backend := ""
	for _, kv := range front.Attributes() {
		if kv.Key == "mcp.backend" {
			backend = kv.Value.AsString()
		}
	}
	if backend != "be" {
		t.Errorf("the front span's mcp.backend = %q, want be", backend)
	}
	if hop.Parent().SpanID() != front.SpanContext().SpanID() || hop.SpanContext().TraceID() != front.SpanContext().TraceID() {
		t.Errorf("the backend hop is not a child of the front's span")
	}
	var parent string
	json.Unmarshal((<-metas)["traceparent"], &parent)
	if want := "00-" + hop.SpanContext().TraceID().String() + "-" + hop.SpanContext().SpanID().String() + "-01"; parent != want {
		t.Errorf("the backend request's _meta.traceparent = %q, want %q", parent, want)
	}
}
