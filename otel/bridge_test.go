package otel_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	mcpotel "github.com/mcpkit/mcpkit/otel"
)

// A call through a bridge is one trace across the hops: the caller's
// CLIENT span, the front's SERVER span, the bridge's CLIENT span for the
// backend hop, and the backend request's _meta carries that trace (the
// backend is a recorder: a legacy session's span interceptor would
// outlive the test). Both for a call on a shared backend session and for
// one that leases a session (the caller declared sampling), whose backend
// call may outlive the front request.
func TestBridgeSpanPerHop(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name   string
		sample bool
	}{{"shared", false}, {"leased", true}} {
		t.Run(tc.name, func(t *testing.T) {
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
			b, err := bridge.New(context.Background(), &bridge.Options{
				Backend:      func() client.Transport { return &client.MemoryTransport{Server: be} },
				Eras:         client.LegacyOnly,
				Interceptors: []client.Interceptor{mcpotel.ClientInterceptor(o)},
				Logger:       quiet,
				Server:       mcp.ServerOptions{Logger: quiet, Interceptors: []mcp.Interceptor{mcpotel.ServerInterceptor(o)}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			co := &client.Options{NoCache: true, Interceptors: []client.Interceptor{mcpotel.ClientInterceptor(o)}}
			if tc.sample {
				co.Sample = func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					return nil, mcp.InvalidParams("not here")
				}
			}
			c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: b.Server()}, co)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.CallTool(context.Background(), "echo", nil); err != nil {
				t.Fatal(err)
			}
			// The front's span is "tools/call": the bridge registers no
			// tools, and span names stay of low cardinality.
			var caller, front, hop sdktrace.ReadOnlySpan
			for _, sp := range spans.Ended() {
				switch {
				case sp.Name() == "tools/call" && sp.SpanKind() == trace.SpanKindServer:
					front = sp
				case sp.Name() != "tools/call echo" || sp.SpanKind() != trace.SpanKindClient:
				case !sp.Parent().IsValid():
					caller = sp
				default:
					hop = sp
				}
			}
			if caller == nil || front == nil || hop == nil {
				t.Fatalf("spans: caller %v, front %v, backend hop %v; want all three", caller != nil, front != nil, hop != nil)
			}
			tid := caller.SpanContext().TraceID()
			for name, sp := range map[string]sdktrace.ReadOnlySpan{"front": front, "backend hop": hop} {
				if sp.SpanContext().TraceID() != tid {
					t.Errorf("%s span in trace %s, want the caller's %s", name, sp.SpanContext().TraceID(), tid)
				}
			}
			if front.Parent().SpanID() != caller.SpanContext().SpanID() {
				t.Errorf("front span's parent %s, want the caller's span", front.Parent().SpanID())
			}
			if hop.Parent().SpanID() != front.SpanContext().SpanID() {
				t.Errorf("backend hop's parent %s, want the front's span %s", hop.Parent().SpanID(), front.SpanContext().SpanID())
			}
			meta := <-metas
			var parent string
			json.Unmarshal(meta["traceparent"], &parent)
			want := "00-" + tid.String() + "-" + hop.SpanContext().SpanID().String() + "-01"
			if parent != want {
				t.Errorf("the backend request's _meta.traceparent = %q, want %q", parent, want)
			}
		})
	}
}
