package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

const listenMeta = `"_meta":{` + mcpwire.MetaFields + `}`

// listenServer returns a server with one tool, and a function that adds or
// removes a second tool, changing the tools list.
func listenServer(t testing.TB, opts *mcp.ServerOptions) (*mcp.Server, func()) {
	if opts == nil {
		opts = &mcp.ServerOptions{}
	}
	opts.Info.Name, opts.Info.Version = "listen", "1.0.0"
	s := mcp.NewServer(opts)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
	var mu sync.Mutex
	on := false
	toggle := func() {
		mu.Lock()
		defer mu.Unlock()
		if on {
			s.RemoveTools("extra")
		} else {
			mcp.AddTool(s, &mcp.Tool{Name: "extra", Description: "Comes and goes."},
				func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
		}
		on = !on
	}
	return s, toggle
}

// serveHTTP serves h on a loopback port until the test ends. Streams the
// test opens later are closed before the server (cleanups run last first).
func serveHTTP(t testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// frame is one JSON-RPC message read from a stream, kept as generic JSON
// for comparison.
type frame map[string]any

// stream is an open subscriptions/listen response read in the background.
type stream struct {
	resp   *http.Response
	frames chan frame
	lines  chan string // every line, comments included
	done   chan struct{}
}

// postListen sends subscriptions/listen with the given id and filter; hdr
// are header name and value pairs that replace the derived ones.
func postListen(t testing.TB, url string, id, filter string, hdr ...string) *http.Response {
	t.Helper()
	h := http.Header{}
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Set(hdr[i], hdr[i+1])
	}
	return mcpwire.Send(t, context.Background(), url, mcpwire.Request{ID: id, Method: "subscriptions/listen", Params: `{"notifications":` + filter + `}`, Header: h})
}

// openStream sends subscriptions/listen and reads the SSE response in the
// background. The stream is closed when the test ends.
func openStream(t testing.TB, url, id, filter string, hdr ...string) *stream {
	t.Helper()
	resp := postListen(t, url, id, filter, hdr...)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("listen: HTTP %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	st := &stream{resp: resp, frames: make(chan frame, 1000), lines: make(chan string, 1000), done: make(chan struct{})}
	go func() {
		defer close(st.done)
		defer close(st.frames)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			select {
			case st.lines <- line:
			default:
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var f frame
				if err := json.Unmarshal([]byte(data), &f); err != nil {
					t.Errorf("bad JSON in stream: %q", data)
					return
				}
				st.frames <- f
			}
		}
	}()
	t.Cleanup(func() {
		resp.Body.Close()
		<-st.done
	})
	return st
}

// next returns the next frame, failing the test after a timeout.
func (st *stream) next(t testing.TB) frame {
	t.Helper()
	return nextFrame(t, st.frames)
}

// nextFrame receives the next frame of a stream, failing the test when the
// stream ends or no frame comes within 5 s.
func nextFrame(t testing.TB, frames <-chan frame) frame {
	t.Helper()
	select {
	case f, ok := <-frames:
		if !ok {
			t.Fatal("stream ended")
		}
		return f
	case <-time.After(5 * time.Second):
		t.Fatal("no frame within 5s")
	}
	return nil
}

func decode(t testing.TB, s string) frame {
	t.Helper()
	var f frame
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	return f
}

func tagged(method, id string, extra string) string {
	return `{"jsonrpc":"2.0","method":"` + method + `","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}` + extra + `}}`
}

func TestListenHTTP(t *testing.T) {
	s, toggle := listenServer(t, nil)
	srv := serveHTTP(t, s)

	tests := []struct {
		name, id, filter string
		wantAck          string // the honoured filter
		wantChange       bool
	}{
		{"tools", `7`, `{"toolsListChanged":true}`, `{"toolsListChanged":true}`, true},
		{"string id", `"sub-1"`, `{"toolsListChanged":true}`, `{"toolsListChanged":true}`, true},
		{"unsupported kinds are not acknowledged", `8`, `{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["file:///a"]}`, `{"toolsListChanged":true}`, true},
		{"nothing supported asked", `9`, `{"promptsListChanged":true}`, `{}`, false},
		{"empty filter", `10`, `{}`, `{}`, false},
		{"false is not asking", `11`, `{"toolsListChanged":false}`, `{}`, false},
	}
	// All streams are open at once: several concurrent subscriptions.
	streams := make([]*stream, len(tests))
	for i, tt := range tests {
		streams[i] = openStream(t, srv.URL, tt.id, tt.filter)
	}
	for i, tt := range tests {
		t.Run(tt.name+"/ack", func(t *testing.T) {
			got := streams[i].next(t)
			want := decode(t, tagged("notifications/subscriptions/acknowledged", tt.id, `,"notifications":`+tt.wantAck))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("first frame (-want +got):\n%s", diff)
			}
		})
	}
	toggle()
	for i, tt := range tests {
		if !tt.wantChange {
			continue
		}
		t.Run(tt.name+"/change", func(t *testing.T) {
			got := streams[i].next(t)
			want := decode(t, tagged("notifications/tools/list_changed", tt.id, ""))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("change (-want +got):\n%s", diff)
			}
		})
	}
	// The streams that did not ask for the change must not get it. The
	// change was handed to every stream at once (one step, under the lock
	// that Shutdown takes too), and a stream delivers what it holds before
	// its graceful result: so once a stream that asked got it, the next
	// frame of the others after Shutdown is their result, not the change.
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		if tt.wantChange {
			continue
		}
		t.Run(tt.name+"/no change", func(t *testing.T) {
			got := streams[i].next(t)
			want := decode(t, `{"jsonrpc":"2.0","id":`+tt.id+`,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"listen","version":"1.0.0"},"io.modelcontextprotocol/subscriptionId":`+tt.id+`}}}`)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("first frame after the change and Shutdown (-want +got):\n%s", diff)
			}
		})
	}
}

