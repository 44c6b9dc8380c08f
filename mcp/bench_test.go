package mcp

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// benchRecorder is a reusable http.ResponseWriter: it keeps its header map
// and body between requests, so benchmarks count the handler's
// allocations, not the recorder's.
type benchRecorder struct {
	h      http.Header
	status int
	body   []byte
}

func (r *benchRecorder) Header() http.Header { return r.h }
func (r *benchRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *benchRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body = append(r.body, b...)
	return len(b), nil
}
func (r *benchRecorder) Flush() {}
func (r *benchRecorder) reset() {
	clear(r.h)
	r.status = 0
	r.body = r.body[:0]
}

type benchBody struct{ bytes.Reader }

func (*benchBody) Close() error { return nil }

// inProcessHTTP serves one fixed request to h again and again, reusing the
// request and response objects, as net/http hands a request to a handler
// on a loopback listener.
type inProcessHTTP struct {
	h    http.Handler
	req  *http.Request
	body []byte
	rd   benchBody
	w    benchRecorder
}

func newInProcessHTTP(tb testing.TB, h http.Handler, method, name, body string) *inProcessHTTP {
	ctx := context.WithValue(context.Background(), http.LocalAddrContextKey, net.Addr(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:8080/mcp", nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header = mcpwire.Request{Method: method, Name: name}.Headers() // the body is given as it is
	p := &inProcessHTTP{h: h, req: req, body: []byte(body), w: benchRecorder{h: http.Header{}}}
	req.Body = &p.rd
	return p
}

func (p *inProcessHTTP) do() {
	p.rd.Reset(p.body)
	p.w.reset()
	p.h.ServeHTTP(&p.w, p.req)
}

const benchMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}`

// echoServer returns a server with the echo tool: {"text": string} in,
// validated, and the same text out.
func echoServer() *Server {
	s := NewServer(&ServerOptions{Info: Implementation{Name: "bench-server", Version: "1.0.0"}})
	type echoIn struct {
		Text string `json:"text"`
	}
	AddTool(s, &Tool{Name: "echo", Description: "Echoes the text."},
		func(ctx context.Context, req *ToolRequest, in echoIn) (string, error) { return in.Text, nil })
	return s
}

var echoCallBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},` + benchMeta + `}}`

// floorBody is what floorHandler writes: a tools/call response of the size
// mcpkit sends, fixed.
var floorBody = []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench-server","version":"1.0.0"}}}}`)

// floorHandler is the net/http floor: it drains the body and writes a
// fixed response, as little as a handler can do.
type floorHandler struct{}

func (floorHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var buf [512]byte
	for {
		if _, err := r.Body.Read(buf[:]); err != nil {
			break
		}
	}
	w.Header()["Content-Type"] = jsonContentType
	w.Write(floorBody)
}

// BenchmarkToolsCall calls the echo tool over in-process Streamable HTTP.
// Compare with BenchmarkHTTPFloor.
func BenchmarkToolsCall(b *testing.B) {
	p := newInProcessHTTP(b, echoServer(), "tools/call", "echo", echoCallBody)
	p.do()
	if p.w.status != 200 || !bytes.Contains(p.w.body, []byte(`"text":"hello"`)) {
		b.Fatalf("status %d, body %s", p.w.status, p.w.body)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.do()
	}
}

// discoverBody is a server/discover request as clients send it.
var discoverBody = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + benchMeta + `}}`

// discoverFloorBody is a fixed 350-byte body, the size of a discover
// response.
var discoverFloorBody = bytes.Repeat([]byte("x"), 350)

// discoverFloor is the net/http floor of the discover benchmarks: it
// drains the body and writes a fixed 350-byte body.
type discoverFloor struct{}

func (discoverFloor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var buf [512]byte
	for {
		if _, err := r.Body.Read(buf[:]); err != nil {
			break
		}
	}
	w.Header()["Content-Type"] = jsonContentType
	w.Write(discoverFloorBody)
}

// BenchmarkDiscover answers server/discover over in-process Streamable
// HTTP. Compare with BenchmarkDiscoverFloor.
func BenchmarkDiscover(b *testing.B) {
	p := newInProcessHTTP(b, echoServer(), "server/discover", "", discoverBody)
	p.do()
	if p.w.status != 200 || !bytes.Contains(p.w.body, []byte(`"supportedVersions"`)) {
		b.Fatalf("status %d, body %s", p.w.status, p.w.body)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.do()
	}
}

// BenchmarkDiscoverFloor is the bare net/http handler writing a fixed
// 350-byte body, through the same harness.
func BenchmarkDiscoverFloor(b *testing.B) {
	p := newInProcessHTTP(b, discoverFloor{}, "server/discover", "", discoverBody)
	b.ReportAllocs()
	for b.Loop() {
		p.do()
	}
}

// BenchmarkDiscoverStdio answers server/discover over the stdio transport,
// requests pipelined through one connection.
func BenchmarkDiscoverStdio(b *testing.B) {
	s := echoServer()
	line := []byte(discoverBody + "\n")
	pr, pw := io.Pipe()
	var out lineCounter
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), pr, &out) }()
	b.ReportAllocs()
	for b.Loop() {
		pw.Write(line)
	}
	pw.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if out.n < b.N {
		b.Fatalf("got %d responses for %d requests", out.n, b.N)
	}
}

