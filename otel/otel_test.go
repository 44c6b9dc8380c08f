package otel_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
	mcpotel "github.com/mcpkit/mcpkit/otel"
)

const (
	traceID      = "0af7651916cd43dd8448eb211c80319c"
	parentSpanID = "b7ad6b7169203331"
	traceparent  = "00-" + traceID + "-" + parentSpanID + "-01"
)

// harness is a server with the otel interceptor on an in-memory span
// recorder and a manual metric reader, and a "lookup" tool that starts a
// child span of its own from its ctx.
type harness struct {
	s       *mcp.Server
	spans   *tracetest.SpanRecorder
	metrics *sdkmetric.ManualReader
}

func newHarness(t *testing.T) *harness { return newHarnessWith(t, mcp.ServerOptions{}) }

// newHarnessWith is newHarness on a server with the options o (whose
// Interceptors it sets).
func newHarnessWith(t *testing.T, o mcp.ServerOptions) *harness {
	h := &harness{spans: tracetest.NewSpanRecorder(), metrics: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.metrics))
	t.Cleanup(func() { tp.Shutdown(context.Background()); mp.Shutdown(context.Background()) })
	o.Interceptors = []mcp.Interceptor{mcpotel.ServerInterceptor(&mcpotel.Options{TracerProvider: tp, MeterProvider: mp})}
	h.s = mcp.NewServer(&o)
	app := tp.Tracer("app")
	mcp.AddTool(h.s, &mcp.Tool{Name: "lookup", Description: "Looks up."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		_, span := app.Start(ctx, "db query")
		span.End()
		return "found", nil
	})
	return h
}

// spanView is what the tests assert of a span.
type spanView struct {
	Name     string
	Kind     trace.SpanKind
	TraceID  string
	ParentID string
	Attrs    map[string]string
	Status   codes.Code
}

func view(s sdktrace.ReadOnlySpan) spanView {
	v := spanView{Name: s.Name(), Kind: s.SpanKind(), TraceID: s.SpanContext().TraceID().String(),
		ParentID: s.Parent().SpanID().String(), Attrs: map[string]string{}, Status: s.Status().Code}
	for _, a := range s.Attributes() {
		v.Attrs[string(a.Key)] = a.Value.String()
	}
	return v
}

// checkToolCallTree checks the two spans of a lookup call: the SERVER
// span, child of the caller's span, and the application's span under it.
// Spans that ended before skip (a handshake's) are not part of the tree.
func checkToolCallTree(t *testing.T, h *harness, skip int, wantAttrs map[string]string) {
	t.Helper()
	ended := h.spans.Ended()
	if len(ended) != skip+2 {
		t.Fatalf("got %d spans, want %d", len(ended), skip+2)
	}
	app, srv := ended[skip], ended[skip+1]
	want := spanView{Name: "tools/call lookup", Kind: trace.SpanKindServer, TraceID: traceID, ParentID: parentSpanID, Attrs: wantAttrs}
	if diff := cmp.Diff(want, view(srv)); diff != "" {
		t.Errorf("server span (-want +got):\n%s", diff)
	}
	if got := view(app); got.TraceID != traceID || got.ParentID != srv.SpanContext().SpanID().String() {
		t.Errorf("application span: trace %s parent %s, want trace %s parent %s (the server span)", got.TraceID, got.ParentID, traceID, srv.SpanContext().SpanID())
	}
}

// lookupCall is a tools/call of lookup with the given id and extra _meta
// members, in the modern era or (legacy) in a session.
func lookupCall(id int, legacy bool, session, meta string) mcpwire.Request {
	return mcpwire.Request{ID: strconv.Itoa(id), Legacy: legacy, Session: session, Method: "tools/call", Params: `{"name":"lookup","arguments":{}}`, Meta: meta}
}

// traceMeta is the trace context a caller sends in _meta.
const traceMeta = `"traceparent":"` + traceparent + `","baggage":"k=v"`

