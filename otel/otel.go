// Package otel traces and measures MCP servers built with
// github.com/mcpkit/mcpkit/mcp by the OpenTelemetry semantic conventions
// for MCP: a SERVER span per request, named "{mcp.method.name} {target}"
// (the tool or prompt name, when the server registered it), with mcp.method.name, mcp.protocol.version,
// mcp.session.id (legacy sessions), mcp.resource.uri, jsonrpc.request.id,
// gen_ai.tool.name, gen_ai.prompt.name, gen_ai.operation.name,
// error.type, rpc.response.status_code, network.transport, the server
// address and port, and on Streamable HTTP the client's address and port
// (client.address, behind the proxies in mcp.QuotaOptions.TrustedProxies)
// and the TCP peer's (network.peer.address); and the
// mcp.server.operation.duration and mcp.server.session.duration
// histograms.
//
// The span joins the caller's trace: its parent is the W3C trace context
// (traceparent, tracestate) and baggage that the request carries in
// params._meta, as revision 2026-07-28 reserves them, and otherwise the
// span in the request's context (from an HTTP middleware, say). The span's
// context is the handler's ctx, so the application's own spans nest under
// it.
//
// What the client chose is bounded (docs/security.md): a name, request or
// session id at most 256 bytes in an attribute, a resource URI 1 KiB, a
// span status description 1 KiB; metric labels carry a tool or prompt name
// only when the server registered it (mcp.Call.Registered), and "_OTHER"
// otherwise, so that made-up names cannot fill the metrics SDK's
// cardinality limit.
//
// It lives in its own module so that the core keeps no OpenTelemetry
// dependency. It uses the OpenTelemetry Go API; the application chooses
// the SDK and exporters (or sets the global providers).
package otel

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/internal/clip"
	"github.com/mcpkit/mcpkit/mcp"
)

// ScopeName is the instrumentation scope of the tracer and meter.
const ScopeName = "github.com/mcpkit/mcpkit/otel"

// Options configures the interceptors. The zero value uses the global
// providers and the W3C propagators.
type Options struct {
	// TracerProvider makes the tracer. Default: the global one
	// (go.opentelemetry.io/otel.GetTracerProvider).
	TracerProvider trace.TracerProvider
	// MeterProvider makes the meter. Default: the global one.
	MeterProvider metric.MeterProvider
	// Propagator reads (server) and writes (client) the trace context in
	// _meta. Default: W3C Trace Context and Baggage, which is what the
	// MCP specification names.
	Propagator propagation.TextMapPropagator
}

