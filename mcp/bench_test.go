package mcp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
)

const benchMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}`

var (
	discoverBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + benchMeta + `}}`)
	echoBody     = []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},` + benchMeta + `}}`)
	floorBody    = bytes.Repeat([]byte("x"), 350)
)

func benchServer() *mcp.Server {
	s := mcp.NewServer(&mcp.ServerOptions{Name: "bench", Version: "1.0.0", Instructions: "A benchmark server."})
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(ctx context.Context, req *mcp.ToolRequest, in echoIn) (string, error) { return in.Text, nil })
	return s
}

// reusableRequest is an *http.Request whose body can be rewound, so the
// benchmark measures the handler and not request construction.
type rewinder struct{ *bytes.Reader }

func (rewinder) Close() error { return nil }

func newBenchRequest(body []byte, method, name string) (*http.Request, *rewinder) {
	rw := &rewinder{bytes.NewReader(body)}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Body = rw
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", method)
	if name != "" {
		r.Header.Set("Mcp-Name", name)
	}
	return r, rw
}

// discardWriter is a minimal http.ResponseWriter that keeps nothing.
type discardWriter struct {
	h    http.Header
	code int
	n    int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }
func (w *discardWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }
func (w *discardWriter) reset() {
	for k := range w.h {
		delete(w.h, k)
	}
	w.code, w.n = 0, 0
}

func benchHTTP(b *testing.B, h http.Handler, body []byte, method, name string) {
	r, rw := newBenchRequest(body, method, name)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		rw.Reset(body)
		w.reset()
		h.ServeHTTP(w, r)
		if w.code != http.StatusOK && w.code != 0 {
			b.Fatalf("status %d", w.code)
		}
	}
}

// floorHandler is the baseline: a bare net/http handler that reads the body
// and writes a fixed 350-byte JSON body.
var floorHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Write(floorBody)
})

func BenchmarkFloorHTTP(b *testing.B) {
	benchHTTP(b, floorHandler, discoverBody, "server/discover", "")
}

func BenchmarkDiscoverHTTP(b *testing.B) {
	benchHTTP(b, benchServer(), discoverBody, "server/discover", "")
}

func BenchmarkToolsCallHTTP(b *testing.B) {
	benchHTTP(b, benchServer(), echoBody, "tools/call", "echo")
}

// BenchmarkDiscoverStdio measures discover over the stdio transport, many
// requests pipelined through one connection.
func BenchmarkDiscoverStdio(b *testing.B) {
	s := benchServer()
	line := append(append([]byte(nil), discoverBody...), '\n')
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	pr, pw := io.Pipe()
	var out countWriter
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), pr, &out) }()
	b.ResetTimer()
	for b.Loop() {
		pw.Write(line)
	}
	pw.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if out.lines < b.N {
		b.Fatalf("got %d responses for %d requests", out.lines, b.N)
	}
}

type countWriter struct{ lines int }

func (c *countWriter) Write(p []byte) (int, error) {
	c.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

func TestDiscoverAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are measured in full runs")
	}
	s := benchServer()
	measure := func(h http.Handler, body []byte, method, name string) float64 {
		r, rw := newBenchRequest(body, method, name)
		w := &discardWriter{h: http.Header{}}
		return testing.AllocsPerRun(200, func() {
			rw.Reset(body)
			w.reset()
			h.ServeHTTP(w, r)
		})
	}
	floor := measure(floorHandler, discoverBody, "server/discover", "")
	got := measure(s, discoverBody, "server/discover", "")
	if got > floor+6 {
		t.Errorf("server/discover over HTTP: %v allocations per request, want at most %v (the net/http floor's %v plus 6)", got, floor+6, floor)
	}
	_ = strings.ToUpper
}