// postFrom posts r to url on a connection of its own, with the extra
// header values, and returns the connection's local (the client's) port.
func postFrom(t *testing.T, url string, r mcpwire.Request, header http.Header) string {
	t.Helper()
	var local net.Addr
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			local = c.LocalAddr()
		}
		return c, err
	}}
	defer tr.CloseIdleConnections()
	req, err := r.NewRequest(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mcpwire.Read(resp); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d", r.Method, resp.StatusCode)
	}
	_, port, err := net.SplitHostPort(local.String())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func TestSpanTreeHTTP(t *testing.T) {
	h := newHarness(t)
	srv := httptest.NewServer(h.s)
	defer srv.Close()
	clientPort := postFrom(t, srv.URL, lookupCall(9, false, "", traceMeta), nil)
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	checkToolCallTree(t, h, 0, map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "lookup", "gen_ai.operation.name": "execute_tool",
		"mcp.protocol.version": "2026-07-28", "jsonrpc.request.id": "9", "network.transport": "tcp",
		"network.protocol.name": "http", "server.address": host, "server.port": port,
		"client.address": "127.0.0.1", "client.port": clientPort,
		"network.peer.address": "127.0.0.1", "network.peer.port": clientPort,
	})
	checkOperationMetric(t, h, map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "lookup", "gen_ai.operation.name": "execute_tool",
		"mcp.protocol.version": "2026-07-28", "network.transport": "tcp", "network.protocol.name": "http",
	})
}

// TestClientAddressForwarded checks the client address of a server span
// behind a proxy: X-Forwarded-For names the client when the peer is one of
// QuotaOptions.TrustedProxies (client.address is the forwarded address,
// without a port, and network.peer.* the proxy), and is ignored otherwise.
func TestClientAddressForwarded(t *testing.T) {
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	elsewhere := []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}
	for _, tt := range []struct {
		name     string
		trusted  []netip.Prefix
		xff      []string
		forwards bool // client.address is 203.0.113.7, without client.port
	}{
		{"trusted proxy", loopback, []string{"203.0.113.7"}, true},
		{"trusted proxy chain", loopback, []string{"198.51.100.1, 203.0.113.7, 127.0.0.2"}, true},
		{"untrusted peer", nil, []string{"203.0.113.7"}, false},
		{"other proxies trusted", elsewhere, []string{"203.0.113.7"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarnessWith(t, mcp.ServerOptions{Quotas: mcp.QuotaOptions{TrustedProxies: tt.trusted}})
			srv := httptest.NewServer(h.s)
			defer srv.Close()
			clientPort := postFrom(t, srv.URL, lookupCall(5, false, "", traceMeta), http.Header{"X-Forwarded-For": tt.xff})
			host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
			want := map[string]string{
				"mcp.method.name": "tools/call", "gen_ai.tool.name": "lookup", "gen_ai.operation.name": "execute_tool",
				"mcp.protocol.version": "2026-07-28", "jsonrpc.request.id": "5", "network.transport": "tcp",
				"network.protocol.name": "http", "server.address": host, "server.port": port,
				"network.peer.address": "127.0.0.1", "network.peer.port": clientPort,
				"client.address": "127.0.0.1", "client.port": clientPort,
			}
			if tt.forwards {
				want["client.address"] = "203.0.113.7"
				delete(want, "client.port")
			}
			checkToolCallTree(t, h, 0, want)
		})
	}
}

func TestSpanTreeStdio(t *testing.T) {
	h := newHarness(t)
	var out strings.Builder
	if err := h.s.ServeStdio(context.Background(), bytes.NewReader(append(lookupCall(4, false, "", traceMeta).Bytes(), '\n')), &out); err != nil {
		t.Fatal(err)
	}
	checkToolCallTree(t, h, 0, map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "lookup", "gen_ai.operation.name": "execute_tool",
		"mcp.protocol.version": "2026-07-28", "jsonrpc.request.id": "4", "network.transport": "pipe",
	})
}