// A change is published after the snapshot is swapped: a client that
// re-lists on the notification sees the new list.
func TestListenRelistSeesChange(t *testing.T) {
	s, toggle := listenServer(t, nil)
	srv := serveHTTP(t, s)
	st := openStream(t, srv.URL, `1`, `{"toolsListChanged":true}`)
	st.next(t)
	toggle()
	st.next(t)
	out := call(t, srv.URL, mcpwire.Request{ID: "2", Method: "tools/list"})
	if !strings.Contains(out, `"name":"extra"`) {
		t.Errorf("tools/list after list_changed lacks the new tool: %s", out)
	}
}

// call POSTs one request and returns the response body.
func call(t testing.TB, url string, r mcpwire.Request) string {
	t.Helper()
	return string(mcpwire.Post(t, context.Background(), url, r).Raw)
}

func TestListenShutdown(t *testing.T) {
	s, _ := listenServer(t, nil)
	srv := serveHTTP(t, s)
	a := openStream(t, srv.URL, `1`, `{"toolsListChanged":true}`)
	b := openStream(t, srv.URL, `"b"`, `{}`)
	a.next(t)
	b.next(t)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for _, c := range []struct {
		st *stream
		id string
	}{{a, `1`}, {b, `"b"`}} {
		got := c.st.next(t)
		want := decode(t, `{"jsonrpc":"2.0","id":`+c.id+`,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"listen","version":"1.0.0"},"io.modelcontextprotocol/subscriptionId":`+c.id+`}}}`)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("graceful result (-want +got):\n%s", diff)
		}
		select {
		case <-c.st.done:
		case <-time.After(5 * time.Second):
			t.Error("stream still open after the graceful result")
		}
	}

	// Later listens are refused with 503; other requests still work.
	resp := postListen(t, srv.URL, `3`, `{"toolsListChanged":true}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"code":-32603`) {
		t.Errorf("listen after Shutdown: HTTP %d %s; want 503 with -32603", resp.StatusCode, body)
	}
	out := call(t, srv.URL, mcpwire.Request{ID: "2", Method: "tools/list"})
	if !strings.Contains(out, `"tools":[`) {
		t.Errorf("tools/list after Shutdown: %s", out)
	}
}

