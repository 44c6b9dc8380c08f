package otel

import (
	"context"
	"net/url"
	"strconv"
	"time"

	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/clip"
	"github.com/mcpkit/mcpkit/mcp"
)

// metaInjector writes the trace context into a call's _meta members.
type metaInjector map[string]any

func (m metaInjector) Get(key string) string {
	s, _ := m[key].(string)
	return s
}
func (m metaInjector) Set(key, value string) { m[key] = value }
func (m metaInjector) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

var _ propagation.TextMapCarrier = metaInjector(nil)

// clientSide holds the instruments of ClientInterceptor.
type clientSide struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	op     mcpconv.ClientOperationDuration
}

// ClientInterceptor returns an interceptor (for client.Options.Interceptors)
// that makes a CLIENT span per call, named and attributed by the MCP
// semantic conventions, writes its trace context (traceparent,
// tracestate, baggage) into each request's _meta so that the server's
// span joins the trace, and records mcp.client.operation.duration. opts
// may be nil.
func ClientInterceptor(opts *Options) client.Interceptor {
	o := opts.defaults()
	cs := &clientSide{tracer: o.TracerProvider.Tracer(ScopeName), prop: o.Propagator}
	var err error
	if cs.op, err = mcpconv.NewClientOperationDuration(o.MeterProvider.Meter(ScopeName)); err != nil {
		gotel.Handle(err)
	}
	return cs.intercept
}

func (cs *clientSide) intercept(ctx context.Context, c *client.Call, next client.CallHandler) client.Outcome {
	start := time.Now()
	attrs := []attribute.KeyValue{semconv.McpMethodNameKey.String(c.Method)}
	var spanOnly []attribute.KeyValue
	name := c.Method
	// The names come from the application, often from a server's lists:
	// bounded like the server's (maxNameBytes, maxURIBytes).
	switch c.Method {
	case "tools/call":
		n := clip.String(c.Name, maxNameBytes)
		attrs = append(attrs, semconv.GenAIToolName(n), semconv.GenAIOperationNameExecuteTool)
		name += " " + n
	case "prompts/get":
		n := clip.String(c.Name, maxNameBytes)
		attrs = append(attrs, semconv.GenAIPromptName(n))
		name += " " + n
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		spanOnly = append(spanOnly, semconv.McpResourceURI(clip.String(c.Name, maxURIBytes)))
	}
	if c.ProtocolVersion != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(c.ProtocolVersion))
	}
	switch c.Transport {
	case mcp.TransportStreamableHTTP, mcp.TransportSSE:
		attrs = append(attrs, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
	case mcp.TransportStdio:
		attrs = append(attrs, semconv.NetworkTransportPipe)
	}
	attrs = serverAttrs(attrs, c.ServerURL)
	ctx, span := cs.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrs...), trace.WithAttributes(spanOnly...))
	cs.prop.Inject(ctx, metaInjector(c.Meta))
	out := next(ctx, c)
	var errAttrs []attribute.KeyValue
	switch {
	case out.Err != nil:
		et := "_OTHER"
		if code := out.Code(); code != 0 {
			et = strconv.Itoa(code)
			errAttrs = append(errAttrs, semconv.RPCResponseStatusCode(et))
		}
		errAttrs = append(errAttrs, semconv.ErrorTypeKey.String(et))
		span.SetStatus(codes.Error, clip.String(out.Err.Error(), maxStatusBytes)) // the server's words, of its size
	case out.ToolError:
		errAttrs = append(errAttrs, semconv.ErrorTypeKey.String("tool_error"))
		span.SetStatus(codes.Error, "tool_error")
	}
	span.SetAttributes(errAttrs...)
	span.End()
	cs.op.Record(ctx, time.Since(start).Seconds(), mcpconv.MethodNameAttr(c.Method), append(attrs[1:len(attrs):len(attrs)], errAttrs...)...)
	return out
}

// serverAttrs appends server.address and server.port, the host and port of
// the server's endpoint URL (the scheme's default port when the URL names
// none), for a client on HTTP; on stdio and in memory there is no server
// address.
func serverAttrs(attrs []attribute.KeyValue, endpoint string) []attribute.KeyValue {
	if endpoint == "" {
		return attrs
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Hostname() == "" {
		return attrs
	}
	attrs = append(attrs, semconv.ServerAddress(u.Hostname()))
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		switch u.Scheme {
		case "http":
			port = 80
		case "https":
			port = 443
		default:
			return attrs
		}
	}
	return append(attrs, semconv.ServerPort(port))
}
