package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// Progress, logging and cancellation as a client sees them on each
// transport, for tool, prompt and resource handlers alike.

// chattyServer has a tool, a prompt and a resource that each report
// progress twice and log at info and debug level, and a tool that waits
// until it is cancelled.
func chattyServer(started chan<- struct{}, cancelled chan<- error) *Server {
	s := NewServer(nil)
	chat := func(r *requestBase) {
		r.Progress(1, 2, "half")
		r.Log(LevelDebug, "chatty", "debug detail")
		r.Log(LevelInfo, "chatty", map[string]any{"step": 2})
		r.Progress(1, 2, "not increasing: dropped")
		r.Progress(2, 2, "")
	}
	s.AddRawTool(&Tool{Name: "chatty", Description: "d", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) {
			chat(&req.requestBase)
			return &CallToolResult{Content: []Content{&TextContent{Text: "done"}}}, nil
		})
	s.AddPrompt(&Prompt{Name: "chatty", Description: "d"},
		func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) {
			chat(&req.requestBase)
			return &GetPromptResult{Messages: []PromptMessage{{Role: RoleUser, Content: &TextContent{Text: "done"}}}}, nil
		})
	s.AddResource(&Resource{URI: "test://chatty", Name: "chatty"},
		func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
			chat(&req.requestBase)
			return &ReadResourceResult{Contents: []*ResourceContents{{Text: "done"}}}, nil
		})
	s.AddRawTool(&Tool{Name: "wait", Description: "d", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				cancelled <- ctx.Err()
				return nil, ctx.Err()
			case <-time.After(10 * time.Second):
				cancelled <- nil
				return &CallToolResult{}, nil
			}
		})
	s.AddRawTool(&Tool{Name: "slow", Description: "d", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) {
			req.Progress(1, 0, "")
			time.Sleep(150 * time.Millisecond)
			return &CallToolResult{}, nil
		})
	return s
}

// wantChat is what a chatty handler sends when the request asked for
// progress (token "tok") and info-level logs.
var wantChat = []map[string]any{
	{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": "tok", "progress": 1.0, "total": 2.0, "message": "half"}},
	{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "logger": "chatty", "data": map[string]any{"step": 2.0}}},
	{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": "tok", "progress": 2.0, "total": 2.0}},
}

// post sends one request over HTTP and returns the response's content type
// and its messages: the one JSON body, or every SSE data line.
func post(t *testing.T, ctx context.Context, url, method, name, params, extraMeta string) (string, []map[string]any, string) {
	t.Helper()
	resp := mcpwire.Post(t, ctx, url, mcpwire.Request{Method: method, Name: name, Params: params, Meta: extraMeta})
	return posted(t, resp)
}

// postInMemory is post served by h in this goroutine, through a
// ResponseRecorder: no network, so that it can run in a synctest bubble.
func postInMemory(t *testing.T, h http.Handler, method, name, params, extraMeta string) (string, []map[string]any, string) {
	t.Helper()
	return posted(t, mcpwire.Serve(t, h, mcpwire.Request{Method: method, Name: name, Params: params, Meta: extraMeta}))
}

// posted returns the content type of resp and its messages decoded.
func posted(t *testing.T, resp *mcpwire.Response) (string, []map[string]any, string) {
	t.Helper()
	var msgs []map[string]any
	for _, raw := range resp.Messages {
		var m map[string]any
		mustUnmarshal(t, raw, &m)
		msgs = append(msgs, m)
	}
	return resp.Header.Get("Content-Type"), msgs, string(resp.Raw)
}

func TestNotificationsOverSSE(t *testing.T) {
	srv := httptest.NewServer(chattyServer(nil, nil))
	defer srv.Close()
	calls := []struct{ method, name, params string }{
		{"tools/call", "chatty", `{"name":"chatty"}`},
		{"prompts/get", "chatty", `{"name":"chatty"}`},
		{"resources/read", "test://chatty", `{"uri":"test://chatty"}`},
	}
	for _, c := range calls {
		t.Run(c.method, func(t *testing.T) {
			ct, msgs, _ := post(t, context.Background(), srv.URL, c.method, c.name, c.params,
				`"progressToken":"tok","io.modelcontextprotocol/logLevel":"info"`)
			if ct != "text/event-stream" {
				t.Fatalf("content type %q, want text/event-stream", ct)
			}
			if len(msgs) != len(wantChat)+1 {
				t.Fatalf("%d messages, want %d notifications then the response: %v", len(msgs), len(wantChat)+1, msgs)
			}
			if diff := cmp.Diff(wantChat, msgs[:len(wantChat)]); diff != "" {
				t.Errorf("notifications (-want +got):\n%s", diff)
			}
			last := msgs[len(msgs)-1]
			if last["id"] != 1.0 || last["result"] == nil {
				t.Errorf("last event %v is not the response", last)
			}
		})
		t.Run(c.method+" quiet", func(t *testing.T) {
			// Without a progress token or a log level nothing is sent
			// before the response, which stays plain JSON.
			ct, msgs, _ := post(t, context.Background(), srv.URL, c.method, c.name, c.params, "")
			if ct != "application/json" || len(msgs) != 1 || msgs[0]["result"] == nil {
				t.Errorf("got %q %v, want one JSON result", ct, msgs)
			}
		})
	}
}

func TestNotificationsOnStdio(t *testing.T) {
	s := chattyServer(nil, nil)
	in := `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":` + withMeta(`{"name":"chatty"}`, `"progressToken":"tok","io.modelcontextprotocol/logLevel":"info"`) + "}\n"
	var out strings.Builder
	if err := s.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(wantChat)+1 {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(wantChat)+1, out.String())
	}
	var got []map[string]any
	for _, l := range lines[:len(wantChat)] {
		var m map[string]any
		mustUnmarshal(t, []byte(l), &m)
		got = append(got, m)
	}
	if diff := cmp.Diff(wantChat, got); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
	if !strings.Contains(lines[len(lines)-1], `"id":1,"result"`) {
		t.Errorf("last line is not the response: %s", lines[len(lines)-1])
	}
}

