package mcp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// One Server serves both eras on the same stdio connection's life: a
// request with modern _meta is served statelessly, and an initialize
// switches the connection to the legacy era, whose results follow the
// 2025-11-25 schema. Handlers see which era a request speaks in
// req.Info.Era.
func Example_dualEra() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "dual", Version: "1.0.0"}})
	mcp.AddTool(s, &mcp.Tool{Name: "era", Description: "Tells which era the request speaks."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return req.Info.Era.String() + " " + req.Info.ProtocolVersion + " " + req.Info.ClientInfo.Name, nil
		})
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"era","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"modern-client","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}
{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"legacy-client","version":"1"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"era"}}
`)
	var out strings.Builder
	s.ServeStdio(context.Background(), in, &out)
	// Requests are served concurrently: print the answers in id order.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"modern 2026-07-28 modern-client"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"dual","version":"1.0.0"}}}}
	// {"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-06-18","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":{"name":"dual","version":"1.0.0"}}}
	// {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"legacy 2025-06-18 legacy-client"}]}}
}

// A legacy client on Streamable HTTP opens a session with initialize and
// names it in the Mcp-Session-Id header of every later request.
func Example_legacySession() {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "legacy-demo", Version: "1.0.0"}})
	mcp.AddTool(s, &mcp.Tool{Name: "hello", Description: "Says hello."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "hello", nil })
	post := func(session, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			r.Header.Set("Mcp-Session-Id", session)
			r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
	w := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	session := w.Header().Get("Mcp-Session-Id")
	fmt.Println(w.Code, session != "", w.Body.String())
	fmt.Println(post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Code)
	fmt.Println(post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello"}}`).Body.String())
	fmt.Println(post("no-such-session", `{"jsonrpc":"2.0","id":3,"method":"ping"}`).Code)
	// Output:
	// 200 true {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":{"name":"legacy-demo","version":"1.0.0"}}}
	// 202
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello"}]}}
	// 404
}

// SupportedVersions lists the modern versions, then the legacy ones;
// ModernOnly drops the legacy era.
func ExampleServer_SupportedVersions() {
	fmt.Println(mcp.NewServer(nil).SupportedVersions())
	fmt.Println(mcp.NewServer(&mcp.ServerOptions{Legacy: mcp.LegacyOptions{Disable: true}}).SupportedVersions())
	// Output:
	// [2026-07-28 2025-11-25 2025-06-18 2025-03-26 2024-11-05]
	// [2026-07-28]
}

// Legacy HTTP sessions live in a SessionStore; the in-memory one expires
// sessions that stay idle.
func ExampleNewMemorySessionStore() {
	store := mcp.NewMemorySessionStore(30 * time.Minute)
	s := mcp.NewServer(&mcp.ServerOptions{Legacy: mcp.LegacyOptions{SessionStore: store, SessionIdleTimeout: 30 * time.Minute}})
	_ = s

	ctx := context.Background()
	store.Store(ctx, "abc", &mcp.SessionState{ProtocolVersion: "2025-11-25"})
	st, err := store.Load(ctx, "abc")
	fmt.Println(st.ProtocolVersion, err)
	store.Delete(ctx, "abc")
	_, err = store.Load(ctx, "abc")
	fmt.Println(err)
	// Output:
	// 2025-11-25 <nil>
	// mcp: session not found
}

// A long-running tool can ask a 2025-11-25 client on Streamable HTTP to
// poll: the POST's SSE stream gets a priming event with a retry delay and
// the connection ends; the client resumes with GET and Last-Event-ID and
// receives the result there.
func ExampleLegacyRequest_CloseSSEStream() {
	s := mcp.NewServer(nil)
	done := make(chan struct{})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Frees the connection while it works."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.Legacy().CloseSSEStream()
			defer close(done)
			return "done", nil
		})
	send := func(method, session, lastEventID, body string) string {
		r := httptest.NewRequest(method, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			r.Header.Set("Mcp-Session-Id", session)
		}
		if lastEventID != "" {
			r.Header.Set("Last-Event-ID", lastEventID)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if method == "POST" && session == "" {
			return w.Header().Get("Mcp-Session-Id")
		}
		return w.Body.String()
	}
	session := send("POST", "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	// (The priming event's "data: " line is printed without its trailing
	// space.)
	fmt.Print(strings.ReplaceAll(send("POST", session, "", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`), " \n", "\n"))
	<-done
	fmt.Print(send("GET", session, "1_0", ""))
	// Output:
	// id: 1_0
	// retry: 1000
	// data:
	//
	// event: message
	// id: 1_1
	// data: {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}
}