type lineCounter struct{ n int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// TestDiscoverAllocs pins server/discover at most 6 allocations beyond the
// net/http floor's.
func TestDiscoverAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts need a quiet run")
	}
	floor := testing.AllocsPerRun(200, newInProcessHTTP(t, discoverFloor{}, "server/discover", "", discoverBody).do)
	p := newInProcessHTTP(t, echoServer(), "server/discover", "", discoverBody)
	got := testing.AllocsPerRun(200, p.do)
	if p.w.status != 200 {
		t.Fatalf("status %d: %s", p.w.status, p.w.body)
	}
	if got > floor+6 {
		t.Errorf("server/discover allocates %v times per request, want at most %v (the floor's %v plus 6)", got, floor+6, floor)
	}
}

// BenchmarkHTTPFloor serves a fixed tools/call response through the same
// in-process harness: the cost of net/http's handler interface and nothing
// else.
func BenchmarkHTTPFloor(b *testing.B) {
	p := newInProcessHTTP(b, floorHandler{}, "tools/call", "echo", echoCallBody)
	b.ReportAllocs()
	for b.Loop() {
		p.do()
	}
}

// BenchmarkToolsListPages lists 10,000 registered tools page by page (100
// per page); one op is one page.
func BenchmarkToolsListPages(b *testing.B) {
	s := NewServer(nil)
	for i := range 10000 {
		addNumberedTool(s, i)
	}
	cursors := []string{""}
	for {
		res := mustResult(b, s, "tools/list", cursorParams(cursors[len(cursors)-1]))
		next, _ := res["nextCursor"].(string)
		if next == "" {
			break
		}
		cursors = append(cursors, next)
	}
	if len(cursors) != 100 {
		b.Fatalf("got %d pages, want 100", len(cursors))
	}
	reqs := make([][]byte, len(cursors))
	for i, c := range cursors {
		reqs[i] = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + cursorMember(c) + benchMeta + `}}`)
	}
	buf := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		msg := decodeMsg(b, reqs[i%len(reqs)])
		out, status := s.Handle(context.Background(), buf[:0], &Incoming{Message: &msg}, nil)
		if status != 200 {
			b.Fatalf("status %d: %s", status, out)
		}
		i++
	}
}

func addNumberedTool(s *Server, i int) {
	s.AddRawTool(&Tool{Name: "tool_" + strconv.Itoa(100000+i), Description: "A tool.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) { return &CallToolResult{}, nil })
}

// loopbackPost posts body to url with the headers of a tools/call of echo,
// through a keep-alive client, and drains the response.
func loopbackPost(b *testing.B, c *http.Client, url string, body []byte) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", LatestVersion)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "echo")
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || n == 0 {
		b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
	}
}

func benchLoopback(b *testing.B, h http.Handler) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := srv.Client()
	body := []byte(echoCallBody)
	b.ReportAllocs()
	for b.Loop() {
		loopbackPost(b, c, srv.URL, body)
	}
}

// BenchmarkToolsCallLoopback calls the echo tool over a real loopback
// connection (client and server in this process); compare with
// BenchmarkHTTPFloorLoopback. Allocations include the client's.
func BenchmarkToolsCallLoopback(b *testing.B) { benchLoopback(b, echoServer()) }

// BenchmarkHTTPFloorLoopback is the net/http floor over loopback.
func BenchmarkHTTPFloorLoopback(b *testing.B) { benchLoopback(b, floorHandler{}) }

// bytesPerRun returns the average number of heap bytes one call of f
// allocates, over runs calls after a warm-up call.
func bytesPerRun(runs int, f func()) uint64 {
	f()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}

// TestToolsCallBytes pins the heap bytes of a tools/call served without
// interceptors at most 700 beyond the net/http floor's (677 when it was
// written): the exchange, with its RequestInfo and ToolRequest, must stay
// in the 896-byte size class (at most 888 bytes plus the allocator's 8-byte
// header for objects over 512 bytes with pointers).
func TestToolsCallBytes(t *testing.T) {
	if testing.Short() || raceOn {
		t.Skip("allocation sizes need a quiet run without the race detector")
	}
	floor := bytesPerRun(500, newInProcessHTTP(t, floorHandler{}, "tools/call", "echo", echoCallBody).do)
	p := newInProcessHTTP(t, echoServer(), "tools/call", "echo", echoCallBody)
	got := bytesPerRun(500, p.do)
	if p.w.status != 200 {
		t.Fatalf("status %d: %s", p.w.status, p.w.body)
	}
	if got > floor+700 {
		t.Errorf("tools/call allocates %d bytes per request, want at most %d (the floor's %d plus 700)", got, floor+700, floor)
	}
}