func TestCancellationHTTP(t *testing.T) {
	started, cancelled := make(chan struct{}, 1), make(chan error, 1)
	srv := httptest.NewServer(chattyServer(started, cancelled))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, err := mcpwire.Request{Method: "tools/call", Params: `{"name":"wait"}`}.NewRequest(ctx, srv.URL)
		if err != nil {
			t.Error(err)
			return
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("the request completed with status %d; want it cancelled", resp.StatusCode)
		}
	}()
	<-started
	cancel() // the client goes away: closing the connection is cancellation
	select {
	case err := <-cancelled:
		if err == nil {
			t.Error("the handler finished without seeing cancellation")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not cancelled within 5s of the client going away")
	}
	<-done
}

func TestCancellationStdio(t *testing.T) {
	started, cancelled := make(chan struct{}, 1), make(chan error, 1)
	s := chattyServer(started, cancelled)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	lines := bufio.NewScanner(outR)

	write := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":` + withMeta(`{"name":"wait"}`, "") + `}`)
	<-started
	write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"user pressed stop"}}`)
	select {
	case err := <-cancelled:
		if err == nil {
			t.Error("the handler finished without seeing cancellation")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("notifications/cancelled did not reach the handler's context")
	}
	// The next message out is the answer to the next request: nothing is
	// sent for the cancelled one.
	write(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":` + withMeta(`{"name":"chatty"}`, "") + `}`)
	if !lines.Scan() {
		t.Fatal("no response to the second request")
	}
	var resp struct {
		ID any `json:"id"`
	}
	mustUnmarshal(t, lines.Bytes(), &resp)
	if resp.ID != "b" {
		t.Errorf("got a message for id %v (%s), want only the response to b", resp.ID, lines.Text())
	}
	inW.Close()
	if err := <-served; err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
	if lines.Scan() {
		t.Errorf("unexpected output after the last response: %s", lines.Text())
	}
}

// TestSSEKeepAlive runs in a synctest bubble: the slow tool's 150 ms and
// the 20 ms keep-alive interval are the bubble's clock, not the machine's.
func TestSSEKeepAlive(t *testing.T) { synctest.Test(t, testSSEKeepAlive) }

func testSSEKeepAlive(t *testing.T) {
	s := chattyServer(nil, nil)
	s.keepAlive = 20 * time.Millisecond // as ServerOptions.HTTP.KeepAlive sets it
	ct, msgs, raw := postInMemory(t, s, "tools/call", "slow", `{"name":"slow"}`, `"progressToken":7`)
	if ct != "text/event-stream" || len(msgs) != 2 {
		t.Fatalf("got %q with %d messages, want an SSE stream with progress and the response", ct, len(msgs))
	}
	if !strings.Contains(raw, "\n:\n\n") && !strings.HasPrefix(raw, ":\n\n") {
		t.Errorf("no keep-alive comment in a 150 ms stream with a 20 ms interval:\n%s", raw)
	}
	for _, m := range msgs {
		if _, err := json.Marshal(m); err != nil {
			t.Error(err)
		}
	}
}
