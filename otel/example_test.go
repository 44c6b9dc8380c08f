package otel_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	mcpotel "github.com/mcpkit/mcpkit/otel"
)

// A server traced and measured by the MCP semantic conventions. Here the
// spans go to an in-memory recorder; a real program exports them, with
// stdouttrace, OTLP or any other exporter.
func ExampleServerInterceptor() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	s := mcp.NewServer(&mcp.ServerOptions{Interceptors: []mcp.Interceptor{
		mcpotel.ServerInterceptor(&mcpotel.Options{TracerProvider: tp}),
	}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "ok", nil })

	// A caller that sends its trace context in _meta, on stdio.
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}` + "\n"
	s.ServeStdio(context.Background(), strings.NewReader(line), new(strings.Builder))
	for _, sp := range spans.Ended() {
		fmt.Println(sp.Name(), sp.SpanKind(), sp.SpanContext().TraceID(), sp.Parent().SpanID())
	}
	// Output:
	// tools/call echo server 0af7651916cd43dd8448eb211c80319c b7ad6b7169203331
}

// The same with exporters that print to stderr: spans as they end, and
// the duration histograms when the meter provider shuts down.
func ExampleServerInterceptor_stdout() {
	texp, _ := stdouttrace.New(stdouttrace.WithWriter(os.Stderr))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(texp))
	mexp, _ := stdoutmetric.New(stdoutmetric.WithWriter(os.Stderr))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp)))
	defer func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	}()
	s := mcp.NewServer(&mcp.ServerOptions{Interceptors: []mcp.Interceptor{
		mcpotel.ServerInterceptor(&mcpotel.Options{TracerProvider: tp, MeterProvider: mp}),
	}})
	_ = s // serve it: s.NewHTTPServer(addr, "/mcp").ListenAndServe(), or s.ServeStdio
}

// A client whose calls are CLIENT spans, with their trace context sent in
// each request's _meta so that the server's spans join the trace.
func ExampleClientInterceptor() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	s := mcp.NewServer(&mcp.ServerOptions{Interceptors: []mcp.Interceptor{
		mcpotel.ServerInterceptor(&mcpotel.Options{TracerProvider: tp}),
	}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "ok", nil })
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, &client.Options{
		Interceptors: []client.Interceptor{mcpotel.ClientInterceptor(&mcpotel.Options{TracerProvider: tp})},
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	c.CallTool(context.Background(), "echo", map[string]any{})
	ended := spans.Ended() // server/discover (Connect), then the call's two spans
	server, cl := ended[len(ended)-2], ended[len(ended)-1]
	fmt.Println(cl.Name(), cl.SpanKind())
	fmt.Println(server.Name(), server.SpanKind(), "child of the client span:", server.Parent().SpanID() == cl.SpanContext().SpanID())
	// Output:
	// tools/call echo client
	// tools/call echo server child of the client span: true
}
