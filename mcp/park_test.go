package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/internal/realtime"
	"github.com/mcpkit/mcpkit/mcp"
)

// rawStream is a listen stream read off a raw HTTP/1.1 connection.
type rawStream struct {
	conn   net.Conn
	head   string // status line and headers
	frames chan frame
	lines  chan string
	done   chan struct{}
}

// rawListenRequest is the subscriptions/listen request with the given id,
// as it travels on the wire.
func rawListenRequest(addr, id string) string {
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{` + listenMeta + `,"notifications":{"toolsListChanged":true}}}`
	return fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body)
}

// openRaw sends a listen request, followed by extra bytes in the same
// write, on a fresh connection to addr, reads the response head and then
// the body's events in the background (the body is not chunked: it ends
// with the connection).
func openRaw(t *testing.T, addr, id, extra string) *rawStream {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, rawListenRequest(addr, id)+extra); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var head strings.Builder
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the response head: %v (so far %q)", err, head.String())
		}
		if line == "\r\n" {
			break
		}
		head.WriteString(line)
	}
	c.SetReadDeadline(time.Time{})
	rs := &rawStream{conn: c, head: head.String(), frames: make(chan frame, 100), lines: make(chan string, 100), done: make(chan struct{})}
	go func() {
		defer close(rs.done)
		defer close(rs.frames)
		sc := bufio.NewScanner(br)
		for sc.Scan() {
			select {
			case rs.lines <- sc.Text():
			default:
			}
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				rs.frames <- decode(t, data)
			}
		}
	}()
	return rs
}

func (rs *rawStream) next(t *testing.T) frame {
	t.Helper()
	return nextFrame(t, rs.frames)
}

// ended waits until the server has closed the stream.
func (rs *rawStream) ended(t *testing.T) {
	t.Helper()
	select {
	case <-rs.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream is still open")
	}
}

// waitUntil polls cond for up to 5 seconds (realtime.Poll). The tests of
// this file and listen_test.go serve real connections through net/http:
// when a handler has parked its stream or seen its client go is up to the
// kernel and net/http's goroutines, which no synctest bubble can hold (a
// bubble cannot block on a real socket). Waits in process use settle in a
// bubble instead.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	realtime.Poll(t, 5*time.Second, what, cond)
}

// A listen stream on HTTP/1.1 is parked: its response head says the body
// ends with the connection, notifications and keep-alives arrive, and
// Shutdown ends it with the graceful result and closes the connection.
func TestListenParked(t *testing.T) {
	s, toggle := listenServer(t, &mcp.ServerOptions{HTTP: mcp.HTTPOptions{KeepAlive: 20 * time.Millisecond}})
	srv := serveHTTP(t, s)
	addr := srv.Listener.Addr().String()
	a := openRaw(t, addr, `1`, "")
	b := openRaw(t, addr, `"b"`, "")

	wantHead := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\nConnection: close\r\n"
	if a.head != wantHead {
		t.Errorf("response head:\n%q\nwant\n%q", a.head, wantHead)
	}
	for _, c := range []struct {
		rs *rawStream
		id string
	}{{a, `1`}, {b, `"b"`}} {
		if diff := cmp.Diff(decode(t, tagged("notifications/subscriptions/acknowledged", c.id, `,"notifications":{"toolsListChanged":true}`)), c.rs.next(t)); diff != "" {
			t.Errorf("acknowledgement (-want +got):\n%s", diff)
		}
	}
	// A stream parks after its acknowledgement is written, so the count
	// may lag the frame just read.
	waitUntil(t, "both streams to park", func() bool { return mcp.ParkedListenStreams(s) == 2 })

	toggle()
	for _, c := range []struct {
		rs *rawStream
		id string
	}{{a, `1`}, {b, `"b"`}} {
		if diff := cmp.Diff(decode(t, tagged("notifications/tools/list_changed", c.id, "")), c.rs.next(t)); diff != "" {
			t.Errorf("change (-want +got):\n%s", diff)
		}
	}
	for comments := 0; comments < 2; {
		select {
		case l := <-a.lines:
			if l == ":" {
				comments++
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%d keep-alive comments within 5s, want 2", comments)
		}
	}

	// Other requests reuse the server's pooled request buffers meanwhile;
	// the parked streams' ids must not change with them.
	for i := range 4 {
		req, err := mcpwire.Request{ID: `"` + strings.Repeat("x", 40+i) + `"`, Method: "server/discover"}.NewRequest(context.Background(), srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("server/discover: %v %v", err, resp)
		}
		resp.Body.Close()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for _, c := range []struct {
		rs *rawStream
		id string
	}{{a, `1`}, {b, `"b"`}} {
		want := decode(t, `{"jsonrpc":"2.0","id":`+c.id+`,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"listen","version":"1.0.0"},"io.modelcontextprotocol/subscriptionId":`+c.id+`}}}`)
		if diff := cmp.Diff(want, c.rs.next(t)); diff != "" {
			t.Errorf("graceful result (-want +got):\n%s", diff)
		}
		c.rs.ended(t)
	}
	if n := mcp.ParkedListenStreams(s); n != 0 {
		t.Errorf("%d parked streams after Shutdown, want 0", n)
	}
}

// A client that closes its connection frees its parked stream's slot: at
// once on Linux, else at the next keep-alive.
func TestListenParkedClientGone(t *testing.T) {
	for _, keepAlive := range []time.Duration{-1, 20 * time.Millisecond} {
		t.Run(fmt.Sprint("keep-alive ", keepAlive), func(t *testing.T) {
			if keepAlive < 0 && runtime.GOOS != "linux" {
				t.Skip("without keep-alives, only Linux notices a closed connection before a write")
			}
			s, toggle := listenServer(t, &mcp.ServerOptions{Listen: mcp.ListenOptions{MaxSubscriptions: 1}, HTTP: mcp.HTTPOptions{KeepAlive: keepAlive}})
			srv := serveHTTP(t, s)
			addr := srv.Listener.Addr().String()
			gone := openRaw(t, addr, `1`, "")
			gone.next(t)
			// It parks after its acknowledgement is written.
			waitUntil(t, "the stream to park", func() bool { return mcp.ParkedListenStreams(s) == 1 })
			gone.conn.Close()
			waitUntil(t, "the stream to be unregistered", func() bool { return mcp.ParkedListenStreams(s) == 0 })
			// Its slot is free again (MaxSubscriptions is 1).
			next := openRaw(t, addr, `2`, "")
			next.next(t)
			toggle()
			if got := next.next(t)["method"]; got != "notifications/tools/list_changed" {
				t.Errorf("got %v", got)
			}
		})
	}
}

// A client that stops reading is dropped when its socket buffers stay
// full, and the others get every notification meanwhile.
func TestListenParkedSlowReader(t *testing.T) {
	var logs logBuffer
	bus := new(mcp.LocalBus)
	s, _ := listenServer(t, &mcp.ServerOptions{Bus: bus, Logger: newLogger(&logs)})
	srv := serveHTTP(t, s)
	addr := srv.Listener.Addr().String()
	d := net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024) })
	}}
	slow, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	io.WriteString(slow, rawListenRequest(addr, `1`))
	fast := openRaw(t, addr, `2`, "")
	fast.next(t)
	waitUntil(t, "both streams parked", func() bool { return mcp.ParkedListenStreams(s) == 2 })

	for i := 0; !strings.Contains(logs.String(), "dropping a subscriptions/listen stream"); i++ {
		if i == 100000 {
			t.Fatal("the slow client was never dropped")
		}
		bus.Publish(mcp.Change{Kind: mcp.ToolsListChanged})
		if f := fast.next(t); f["method"] != "notifications/tools/list_changed" {
			t.Fatalf("fast listener got %v", f)
		}
	}
	waitUntil(t, "the slow stream to be unregistered", func() bool { return mcp.ParkedListenStreams(s) == 1 })
	bus.Publish(mcp.Change{Kind: mcp.ToolsListChanged})
	fast.next(t)
}

// A listen request followed by pipelined bytes is not parked (net/http had
// read them, and they cannot be handed back): its handler keeps the
// stream, which works as usual and still ends gracefully at Shutdown.
func TestListenPipelinedNotParked(t *testing.T) {
	s, toggle := listenServer(t, nil)
	srv := serveHTTP(t, s)
	addr := srv.Listener.Addr().String()
	rs := openRaw(t, addr, `1`, "GET / HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	rs.next(t)
	if n := mcp.ParkedListenStreams(s); n != 0 {
		t.Errorf("%d parked streams, want 0", n)
	}
	toggle()
	if got := rs.next(t)["method"]; got != "notifications/tools/list_changed" {
		t.Errorf("got %v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if got := rs.next(t)["result"]; got == nil {
		t.Errorf("no graceful result")
	}
	rs.ended(t)
}

// Streams that cannot or must not be parked are served by their handler
// through net/http, as before: HTTP/2, and DisableListenParking.
func TestListenNotParked(t *testing.T) {
	tests := []struct {
		name  string
		opts  *mcp.ServerOptions
		http2 bool
	}{
		{"DisableListenParking", &mcp.ServerOptions{HTTP: mcp.HTTPOptions{DisableListenParking: true}}, false},
		{"HTTP/2", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, toggle := listenServer(t, tt.opts)
			srv := httptest.NewUnstartedServer(s)
			if tt.http2 {
				srv.EnableHTTP2 = true
				srv.StartTLS()
			} else {
				srv.Start()
			}
			t.Cleanup(srv.Close)
			client := srv.Client()
			req, err := mcpwire.Request{Method: "subscriptions/listen", Params: `{"notifications":{"toolsListChanged":true}}`}.NewRequest(context.Background(), srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if tt.http2 && resp.ProtoMajor != 2 {
				t.Fatalf("served over %s, want HTTP/2", resp.Proto)
			}
			if !tt.http2 && resp.TransferEncoding == nil {
				t.Errorf("not chunked: %v", resp.Header)
			}
			sc := bufio.NewScanner(resp.Body)
			nextData := func() string {
				for sc.Scan() {
					if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
						return d
					}
				}
				t.Fatalf("stream ended: %v", sc.Err())
				return ""
			}
			if d := nextData(); !strings.Contains(d, "acknowledged") {
				t.Fatalf("first event %s", d)
			}
			if n := mcp.ParkedListenStreams(s); n != 0 {
				t.Errorf("%d parked streams, want 0", n)
			}
			toggle()
			if d := nextData(); !strings.Contains(d, "tools/list_changed") {
				t.Errorf("second event %s", d)
			}
		})
	}
}