func TestListenErrors(t *testing.T) {
	s, _ := listenServer(t, &mcp.ServerOptions{Listen: mcp.ListenOptions{MaxSubscriptions: 1}})
	srv := serveHTTP(t, s)
	open := openStream(t, srv.URL, `1`, `{}`)
	open.next(t)

	off := mcp.NewServer(&mcp.ServerOptions{Listen: mcp.ListenOptions{Disable: true}})
	mcp.AddTool(off, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
	offSrv := serveHTTP(t, off)
	empty := serveHTTP(t, mcp.NewServer(nil))

	tests := []struct {
		name, url, filter string
		hdr               []string
		wantStatus        int
		wantCode          string
	}{
		{"over the cap", srv.URL, `{}`, nil, 503, `"code":-32603`},
		{"listen turned off", offSrv.URL, `{}`, nil, 404, `"code":-32601`},
		{"nothing to listen to", empty.URL, `{}`, nil, 404, `"code":-32601`},
		{"no SSE in Accept", srv.URL, `{}`, []string{"Accept", "application/json"}, 406, `"code":-32600`},
		{"filter missing", srv.URL, `null`, nil, 400, `"code":-32602`},
		{"filter of the wrong type", srv.URL, `{"toolsListChanged":"yes"}`, nil, 400, `"code":-32602`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := postListen(t, tt.url, `5`, tt.filter, tt.hdr...)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus || !strings.Contains(string(body), tt.wantCode) || !strings.Contains(string(body), `"id":5`) {
				t.Errorf("HTTP %d %s; want %d with %s and the request id", resp.StatusCode, body, tt.wantStatus, tt.wantCode)
			}
		})
	}

	t.Run("capabilities without listen", func(t *testing.T) {
		out := call(t, offSrv.URL, mcpwire.Request{Method: "server/discover"})
		if !strings.Contains(out, `"tools":{}`) || strings.Contains(out, "listChanged") {
			t.Errorf("discover with listen off: %s", out)
		}
	})
}

// Idle streams get keep-alive comments at the configured interval.
func TestListenKeepAlive(t *testing.T) {
	s, _ := listenServer(t, &mcp.ServerOptions{HTTP: mcp.HTTPOptions{KeepAlive: 20 * time.Millisecond}})
	srv := serveHTTP(t, s)
	st := openStream(t, srv.URL, `1`, `{}`)
	st.next(t)
	comments := 0
	deadline := time.After(5 * time.Second)
	for comments < 3 {
		select {
		case l := <-st.lines:
			if l == ":" {
				comments++
			}
		case <-deadline:
			t.Fatalf("%d keep-alive comments within 5s, want 3", comments)
		}
	}
}

// A listen stream outlives http.Server.ReadTimeout (NewHTTPServer sets
// one): net/http clears the read deadline once the body has been read.
func TestListenOutlivesReadTimeout(t *testing.T) {
	s, toggle := listenServer(t, nil)
	srv := httptest.NewUnstartedServer(s)
	srv.Config.ReadTimeout = 100 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	st := openStream(t, srv.URL, `1`, `{"toolsListChanged":true}`)
	st.next(t)
	// Real time, on purpose: the deadline under test is net/http's own
	// read deadline on a real connection (the kernel's clock, which no
	// synctest bubble holds), and there is no event for "a deadline
	// passed and nothing happened". Three times ReadTimeout is well past
	// it; a regression ends the stream, which next reports.
	time.Sleep(300 * time.Millisecond)
	toggle()
	if got := st.next(t)["method"]; got != "notifications/tools/list_changed" {
		t.Fatalf("got %v after the read timeout", got)
	}
}

// stdioClient drives ServeStdio through pipes.
type stdioClient struct {
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func startStdio(t *testing.T, s *mcp.Server, ctx context.Context) *stdioClient {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{in: inW, lines: make(chan string, 100), done: make(chan error, 1)}
	go func() {
		c.done <- s.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	return c
}

func (c *stdioClient) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (c *stdioClient) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			t.Fatal("stdout ended")
		}
		return l
	case <-time.After(5 * time.Second):
		t.Fatal("no line within 5s")
	}
	return ""
}

