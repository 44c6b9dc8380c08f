package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/internal/demo"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// fakeStdio is a scripted stdio server on in-process pipes.
type fakeStdio struct {
	mu      sync.Mutex
	methods []string
}

func (f *fakeStdio) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.methods...)
}

// startFake serves handle on a pipe and returns a StreamConn to it. handle
// returns the line to answer with, or nil to stay silent.
func startFake(t *testing.T, handle func(m *jsonrpc.Message) []byte) (*StreamConn, *fakeStdio) {
	t.Helper()
	cr, cw := io.Pipe() // client -> server
	sr, sw := io.Pipe() // server -> client
	f := &fakeStdio{}
	go func() {
		defer sw.Close()
		sc := bufio.NewScanner(cr)
		for sc.Scan() {
			m, err := jsonrpc.Decode(append([]byte(nil), sc.Bytes()...))
			if err != nil {
				continue
			}
			f.mu.Lock()
			f.methods = append(f.methods, m.Method)
			f.mu.Unlock()
			if out := handle(&m); out != nil {
				sw.Write(append(out, '\n'))
			}
		}
	}()
	c := NewStreamConn(sr, cw)
	t.Cleanup(func() { c.Close() })
	return c, f
}

func rpcError(m *jsonrpc.Message, code int, msg string, data string) []byte {
	e := &jsonrpc.Error{Code: code, Message: msg}
	if data != "" {
		e.Data = json.RawMessage(data)
	}
	return jsonrpc.AppendError(nil, m.ID, e)
}

const fakeInit = `{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"fake-legacy","version":"9.9"},"instructions":"legacy fake"}`

