package otel_test

import (
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	mcpotel "github.com/mcpkit/mcpkit/otel"
)

// TestClientSpanJoinsServer calls a tool over HTTP from a client with the
// client interceptor to a server with the server one: the application's
// span, then the CLIENT span under it, then the server's SERVER span under
// that (the trace context travelled in _meta), all in one trace.
func TestClientSpanJoinsServer(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	o := &mcpotel.Options{TracerProvider: tp, MeterProvider: mp}
	s := mcp.NewServer(&mcp.ServerOptions{Interceptors: []mcp.Interceptor{mcpotel.ServerInterceptor(o)}})
	mcp.AddTool(s, &mcp.Tool{Name: "lookup", Description: "Looks up."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return "found", nil
	})
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: srv.URL}, &client.Options{Interceptors: []client.Interceptor{mcpotel.ClientInterceptor(o)}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, app := tp.Tracer("app").Start(context.Background(), "agent step")
	if _, err := c.CallTool(ctx, "lookup", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	app.End()
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, sp := range spans.Ended() {
		byName[sp.Name()+" "+sp.SpanKind().String()] = sp
	}
	cl, sv := byName["tools/call lookup client"], byName["tools/call lookup server"]
	if cl == nil || sv == nil {
		t.Fatalf("spans %v, want a client and a server span of tools/call lookup", byName)
	}
	tid := app.SpanContext().TraceID()
	if cl.SpanContext().TraceID() != tid || sv.SpanContext().TraceID() != tid {
		t.Errorf("trace ids: app %s client %s server %s", tid, cl.SpanContext().TraceID(), sv.SpanContext().TraceID())
	}
	if cl.Parent().SpanID() != app.SpanContext().SpanID() {
		t.Errorf("client span's parent %s, want the application's span %s", cl.Parent().SpanID(), app.SpanContext().SpanID())
	}
	if sv.Parent().SpanID() != cl.SpanContext().SpanID() || !sv.Parent().IsRemote() {
		t.Errorf("server span's parent %s (remote %v), want the client span %s", sv.Parent().SpanID(), sv.Parent().IsRemote(), cl.SpanContext().SpanID())
	}
	if cl.SpanKind() != trace.SpanKindClient {
		t.Errorf("client span kind %s", cl.SpanKind())
	}
	got := map[string]string{}
	for _, a := range cl.Attributes() {
		got[string(a.Key)] = a.Value.String()
	}
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	want := map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "lookup", "gen_ai.operation.name": "execute_tool",
		"mcp.protocol.version": "2026-07-28", "network.transport": "tcp", "network.protocol.name": "http",
		"server.address": host, "server.port": port}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("client span attributes (-want +got):\n%s", diff)
	}
	h := &harness{metrics: reader}
	if m := findMetric(t, h, "mcp.client.operation.duration"); m["mcp.method.name"] != "tools/call" || m["server.address"] != host || m["server.port"] != port {
		t.Errorf("mcp.client.operation.duration attributes %v, want mcp.method.name tools/call, server.address %s, server.port %s", m, host, port)
	}
}