func listenLine(id, filter string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{` + listenMeta + `,"notifications":` + filter + `}}`
}

// TestListenStdio runs in a synctest bubble: stdio is pipes in process, so
// "subscription 1 ended" is waited for with settle, not on the wall clock.
func TestListenStdio(t *testing.T) { synctest.Test(t, testListenStdio) }

func testListenStdio(t *testing.T) {
	s, toggle := listenServer(t, nil)
	c := startStdio(t, s, context.Background())
	c.send(t, listenLine(`1`, `{"toolsListChanged":true}`))
	if got, want := c.next(t), tagged("notifications/subscriptions/acknowledged", `1`, `,"notifications":{"toolsListChanged":true}`); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	c.send(t, listenLine(`"two"`, `{"toolsListChanged":true}`))
	if got, want := c.next(t), tagged("notifications/subscriptions/acknowledged", `"two"`, `,"notifications":{"toolsListChanged":true}`); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}

	// One change reaches both subscriptions, interleaved on one channel
	// and told apart by their tags.
	toggle()
	got := []string{c.next(t), c.next(t)}
	want := []string{tagged("notifications/tools/list_changed", `"two"`, ""), tagged("notifications/tools/list_changed", `1`, "")}
	if diff := cmp.Diff(want, got, cmpSorted); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}

	// notifications/cancelled ends subscription 1 without a response;
	// the other one goes on.
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	// The subscription ends on its own goroutine.
	mcp.Settle(t, "subscription 1 to end", func() bool { return mcp.OpenListenStreams(s) == 1 })
	toggle()
	if got, want := c.next(t), tagged("notifications/tools/list_changed", `"two"`, ""); got != want {
		t.Errorf("after cancelling 1: got %s, want %s", got, want)
	}

	// Other requests are served while the subscription is open.
	c.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo",`+listenMeta+`}}`)
	if got := c.next(t); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":3,"result":`) {
		t.Errorf("tools/call during a subscription: %s", got)
	}

	// Shutdown: the graceful result.
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := c.next(t), `{"jsonrpc":"2.0","id":"two","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"listen","version":"1.0.0"},"io.modelcontextprotocol/subscriptionId":"two"}}}`; got != want {
		t.Errorf("graceful result:\ngot  %s\nwant %s", got, want)
	}
	c.in.Close()
	if err := <-c.done; err != nil {
		t.Fatal(err)
	}
	if l, ok := <-c.lines; ok {
		t.Errorf("unexpected line after the end: %s", l)
	}
}

var cmpSorted = cmp.Transformer("sorted", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

// At the end of input, listen streams end at once with their completion
// result (a client closing its end of the pipe, or killed with its process
// group as the server is signalled, still reads it), instead of holding
// ServeStdio for the drain time.
func TestListenStdioEOF(t *testing.T) {
	s, _ := listenServer(t, nil)
	c := startStdio(t, s, context.Background())
	c.send(t, listenLine(`1`, `{"toolsListChanged":true}`))
	c.next(t)
	start := time.Now()
	c.in.Close()
	if got, want := c.next(t), `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"listen","version":"1.0.0"},"io.modelcontextprotocol/subscriptionId":1}}}`; got != want {
		t.Errorf("at the end of input:\ngot  %s\nwant %s", got, want)
	}
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("ServeStdio still running 3s after EOF")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("ServeStdio took %v after EOF", d)
	}
	if l, ok := <-c.lines; ok {
		t.Errorf("unexpected line after EOF: %s", l)
	}
}

// Cancelling ServeStdio's context returns even while a Read is blocked.
func TestStdioContextCancel(t *testing.T) {
	s, _ := listenServer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	c := startStdio(t, s, ctx)
	c.send(t, listenLine(`1`, `{}`))
	c.next(t)
	cancel()
	select {
	case <-c.done:
	case <-time.After(3 * time.Second):
		t.Fatal("ServeStdio still running 3s after its context was cancelled")
	}
}

// logBuffer is a concurrency-safe log sink for tests.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newLogger(lb *logBuffer) *slog.Logger { return slog.New(slog.NewTextHandler(lb, nil)) }

// Over real HTTP: a client that stops reading its listen stream is
// dropped and its handler ends, while another listener gets every
// notification. (Loopback TCP lets a non-reading client's stream creep on
// in bursts; the internal TestListenSlowReaderDropped covers a write that
// is stuck for good.)
func TestListenHTTPSlowReader(t *testing.T) {
	var logs logBuffer
	bus := new(mcp.LocalBus)
	s, _ := listenServer(t, &mcp.ServerOptions{Bus: bus, Logger: newLogger(&logs)})
	srv := serveHTTP(t, s)

	// The slow client: a raw connection with a tiny receive buffer that
	// sends the listen request and never reads.
	d := net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024) })
	}}
	conn, err := d.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + listenMeta + `,"notifications":{"toolsListChanged":true}}}`
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s", srv.Listener.Addr(), len(body), body)

	fast := openStream(t, srv.URL, `2`, `{"toolsListChanged":true}`)
	fast.next(t)
	for i := 0; !strings.Contains(logs.String(), "dropping a subscriptions/listen stream"); i++ {
		if i == 100000 {
			t.Fatal("the slow client was never dropped")
		}
		bus.Publish(mcp.Change{Kind: mcp.ToolsListChanged})
		if f := fast.next(t); f["method"] != "notifications/tools/list_changed" {
			t.Fatalf("fast listener got %v", f)
		}
	}
	// The fast listener goes on.
	bus.Publish(mcp.Change{Kind: mcp.ToolsListChanged})
	fast.next(t)
	// The slow stream's handler is not stuck in its write: Shutdown, which
	// waits for every listen handler, returns.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v (a dropped stream's handler still running?)", err)
	}
}