// TestSpanTreeLegacySession runs a 2025-11-25 session over Streamable HTTP:
// initialize, then a tools/call with the trace context in _meta; the
// span carries mcp.session.id, and the session's end records
// mcp.server.session.duration.
func TestSpanTreeLegacySession(t *testing.T) {
	recorded := make(chan struct{}, 1)
	mcpotel.SetSessionRecorded(func() { recorded <- struct{}{} })
	defer mcpotel.SetSessionRecorded(nil)
	h := newHarness(t)
	srv := httptest.NewServer(h.s)
	defer srv.Close()
	resp := mcpwire.Post(t, context.Background(), srv.URL, mcpwire.Initialize("", ""))
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session id")
	}
	mcpwire.Post(t, context.Background(), srv.URL, mcpwire.Request{Legacy: true, Session: sid, Notification: true, Method: "notifications/initialized"})
	skip := len(h.spans.Ended())
	clientPort := postFrom(t, srv.URL, lookupCall(2, true, sid, `"traceparent":"`+traceparent+`"`), nil)
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	checkToolCallTree(t, h, skip, map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "lookup", "gen_ai.operation.name": "execute_tool",
		"mcp.protocol.version": "2025-11-25", "mcp.session.id": sid, "jsonrpc.request.id": "2",
		"network.transport": "tcp", "network.protocol.name": "http", "server.address": host, "server.port": port,
		"client.address": "127.0.0.1", "client.port": clientPort,
		"network.peer.address": "127.0.0.1", "network.peer.port": clientPort,
	})
	// End the session: DELETE.
	mcpwire.Post(t, context.Background(), srv.URL, mcpwire.Request{Legacy: true, Session: sid, HTTPMethod: http.MethodDelete})
	// The duration is recorded by a goroutine when the session ends.
	select {
	case <-recorded:
	case <-time.After(10 * time.Second):
		t.Fatal("mcp.server.session.duration not recorded after the session ended")
	}
	want := map[string]string{"mcp.protocol.version": "2025-11-25", "network.transport": "tcp", "network.protocol.name": "http"}
	if diff := cmp.Diff(want, findMetric(t, h, "mcp.server.session.duration")); diff != "" {
		t.Errorf("session duration attributes (-want +got):\n%s", diff)
	}
}

// findMetric collects the metrics and returns the attributes of the one
// histogram point of the named metric (nil when there is none).
func findMetric(t *testing.T, h *harness, name string) map[string]string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.metrics.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			hist, ok := m.Data.(metricdata.Histogram[float64])
			if !ok || len(hist.DataPoints) != 1 {
				t.Fatalf("%s: %T with %d points, want one float64 histogram point", name, m.Data, len(hist.DataPoints))
			}
			if m.Unit != "s" {
				t.Errorf("%s: unit %q, want s", name, m.Unit)
			}
			return attrMap(hist.DataPoints[0].Attributes.ToSlice())
		}
	}
	return nil
}

func attrMap(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, a := range kvs {
		m[string(a.Key)] = a.Value.String()
	}
	return m
}

// checkOperationMetric checks the one mcp.server.operation.duration point.
func checkOperationMetric(t *testing.T, h *harness, want map[string]string) {
	t.Helper()
	if diff := cmp.Diff(want, findMetric(t, h, "mcp.server.operation.duration")); diff != "" {
		t.Errorf("operation duration attributes (-want +got):\n%s", diff)
	}
}

// TestSessionDurationStdio checks that a legacy stdio session (initialize,
// then the end of input) records mcp.server.session.duration.
func TestSessionDurationStdio(t *testing.T) {
	recorded := make(chan struct{}, 1)
	mcpotel.SetSessionRecorded(func() { recorded <- struct{}{} })
	defer mcpotel.SetSessionRecorded(nil)
	h := newHarness(t)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n"
	if err := h.s.ServeStdio(context.Background(), strings.NewReader(in), new(strings.Builder)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-recorded:
	case <-time.After(10 * time.Second):
		t.Fatal("mcp.server.session.duration not recorded at the end of input")
	}
	want := map[string]string{"mcp.protocol.version": "2025-06-18", "network.transport": "pipe"}
	if diff := cmp.Diff(want, findMetric(t, h, "mcp.server.session.duration")); diff != "" {
		t.Errorf("session duration attributes (-want +got):\n%s", diff)
	}
	if sp := h.spans.Ended(); len(sp) != 1 || sp[0].Name() != "initialize" {
		t.Errorf("spans %v, want one initialize span", sp)
	}
}