func (o *Options) defaults() Options {
	var d Options
	if o != nil {
		d = *o
	}
	if d.TracerProvider == nil {
		d.TracerProvider = gotel.GetTracerProvider()
	}
	if d.MeterProvider == nil {
		d.MeterProvider = gotel.GetMeterProvider()
	}
	if d.Propagator == nil {
		d.Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	return d
}

// metaCarrier reads a request's _meta as a TextMapCarrier.
type metaCarrier mcp.RequestMeta

func (c metaCarrier) Get(key string) string { return mcp.RequestMeta(c).String(key) }
func (c metaCarrier) Set(string, string)    {} // read-only: a request's _meta
func (c metaCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// server holds the instruments of ServerInterceptor.
type server struct {
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	op       mcpconv.ServerOperationDuration
	sessions mcpconv.ServerSessionDuration
}

// ServerInterceptor returns an interceptor (for mcp.ServerOptions.Interceptors)
// that traces and measures every call by the MCP semantic conventions.
// opts may be nil. Put it first, so that the spans cover the other
// interceptors too.
//
// Requests are SERVER spans. The background run of a task is an INTERNAL
// span (attribute mcpkit.task.id) parented on the trace context of the
// tools/call that created it, and a request the server sends a legacy
// client (elicitation, sampling, roots) is a CLIENT span nested in the
// call that asked. Legacy sessions are measured from initialize to their
// end.
func ServerInterceptor(opts *Options) mcp.Interceptor {
	o := opts.defaults()
	meter := o.MeterProvider.Meter(ScopeName)
	s := &server{tracer: o.TracerProvider.Tracer(ScopeName), prop: o.Propagator}
	var err error
	if s.op, err = mcpconv.NewServerOperationDuration(meter); err != nil {
		gotel.Handle(err)
	}
	if s.sessions, err = mcpconv.NewServerSessionDuration(meter); err != nil {
		gotel.Handle(err)
	}
	return s.intercept
}

// The bounds of attribute values a peer chooses (docs/security.md): a name,
// a request or session id at most maxNameBytes, a resource URI at most
// maxURIBytes, and a span status description (an error message, which
// may quote what the client sent) at most maxStatusBytes. Longer values
// are cut at a rune boundary and end with "…". Metric labels never carry
// a client's string: see nameLabel.
const (
	maxNameBytes   = 256
	maxURIBytes    = 1024
	maxStatusBytes = 1024
)

// otherName is the metric label of a tool or prompt name the server does
// not know: the semantic conventions' value for a label whose values are
// not bounded.
const otherName = "_OTHER"

// target returns the span name's target of c: the tool or prompt name
// when the server registered it, and "" otherwise, so that span names stay
// of low cardinality whatever a client sends.
func target(c *mcp.Call) string {
	switch c.Method {
	case "tools/call", "prompts/get":
		if c.Registered() {
			return c.Name
		}
	}
	return ""
}

// nameLabel is the metric label of c's tool or prompt name: the name when
// the server registered it, and otherName for any other.
func nameLabel(c *mcp.Call) string {
	if c.Registered() {
		return c.Name
	}
	return otherName
}

// callAttrs returns the attributes of c that spans and metrics share, the
// span-only ones, and the metric-only ones.
func callAttrs(ctx context.Context, c *mcp.Call) (shared, spanOnly, metricOnly []attribute.KeyValue) {
	shared = append(shared, semconv.McpMethodNameKey.String(c.Method))
	switch c.Method {
	case "tools/call":
		shared = append(shared, semconv.GenAIOperationNameExecuteTool)
		spanOnly = append(spanOnly, semconv.GenAIToolName(clip.String(c.Name, maxNameBytes)))
		metricOnly = append(metricOnly, semconv.GenAIToolName(nameLabel(c)))
	case "prompts/get":
		spanOnly = append(spanOnly, semconv.GenAIPromptName(clip.String(c.Name, maxNameBytes)))
		metricOnly = append(metricOnly, semconv.GenAIPromptName(nameLabel(c)))
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		spanOnly = append(spanOnly, semconv.McpResourceURI(clip.String(c.Name, maxURIBytes)))
	}
	if v := c.Info.ProtocolVersion; v != "" {
		shared = append(shared, semconv.McpProtocolVersion(clip.String(v, maxNameBytes)))
	}
	switch c.Transport {
	case mcp.TransportStreamableHTTP:
		shared = append(shared, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
		if addr, ok := ctx.Value(http.LocalAddrContextKey).(net.Addr); ok {
			if host, port, err := net.SplitHostPort(addr.String()); err == nil {
				spanOnly = append(spanOnly, semconv.ServerAddress(host))
				if p, err := strconv.Atoi(port); err == nil {
					spanOnly = append(spanOnly, semconv.ServerPort(p))
				}
			}
		}
		spanOnly = peerAttrs(spanOnly, c)
	case mcp.TransportStdio:
		shared = append(shared, semconv.NetworkTransportPipe)
	}
	if c.SessionID != "" {
		spanOnly = append(spanOnly, semconv.McpSessionID(clip.String(c.SessionID, maxNameBytes)))
	}
	if c.ID.IsValid() {
		spanOnly = append(spanOnly, semconv.JSONRPCRequestID(clip.String(idString(c), maxNameBytes)))
	}
	return shared, spanOnly, metricOnly
}

// peerAttrs appends the attributes of a server span over HTTP that say
// who called: network.peer.address and network.peer.port (the TCP peer,
// which may be a proxy), and client.address and client.port (the client
// behind the proxies the server trusts, mcp.Call.ClientAddr). A forwarded
// client address comes without a port: client.port is then left out.
func peerAttrs(attrs []attribute.KeyValue, c *mcp.Call) []attribute.KeyValue {
	if c.Phase != mcp.PhaseRequest {
		return attrs
	}
	peer := c.PeerAddr()
	if peer == "" {
		return attrs
	}
	host, port, err := net.SplitHostPort(peer)
	if err != nil {
		return attrs
	}
	p, perr := strconv.Atoi(port)
	attrs = append(attrs, semconv.NetworkPeerAddress(host))
	if perr == nil {
		attrs = append(attrs, semconv.NetworkPeerPort(p))
	}
	addr, forwarded := c.ClientAddr()
	client := host // not an IP address: named as the peer names it
	if addr.IsValid() {
		client = addr.String()
	}
	attrs = append(attrs, semconv.ClientAddress(client))
	if !forwarded && perr == nil {
		attrs = append(attrs, semconv.ClientPort(p))
	}
	return attrs
}

// idString is the request id as the conventions record it: a string id
// unquoted, a number as it is.
func idString(c *mcp.Call) string {
	raw := c.ID.Raw()
	if len(raw) > 0 && raw[0] == '"' {
		if s, err := strconv.Unquote(string(raw)); err == nil {
			return s
		}
	}
	return string(raw)
}

// notedAttrs returns the attributes the call's handler attached with
// mcp.Annotate (mcp.backend, for a call a gateway routed), for the span
// and the metrics: the server's own facts, so of bounded cardinality;
// their values are cut to maxNameBytes all the same.
func notedAttrs(c *mcp.Call) []attribute.KeyValue {
	as := c.Attributes()
	if len(as) == 0 {
		return nil
	}
	out := make([]attribute.KeyValue, len(as))
	for i, a := range as {
		out[i] = attribute.String(a.Key, clip.String(a.Value, maxNameBytes))
	}
	return out
}

// outcomeAttrs returns the error attributes of an outcome, and the span
// status description ("" on success).
func outcomeAttrs(o mcp.Outcome) ([]attribute.KeyValue, string) {
	switch {
	case o.Err != nil:
		code := strconv.Itoa(int(o.Err.Code))
		return []attribute.KeyValue{semconv.ErrorTypeKey.String(code), semconv.RPCResponseStatusCode(code)}, clip.String(o.Err.Message, maxStatusBytes)
	case o.ToolError:
		return []attribute.KeyValue{semconv.ErrorTypeKey.String("tool_error")}, "tool_error"
	}
	return nil, ""
}

func (s *server) intercept(ctx context.Context, c *mcp.Call, next mcp.CallHandler) mcp.Outcome {
	start := time.Now()
	kind := trace.SpanKindServer
	switch c.Phase {
	case mcp.PhaseTaskRun:
		kind = trace.SpanKindInternal
	case mcp.PhaseClientRequest:
		kind = trace.SpanKindClient
	}
	if kind != trace.SpanKindClient && c.Info.Meta != nil {
		ctx = s.prop.Extract(ctx, metaCarrier(c.Info.Meta))
	}
	shared, spanOnly, metricOnly := callAttrs(ctx, c)
	if c.Phase == mcp.PhaseTaskRun {
		spanOnly = append(spanOnly, attribute.String("mcpkit.task.id", clip.String(c.TaskID, maxNameBytes)))
	}
	name := c.Method
	if t := target(c); t != "" {
		name += " " + t
	}
	ctx, span := s.tracer.Start(ctx, name, trace.WithSpanKind(kind),
		trace.WithAttributes(shared...), trace.WithAttributes(spanOnly...))
	o := next(ctx, c)
	errAttrs, desc := outcomeAttrs(o)
	noted := notedAttrs(c)
	span.SetAttributes(noted...)
	if desc != "" {
		span.SetAttributes(errAttrs...)
		span.SetStatus(codes.Error, desc)
	}
	span.End()
	if c.Phase == mcp.PhaseRequest {
		attrs := append(append(append(shared[1:len(shared):len(shared)], metricOnly...), errAttrs...), noted...)
		s.op.Record(ctx, time.Since(start).Seconds(), mcpconv.MethodNameAttr(c.Method), attrs...)
	}
	if c.Method == "initialize" && o.Err == nil {
		s.watchSession(c, start)
	}
	return o
}

// watchSession records mcp.server.session.duration when the legacy
// session that c initialized ends.
func (s *server) watchSession(c *mcp.Call, start time.Time) {
	done := c.SessionDone()
	if done == nil {
		return
	}
	var attrs []attribute.KeyValue
	if v := c.Info.ProtocolVersion; v != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(v))
	}
	switch c.Transport {
	case mcp.TransportStreamableHTTP:
		attrs = append(attrs, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
	case mcp.TransportStdio:
		attrs = append(attrs, semconv.NetworkTransportPipe)
	}
	go func() {
		<-done
		s.sessions.Record(context.Background(), time.Since(start).Seconds(), attrs...)
		if f := sessionRecorded; f != nil {
			f()
		}
	}()
}

// sessionRecorded, when set (by tests), is called after a session's
// duration is recorded.
var sessionRecorded func()