// TestListenURIBounds: one URI of resourceSubscriptions longer than 2048
// bytes, or URIs totalling more than 64 KiB, get -32602 (an idle stream
// has no timeout: these bound what it holds); within them the stream opens.
func TestListenURIBounds(t *testing.T) {
	s, _ := listenServer(t, nil)
	s.AddResource(&mcp.Resource{URI: "file:///a", Name: "a"}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil })
	c := startStdio(t, s, context.Background())
	uris := func(n, size int) string {
		list := make([]string, n)
		for i := range list {
			list[i] = "file:///" + strings.Repeat("x", size-len("file:///")-4) + fmt.Sprintf("%04d", i)
		}
		b, _ := json.Marshal(list)
		return `{"resourceSubscriptions":` + string(b) + `}`
	}
	tests := []struct {
		name, filter, want string
	}{
		{"one URI of 2048 bytes", uris(1, 2048), "acknowledged"},
		{"one URI of 2049 bytes", uris(1, 2049), `"code":-32602`},
		{"32 URIs of 2048 bytes (64 KiB)", uris(32, 2048), "acknowledged"},
		{"33 URIs of 2048 bytes", uris(33, 2048), `"code":-32602`},
		{"1000 short URIs", uris(1000, 60), "acknowledged"},
	}
	for i, tt := range tests {
		c.send(t, listenLine(strconv.Itoa(i+1), tt.filter))
		select {
		case err := <-c.done:
			t.Fatalf("ServeStdio returned %v", err)
		default:
		}
		if got := c.next(t); !strings.Contains(got, tt.want) {
			t.Errorf("%s: got %.300s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestListenObserve checks ListenOptions.Observe: it sees the granted
// filter before the acknowledgement, its error refuses the stream, and its
// end function runs when the stream ends.
func TestListenObserve(t *testing.T) {
	granted := make(chan mcp.SubscriptionFilter, 1)
	ended := make(chan struct{}, 1)
	s, _ := listenServer(t, &mcp.ServerOptions{Listen: mcp.ListenOptions{
		MaxSubscriptions: 1,
		Observe: func(ctx context.Context, info *mcp.RequestInfo, f mcp.SubscriptionFilter) (func(), error) {
			if !f.ToolsListChanged {
				return nil, mcp.InvalidParams("Invalid params: refused by the observer")
			}
			granted <- f
			return func() { ended <- struct{}{} }, nil
		},
	}})
	srv := serveHTTP(t, s)

	resp := postListen(t, srv.URL, `7`, `{"promptsListChanged":true}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "refused by the observer") {
		t.Errorf("refused stream: HTTP %d %s; want 400 with the observer's error", resp.StatusCode, body)
	}
	// The refused stream gave its slot back.
	for i := range 2 {
		st := openStream(t, srv.URL, strconv.Itoa(10+i), `{"toolsListChanged":true}`)
		st.next(t)
		<-granted
		st.resp.Body.Close()
		<-ended
	}

	st := openStream(t, srv.URL, `8`, `{"toolsListChanged":true,"promptsListChanged":true}`)
	st.next(t) // the acknowledgement
	if diff := cmp.Diff(mcp.SubscriptionFilter{ToolsListChanged: true}, <-granted); diff != "" {
		t.Errorf("granted filter (-want +got):\n%s", diff)
	}
	st.resp.Body.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the end function did not run within 5s of the stream closing")
	}
}

// A scoped change reaches the listen streams of its principal only; an
// unscoped one reaches everyone.
func TestListenScopedChange(t *testing.T) {
	var srv *httptest.Server
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "listen", Version: "1.0.0"}, Auth: &mcp.AuthOptions{
		Verifier: mcp.TokenVerifierFunc(func(ctx context.Context, token string) (*mcp.Principal, error) {
			return &mcp.Principal{Issuer: "https://as.example", Subject: token}, nil
		}),
		Resource:             "http://127.0.0.1/mcp",
		AuthorizationServers: []string{"https://as.example"},
	}})
	s.Advertise(&mcp.Advertisement{Capabilities: mcp.ServerCapabilities{Resources: &mcp.ResourcesCapability{Subscribe: true}}})
	srv = serveHTTP(t, s)
	filter := `{"resourceSubscriptions":["file:///a","file:///b"]}`
	alice := openStream(t, srv.URL, `1`, filter, "Authorization", "Bearer alice")
	bob := openStream(t, srv.URL, `2`, filter, "Authorization", "Bearer bob")
	alice.next(t) // the acknowledgements
	bob.next(t)
	updated := func(id, uri string) frame {
		return decode(t, tagged("notifications/resources/updated", id, `,"uri":"`+uri+`"`))
	}
	s.NotifyChange(mcp.Change{Kind: mcp.ResourceUpdated, URI: "file:///a", Scope: "https://as.example alice"})
	if diff := cmp.Diff(updated(`1`, "file:///a"), alice.next(t)); diff != "" {
		t.Errorf("alice's scoped change (-want +got):\n%s", diff)
	}
	// Changes are handed to every stream in the order published: bob's
	// first frame is the unscoped change, never alice's.
	s.NotifyChange(mcp.Change{Kind: mcp.ResourceUpdated, URI: "file:///b"})
	if diff := cmp.Diff(updated(`2`, "file:///b"), bob.next(t)); diff != "" {
		t.Errorf("bob's first change (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(updated(`1`, "file:///b"), alice.next(t)); diff != "" {
		t.Errorf("alice's unscoped change (-want +got):\n%s", diff)
	}
}

// TestListenObserveLegacySubscribe: ListenOptions.Observe sees a legacy
// session's resources/subscribe (once per session and URI), its error
// refuses the subscribe, and its end function runs at the unsubscribe or
// when the session ends.
func TestListenObserveLegacySubscribe(t *testing.T) {
	events := make(chan string, 16)
	s := mcp.NewServer(&mcp.ServerOptions{Listen: mcp.ListenOptions{
		Observe: func(ctx context.Context, info *mcp.RequestInfo, f mcp.SubscriptionFilter) (func(), error) {
			uri := strings.Join(f.ResourceSubscriptions, ",")
			if uri == "test://refused" {
				return nil, mcp.InvalidParams("Invalid params: refused by the observer")
			}
			events <- fmt.Sprint("observe ", uri, " legacy=", info.Era == mcp.EraLegacy)
			return func() { events <- "end " + uri }, nil
		},
	}})
	for _, u := range []string{"test://a", "test://refused"} {
		s.AddResource(&mcp.Resource{URI: u, Name: u}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	}
	c := mcptest.NewClient(t, s, mcptest.Legacy())
	ctx := context.Background()
	call := func(method, uri string) error {
		_, err := c.Client().Call(ctx, method, map[string]any{"uri": uri})
		return err
	}
	var got []string
	drain := func() {
		for {
			select {
			case e := <-events:
				got = append(got, e)
			default:
				return
			}
		}
	}
	for _, step := range []struct{ method, uri string }{
		{"resources/subscribe", "test://a"},
		{"resources/subscribe", "test://a"}, // observed once
		{"resources/unsubscribe", "test://a"},
		{"resources/unsubscribe", "test://a"}, // nothing to end
		{"resources/subscribe", "test://a"},
	} {
		if err := call(step.method, step.uri); err != nil {
			t.Fatalf("%s %s: %v", step.method, step.uri, err)
		}
	}
	var e *mcp.Error
	if err := call("resources/subscribe", "test://refused"); !errors.As(err, &e) || !strings.Contains(e.Message, "refused by the observer") {
		t.Errorf("a refused subscribe: %v, want the observer's error", err)
	}
	drain()
	c.Client().Close()
	select {
	case e := <-events:
		got = append(got, e)
	case <-time.After(5 * time.Second):
		t.Fatal("the end function did not run within 5s of the session ending")
	}
	want := []string{"observe test://a legacy=true", "end test://a", "observe test://a legacy=true", "end test://a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
}
