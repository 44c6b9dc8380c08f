package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcpkit/mcpkit/internal/cli"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

const (
	traceID      = "0af7651916cd43dd8448eb211c80319c"
	parentSpanID = "b7ad6b7169203331"
)

// echoCall is a tools/call line for the demo's echo tool that carries a
// W3C traceparent in _meta.
var echoCall = string(mcpwire.Request{Method: "tools/call", Params: `{"name":"echo","arguments":{"text":"hi"}}`,
	Meta: `"traceparent":"00-` + traceID + `-` + parentSpanID + `-01"`}.Bytes()) + "\n"

// runServe runs `mcpkit serve --stdio` of this build with stdin and
// returns stdout and stderr.
func runServe(t *testing.T, stdin io.Reader) (string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	code := cli.Run([]string{"serve", "--stdio"}, stdin, &stdout, &stderr, &cli.Options{Redis: dialRedis, Telemetry: setupTelemetry})
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// otlpReceiver is a local OTLP/HTTP receiver that decodes what it gets.
type otlpReceiver struct {
	mu      sync.Mutex
	traces  []*colltrace.ExportTraceServiceRequest
	metrics []*collmetrics.ExportMetricsServiceRequest
}

func (rc *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "content type "+ct, http.StatusUnsupportedMediaType)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch r.URL.Path {
	case "/v1/traces":
		var req colltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.traces = append(rc.traces, &req)
		b, _ := proto.Marshal(&colltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	case "/v1/metrics":
		var req collmetrics.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.metrics = append(rc.metrics, &req)
		b, _ := proto.Marshal(&collmetrics.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	default:
		http.NotFound(w, r)
	}
}

// TestOTLPExport serves a tools/call carrying a traceparent with
// OTEL_TRACES_EXPORTER=otlp and OTEL_METRICS_EXPORTER=otlp, against a local
// receiver: at exit the server span (trace kept, parent honoured, named
// and attributed by the conventions) and the operation histogram arrive
// as OTLP protobuf.
func TestOTLPExport(t *testing.T) {
	rc := &otlpReceiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_METRICS_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "otlp-test")
	stdout, _ := runServe(t, strings.NewReader(echoCall))
	if !strings.Contains(stdout, `"text":"hi"`) {
		t.Fatalf("stdout %s", stdout)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var found bool
	for _, req := range rc.traces {
		for _, rs := range req.ResourceSpans {
			service := ""
			for _, a := range rs.Resource.GetAttributes() {
				if a.Key == "service.name" {
					service = a.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					if sp.Name != "tools/call echo" {
						continue
					}
					found = true
					if got := hex.EncodeToString(sp.TraceId); got != traceID {
						t.Errorf("trace id %s, want %s", got, traceID)
					}
					if got := hex.EncodeToString(sp.ParentSpanId); got != parentSpanID {
						t.Errorf("parent span id %s, want %s", got, parentSpanID)
					}
					if sp.Kind.String() != "SPAN_KIND_SERVER" {
						t.Errorf("kind %s", sp.Kind)
					}
					attrs := map[string]string{}
					for _, a := range sp.Attributes {
						attrs[a.Key] = a.Value.GetStringValue()
					}
					for k, v := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "network.transport": "pipe", "jsonrpc.request.id": "1"} {
						if attrs[k] != v {
							t.Errorf("attribute %s = %q, want %q", k, attrs[k], v)
						}
					}
					if service != "otlp-test" {
						t.Errorf("service.name %q, want otlp-test", service)
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("no span tools/call echo among %d trace exports", len(rc.traces))
	}
	found = false
	for _, req := range rc.metrics {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name == "mcp.server.operation.duration" && m.Unit == "s" && len(m.GetHistogram().GetDataPoints()) > 0 {
						found = true
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("no mcp.server.operation.duration histogram among %d metric exports", len(rc.metrics))
	}
}

// TestConsoleExporterUsesStderr checks that OTEL_TRACES_EXPORTER=console
// prints the span to stderr and leaves stdout to the protocol.
func TestConsoleExporterUsesStderr(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	stdout, stderr := runServe(t, strings.NewReader(echoCall))
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], `{"jsonrpc":"2.0","id":1,"result"`) {
		t.Errorf("stdout is not the one response:\n%s", stdout)
	}
	if !strings.Contains(stderr, `"Name":"tools/call echo"`) || !strings.Contains(stderr, traceID) {
		t.Errorf("stderr lacks the span:\n%s", stderr)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestPrometheusScrape serves with OTEL_METRICS_EXPORTER=prometheus on a
// free port, makes one call, and scrapes /metrics while the server runs.
func TestPrometheusScrape(t *testing.T) {
	port := freePort(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	t.Setenv("OTEL_METRICS_EXPORTER", "prometheus")
	t.Setenv("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1")
	t.Setenv("OTEL_EXPORTER_PROMETHEUS_PORT", fmt.Sprint(port))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	var stderr strings.Builder
	go func() {
		done <- cli.Run([]string{"serve", "--stdio"}, inR, outW, &stderr, &cli.Options{Telemetry: setupTelemetry})
		outW.Close()
	}()
	io.WriteString(inW, echoCall)
	br := bufio.NewReader(outR)
	if l, err := br.ReadString('\n'); err != nil || !strings.Contains(l, `"text":"hi"`) {
		t.Fatalf("response %q, %v", l, err)
	}
	go io.Copy(io.Discard, br)
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var sample string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "mcp_server_operation_duration_seconds_count{") {
			sample = l
		}
	}
	for _, want := range []string{`mcp_method_name="tools/call"`, `gen_ai_tool_name="echo"`, `network_transport="pipe"`, `} 1`} {
		if !strings.Contains(sample, want) {
			t.Errorf("count sample %q lacks %s; scrape:\n%s", sample, want, body)
		}
	}
}