// legacyStdio answers server/discover with discover(m) and serves the
// initialize handshake like a legacy server.
func legacyStdio(discover func(m *jsonrpc.Message) []byte) func(m *jsonrpc.Message) []byte {
	return func(m *jsonrpc.Message) []byte {
		switch m.Method {
		case "server/discover":
			return discover(m)
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(m.Params, &p)
			return jsonrpc.AppendResult(nil, m.ID, fmt.Appendf(nil, fakeInit, p.ProtocolVersion))
		case "tools/list":
			return jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`))
		}
		if m.IsRequest() {
			return rpcError(m, -32601, "Method not found", "")
		}
		return nil
	}
}

const fakeDiscover = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":5000,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake-modern","version":"1.0"}}}`

// modernStdio answers server/discover at 2026-07-28 and -32022 otherwise.
func modernStdio(m *jsonrpc.Message) []byte {
	if !m.IsRequest() {
		return nil
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(m.Params, &p)
	if string(p.Meta[protocol.MetaProtocolVersion]) != `"2026-07-28"` {
		return rpcError(m, protocol.CodeUnsupportedVersion, "Unsupported protocol version", `{"supported":["2026-07-28"],"requested":`+string(p.Meta[protocol.MetaProtocolVersion])+`}`)
	}
	if m.Method == "server/discover" {
		return jsonrpc.AppendResult(nil, m.ID, []byte(fakeDiscover))
	}
	return rpcError(m, -32601, "Method not found", "")
}

// TestConnectEraOnStdio follows the stdio "Backward Compatibility" rules:
// a DiscoverResult or a recognized modern error means modern; any other
// error, or silence, means legacy. No single error code decides.
func TestConnectEraOnStdio(t *testing.T) {
	legacyCodes := []int{-32601, -32602, -32600, -32603, -32000, -32002, 1}
	type want struct {
		era     protocol.Era
		version string
		name    string
		methods []string
		fail    FailKind
	}
	tests := []struct {
		name    string
		handle  func(m *jsonrpc.Message) []byte
		version string
		want    want
	}{
		{"DiscoverResult", modernStdio, "", want{protocol.EraModern, "2026-07-28", "fake-modern", []string{"server/discover"}, 0}},
		{"-32022 then retry", modernStdio, "2099-01-01", want{protocol.EraModern, "2026-07-28", "fake-modern", []string{"server/discover", "server/discover"}, 0}},
		{"silence", legacyStdio(func(*jsonrpc.Message) []byte { return nil }), "", want{protocol.EraLegacy, "2025-11-25", "fake-legacy", []string{"server/discover", "initialize", "notifications/initialized"}, 0}},
		{"-32022 naming only legacy versions", legacyStdio(func(m *jsonrpc.Message) []byte {
			return rpcError(m, protocol.CodeUnsupportedVersion, "no", `{"supported":["2025-06-18"],"requested":"2026-07-28"}`)
		}), "", want{protocol.EraLegacy, "2025-06-18", "fake-legacy", []string{"server/discover", "initialize", "notifications/initialized"}, 0}},
		{"-32020 is modern, not a reason to fall back", legacyStdio(func(m *jsonrpc.Message) []byte {
			return rpcError(m, protocol.CodeHeaderMismatch, "mismatch", "")
		}), "", want{fail: Incompatible, methods: []string{"server/discover"}}},
		{"a result that is not a DiscoverResult", legacyStdio(func(m *jsonrpc.Message) []byte {
			return jsonrpc.AppendResult(nil, m.ID, []byte(`{}`))
		}), "", want{protocol.EraLegacy, "2025-11-25", "fake-legacy", []string{"server/discover", "initialize", "notifications/initialized"}, 0}},
		{"silent to everything", func(*jsonrpc.Message) []byte { return nil }, "", want{fail: Unreachable, methods: []string{"server/discover", "initialize"}}},
		{"legacy client: initialize first", legacyStdio(func(m *jsonrpc.Message) []byte { panic("probed") }), "2025-03-26",
			want{protocol.EraLegacy, "2025-03-26", "fake-legacy", []string{"initialize", "notifications/initialized"}, 0}},
	}
	for _, code := range legacyCodes {
		tests = append(tests, struct {
			name    string
			handle  func(m *jsonrpc.Message) []byte
			version string
			want    want
		}{fmt.Sprintf("error %d", code), legacyStdio(func(m *jsonrpc.Message) []byte {
			return rpcError(m, code, "nope", "")
		}), "", want{protocol.EraLegacy, "2025-11-25", "fake-legacy", []string{"server/discover", "initialize", "notifications/initialized"}, 0}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// In a bubble: the fake is pipes in process, so the 300 ms
			// of "silence" are the bubble's, and synctest.Wait below
			// proves the fake read all the client sent.
			synctest.Test(t, func(t *testing.T) {
				conn, f := startFake(t, tt.handle)
				s, err := Connect(t.Context(), conn, &Options{Version: tt.version, Timeout: 300 * time.Millisecond})
				var got want
				if err != nil {
					var ce *ConnectError
					if !errors.As(err, &ce) {
						t.Fatalf("Connect: %v is not a *ConnectError", err)
					}
					got.fail = ce.Kind
				} else {
					got.era, got.version = s.Era(), s.Version()
					if s.Server.Info != nil {
						got.name = infoName(s.Server.Info)
					}
				}
				// A trailing notification may still be on its way to the
				// fake: once every goroutine of the bubble is blocked, the
				// fake has read all there is.
				synctest.Wait()
				got.methods = f.seen()
				if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
					t.Errorf("Connect (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestLegacySessionLists(t *testing.T) {
	conn, _ := startFake(t, legacyStdio(func(m *jsonrpc.Message) []byte { return rpcError(m, -32601, "no", "") }))
	s, err := Connect(t.Context(), conn, &Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := s.List(t.Context(), "tools/list", "tools")
	if err != nil || len(tools) != 1 {
		t.Fatalf("List = %s, %v; want one tool", tools, err)
	}
	if s.Server.Instructions != "legacy fake" || s.Latency <= 0 {
		t.Errorf("Server = %+v, Latency %v", s.Server, s.Latency)
	}
}

// TestConnectModernMcpkit probes mcpkit's own server over HTTP and over an
// in-process stdio pipe.
func TestConnectModernMcpkit(t *testing.T) {
	srv := demo.New(&mcp.ServerOptions{PageSize: 3})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	go func() {
		srv.ServeStdio(context.Background(), cr, sw)
		sw.Close()
	}()
	conns := map[string]Conn{
		"http":  DialHTTP(ts.URL, nil),
		"stdio": NewStreamConn(sr, cw),
	}
	for name, conn := range conns {
		t.Run(name, func(t *testing.T) {
			defer conn.Close()
			s, err := Connect(t.Context(), conn, &Options{ClientInfo: json.RawMessage(`{"name":"test","version":"1"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if s.Era() != protocol.EraModern || s.Version() != "2026-07-28" {
				t.Errorf("era %s at %s, want modern at 2026-07-28", s.Era(), s.Version())
			}
			if infoName(s.Server.Info) != demo.Name || s.Server.CacheScope != "public" || s.Server.TTLMs == nil || *s.Server.TTLMs != 3600000 {
				t.Errorf("Server = %+v", s.Server)
			}
			tools, err := s.List(t.Context(), "tools/list", "tools")
			if err != nil {
				t.Fatal(err)
			}
			if want := demoToolCount(t); len(tools) != want || want <= 3 {
				t.Errorf("listed %d tools over pages of 3, want all %d", len(tools), want)
			}
			// A call carries _meta and, on HTTP, the MCP headers.
			res, err := s.Result(t.Context(), "tools/call", map[string]any{"name": "echo", "arguments": map[string]string{"text": "hi"}})
			if err != nil || !strings.Contains(string(res), `"text":"hi"`) {
				t.Errorf("tools/call echo = %s, %v", res, err)
			}
		})
	}
}

// legacyHTTP is a 2025-11-25 Streamable HTTP server with sessions.
type legacyHTTP struct {
	mu      sync.Mutex
	deleted bool
	calls   []string
}

func (l *legacyHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Method == http.MethodDelete {
		l.deleted = r.Header.Get("Mcp-Session-Id") == "sess-1"
		return
	}
	body, _ := io.ReadAll(r.Body)
	m, _ := jsonrpc.Decode(body)
	l.calls = append(l.calls, r.Method+" "+m.Method+" "+r.Header.Get("Mcp-Session-Id")+" "+r.Header.Get("Mcp-Protocol-Version"))
	w.Header().Set("Content-Type", "application/json")
	switch {
	case m.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", "sess-1")
		w.Write(jsonrpc.AppendResult(nil, m.ID, fmt.Appendf(nil, fakeInit, "2025-11-25")))
	case r.Header.Get("Mcp-Session-Id") != "sess-1":
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`))
	case m.IsNotification():
		w.WriteHeader(http.StatusAccepted)
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[]}`)))
	}
}

// sseServer is a 2024-11-05 HTTP+SSE server: GET /sse streams, POST
// /messages answers 202 and sends the response on the stream.
type sseServer struct {
	out chan []byte
}

func (s *sseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/sse" && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": hello\n\nevent: endpoint\ndata: /messages?sid=1\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case b := <-s.out:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case r.URL.Path == "/messages" && r.Method == http.MethodPost && r.URL.Query().Get("sid") == "1":
		body, _ := io.ReadAll(r.Body)
		m, _ := jsonrpc.Decode(body)
		w.WriteHeader(http.StatusAccepted)
		switch {
		case m.Method == "initialize":
			s.out <- jsonrpc.AppendResult(nil, m.ID, fmt.Appendf(nil, fakeInit, "2024-11-05"))
			// A server request the client must answer, then a notification.
			s.out <- []byte(`{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`)
		case m.IsRequest():
			s.out <- jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[{"name":"a"},{"name":"b"}]}`))
		}
	default:
		http.Error(w, "not here", http.StatusMethodNotAllowed)
	}
}

func TestConnectEraOnHTTP(t *testing.T) {
	htmlSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>hello</html>"))
	}))
	defer htmlSrv.Close()
	lh := &legacyHTTP{}
	legacySrv := httptest.NewServer(lh)
	defer legacySrv.Close()
	sseSrv := httptest.NewServer(&sseServer{out: make(chan []byte, 8)})
	defer sseSrv.Close()
	// A port with nothing listening.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()

	tests := []struct {
		name      string
		url       string
		era       protocol.Era
		version   string
		transport string
		fail      FailKind
	}{
		{"legacy Streamable HTTP", legacySrv.URL, protocol.EraLegacy, "2025-11-25", protocol.TransportStreamableHTTP, 0},
		{"HTTP+SSE", sseSrv.URL + "/sse", protocol.EraLegacy, "2024-11-05", protocol.TransportSSE, 0},
		{"not MCP", htmlSrv.URL, 0, "", "", NotMCP},
		{"unreachable", deadURL, 0, "", "", Unreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := DialHTTP(tt.url, nil)
			s, err := Connect(t.Context(), conn, &Options{Timeout: 2 * time.Second})
			if tt.fail != 0 {
				var ce *ConnectError
				if !errors.As(err, &ce) || ce.Kind != tt.fail {
					t.Fatalf("Connect = %v, want a %v failure", err, tt.fail)
				}
				conn.Close()
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Era() != tt.era || s.Version() != tt.version || s.Conn().Transport() != tt.transport {
				t.Errorf("got %s %s over %s, want %s %s over %s", s.Era(), s.Version(), s.Conn().Transport(), tt.era, tt.version, tt.transport)
			}
			if _, err := s.List(t.Context(), "tools/list", "tools"); err != nil {
				t.Errorf("tools/list on the legacy session: %v", err)
			}
		})
	}
	// The legacy session carried its id and version, and ended with DELETE.
	lh.mu.Lock()
	defer lh.mu.Unlock()
	want := []string{
		"POST server/discover  2026-07-28",
		"POST initialize  ",
		"POST notifications/initialized sess-1 2025-11-25",
		"POST tools/list sess-1 2025-11-25",
	}
	if diff := cmp.Diff(want, lh.calls); diff != "" {
		t.Errorf("legacy server saw (-want +got):\n%s", diff)
	}
	if !lh.deleted {
		t.Errorf("the legacy session was not ended with DELETE")
	}
}

// A modern HTTP server's 400 with -32022 is a modern answer: retry, do not
// fall back.
func TestConnectRetriesOnUnsupportedVersionOverHTTP(t *testing.T) {
	ts := httptest.NewServer(demo.New(nil))
	defer ts.Close()
	conn := DialHTTP(ts.URL, nil)
	defer conn.Close()
	s, err := Connect(t.Context(), conn, &Options{Version: "2099-01-01"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Steps) != 2 || s.Version() != "2026-07-28" || s.Era() != protocol.EraModern {
		t.Errorf("steps %+v, version %s, era %s; want a retry at 2026-07-28", s.Steps, s.Version(), s.Era())
	}
}

func TestStartCommandFailures(t *testing.T) {
	if _, err := StartCommand([]string{"/nonexistent/mcp-server"}, nil); !errors.As(err, new(*TransportError)) {
		t.Errorf("StartCommand of a missing binary = %v, want a *TransportError", err)
	}
	if _, err := StartCommand(nil, nil); err == nil {
		t.Errorf("StartCommand(nil) = nil error")
	}
}

// demoToolCount counts the demo server's tools on one unpaginated page.
func demoToolCount(t *testing.T) int {
	t.Helper()
	ts := httptest.NewServer(demo.New(&mcp.ServerOptions{PageSize: 1000}))
	defer ts.Close()
	conn := DialHTTP(ts.URL, nil)
	defer conn.Close()
	res, err := NewModernSession(conn, "2026-07-28", nil).Result(t.Context(), "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor string            `json:"nextCursor"`
	}
	if err := json.Unmarshal(res, &page); err != nil || page.NextCursor != "" {
		t.Fatalf("one page of tools: %v, next cursor %q", err, page.NextCursor)
	}
	return len(page.Tools)
}

// infoName is the name in an encoded serverInfo, or "".
func infoName(raw json.RawMessage) string {
	var info struct{ Name string }
	json.Unmarshal(raw, &info)
	return info.Name
}
