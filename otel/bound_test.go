package otel_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// serveStdio serves the requests on stdio, one line each, and returns
// when the server has answered them all.
func serveStdio(t *testing.T, h *harness, reqs ...mcpwire.Request) {
	t.Helper()
	var in bytes.Buffer
	for _, r := range reqs {
		in.Write(r.Bytes())
		in.WriteByte('\n')
	}
	if err := h.s.ServeStdio(context.Background(), &in, new(strings.Builder)); err != nil {
		t.Fatal(err)
	}
}

// TestClientStringsBounded sends names, URIs and ids of 3 MiB, in requests
// that pass validation and in one that fails it, and checks that none
// reaches a span name, span attribute, span status or metric label whole:
// attributes stay within 1 KiB, and the metric labels an unknown tool
// _OTHER.
func TestClientStringsBounded(t *testing.T) {
	huge := strings.Repeat("x", 3<<20)
	hugeID := strconv.Quote(huge)
	tests := []struct {
		name string
		req  mcpwire.Request
	}{
		{"tool name", mcpwire.Request{Method: "tools/call", Params: `{"name":"` + huge + `","arguments":{}}`}},
		{"tool name, failing validation", mcpwire.Request{Method: "tools/call", Params: `{"name":"` + huge + `","arguments":{}}`, NoMeta: true}},
		{"prompt name", mcpwire.Request{Method: "prompts/get", Params: `{"name":"` + huge + `"}`}},
		{"resource URI", mcpwire.Request{Method: "resources/read", Params: `{"uri":"file:///` + huge + `"}`}},
		{"request id", mcpwire.Request{ID: hugeID, Method: "tools/call", Params: `{"name":"lookup","arguments":{}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			serveStdio(t, h, tt.req)
			ended := h.spans.Ended()
			if len(ended) == 0 {
				t.Fatal("no span")
			}
			for _, s := range ended {
				if len(s.Name()) > 1024 {
					t.Errorf("span name of %d bytes", len(s.Name()))
				}
				if n := len(s.Status().Description); n > 1024 {
					t.Errorf("span %q: status description of %d bytes", s.Name(), n)
				}
				for _, a := range s.Attributes() {
					if n := len(a.Value.String()); n > 1024 {
						t.Errorf("span %q: attribute %s of %d bytes", s.Name(), a.Key, n)
					}
				}
			}
			var rm metricdata.ResourceMetrics
			if err := h.metrics.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					hist, _ := m.Data.(metricdata.Histogram[float64])
					for _, dp := range hist.DataPoints {
						for _, a := range dp.Attributes.ToSlice() {
							if n := len(a.Value.String()); n > 256 {
								t.Errorf("%s: label %s of %d bytes", m.Name, a.Key, n)
							}
						}
					}
				}
			}
		})
	}
}

// TestUnknownToolsOneSeries calls 3,000 tools that do not exist, each
// name different, and the registered one once: the operation duration has
// two series, the registered tool's and one labelled _OTHER, so that the
// SDK's cardinality limit (2,000 by default) is never reached.
func TestUnknownToolsOneSeries(t *testing.T) {
	h := newHarness(t)
	var reqs []mcpwire.Request
	for i := range 3000 {
		reqs = append(reqs, mcpwire.Request{ID: strconv.Itoa(i + 1), Method: "tools/call", Params: `{"name":"no-such-tool-` + strconv.Itoa(i) + `","arguments":{}}`})
	}
	reqs = append(reqs, lookupCall(5000, false, "", ""))
	serveStdio(t, h, reqs...)
	var rm metricdata.ResourceMetrics
	if err := h.metrics.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	series := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcp.server.operation.duration" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				v, _ := dp.Attributes.Value("gen_ai.tool.name")
				series[v.AsString()] += dp.Count
			}
		}
	}
	want := map[string]uint64{"_OTHER": 3000, "lookup": 1}
	if len(series) != len(want) || series["_OTHER"] != 3000 || series["lookup"] != 1 {
		t.Errorf("series by gen_ai.tool.name: got %d of them (%v), want %v", len(series), firstKeys(series, 5), want)
	}
	// The spans name the registered tool, and only it.
	names := map[string]int{}
	for _, s := range h.spans.Ended() {
		names[s.Name()]++
	}
	if names["tools/call"] != 3000 || names["tools/call lookup"] != 1 {
		t.Errorf("span names: %d of them, want tools/call (3000) and tools/call lookup (1)", len(names))
	}
}

// firstKeys returns up to n keys of m with their counts, for messages.
func firstKeys(m map[string]uint64, n int) map[string]uint64 {
	out := map[string]uint64{}
	for k, v := range m {
		if len(out) == n {
			break
		}
		out[k] = v
	}
	return out
}
