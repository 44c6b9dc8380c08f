package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// legacyClient is a minimal 2025-11-25 Streamable HTTP client for tests.
type legacyClient struct {
	t       *testing.T
	url     string
	session string
}

func newLegacyHTTP(t *testing.T, s *Server) *legacyClient {
	t.Helper()
	return newLegacyHTTPCaps(t, s, `{"roots":{},"elicitation":{}}`)
}

// newLegacyHTTPCaps opens a session that declares the capabilities caps.
func newLegacyHTTPCaps(t *testing.T, s *Server, caps string) *legacyClient {
	t.Helper()
	return newLegacyHTTPHandler(t, s, caps)
}

// newLegacyHTTPHandler opens a session, declaring caps, with a server
// mounted through h (the Server itself, or a wrapper of it).
func newLegacyHTTPHandler(t *testing.T, h http.Handler, caps string) *legacyClient {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	c := &legacyClient{t: t, url: ts.URL}
	resp := c.post(string(mcpwire.Initialize("", caps).Bytes()))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.session = resp.Header.Get("Mcp-Session-Id")
	if c.session == "" {
		t.Fatalf("initialize: no session id (status %d)", resp.StatusCode)
	}
	return c
}

func (c *legacyClient) do(ctx context.Context, method, body string, hdr ...string) *http.Response {
	c.t.Helper()
	h := http.Header{}
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Set(hdr[i], hdr[i+1])
	}
	r := mcpwire.Request{Legacy: true, Session: c.session, Body: []byte(body), HTTPMethod: method, Header: h}
	req, err := r.NewRequest(ctx, c.url)
	if err != nil {
		c.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func (c *legacyClient) post(body string) *http.Response {
	return c.do(context.Background(), http.MethodPost, body)
}

// postAccepted posts a notification or response and expects 202.
func (c *legacyClient) postAccepted(body string) {
	c.t.Helper()
	resp := c.post(body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		// Errorf, not Fatalf: tests call this on their own goroutines too.
		c.t.Errorf("POST %s: status %d, want 202", body, resp.StatusCode)
	}
}

// sseEvent is one event read by sseReader.
type testEvent struct {
	id, data string
	retry    bool
}

// readEvents reads SSE events from r into a channel until r ends.
func readEvents(r io.Reader) <-chan testEvent {
	ch := make(chan testEvent, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		var ev testEvent
		seen := false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if seen {
					ch <- ev
				}
				ev, seen = testEvent{}, false
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "id: "):
				ev.id, seen = line[4:], true
			case strings.HasPrefix(line, "retry: "):
				ev.retry, seen = true, true
			case strings.HasPrefix(line, "data: "):
				ev.data, seen = line[6:], true
			case strings.HasPrefix(line, "data:"):
				seen = true
			}
		}
	}()
	return ch
}

func next(t *testing.T, ch <-chan testEvent) testEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("stream ended")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return testEvent{}
}

// message decodes an event's JSON-RPC message.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func decodeEvent(t *testing.T, ev testEvent) rpcMessage {
	t.Helper()
	var m rpcMessage
	if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
		t.Fatalf("event %q: %v", ev.data, err)
	}
	return m
}

// askTool registers a tool that puts one input request to the client
// through the legacy bridge and answers with the result or the error.
func askTool(s *Server, method, params string) {
	s.AddRawTool(&Tool{Name: "ask", Description: "Asks the client.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) {
			answers, err := req.x.askClient(ctx, []legacyInput{{key: "k", method: method, params: []byte(params)}})
			if err != nil {
				return nil, err
			}
			return &CallToolResult{Content: []Content{&TextContent{Text: string(answers["k"])}}}, nil
		})
}

// TestLegacyServerRequestHTTP drives a server-to-client request over the
// POST's SSE stream: the client reads the request, posts its response, and
// the tool's result carries the answer; an error answer and a timeout
// become tool errors, and the timeout is announced with
// notifications/cancelled.
func TestLegacyServerRequestHTTP(t *testing.T) {
	tests := []struct {
		name    string
		answer  func(id json.RawMessage) string // "" = do not answer
		want    string
		isError bool
	}{
		{
			name: "result",
			answer: func(id json.RawMessage) string {
				return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"roots":[{"uri":"file:///r"}]}}`
			},
			want: `{"roots":[{"uri":"file:///r"}]}`,
		},
		{
			name: "error",
			answer: func(id json.RawMessage) string {
				return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-1,"message":"user said no"}}`
			},
			want:    "the client answered roots/list with error -1: user said no",
			isError: true,
		},
		{
			name:    "timeout",
			want:    "the client did not answer roots/list: no answer within 1s",
			isError: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(&ServerOptions{Legacy: LegacyOptions{ClientRequestTimeout: time.Second}}) // answers come well within it, even under -race on 2 busy cores
			askTool(s, "roots/list", "{}")
			c := newLegacyHTTP(t, s)
			resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`)
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("Content-Type %q, want text/event-stream", ct)
			}
			events := readEvents(resp.Body)
			if ev := next(t, events); ev.data != "" || ev.id == "" || !ev.retry {
				t.Fatalf("first event %+v, want a priming event", ev)
			}
			req := decodeEvent(t, next(t, events))
			if req.Method != "roots/list" || len(req.ID) == 0 {
				t.Fatalf("got %+v, want a roots/list request", req)
			}
			if tt.answer != nil {
				c.postAccepted(tt.answer(req.ID))
			} else {
				cancel := decodeEvent(t, next(t, events))
				if cancel.Method != "notifications/cancelled" || !strings.Contains(string(cancel.Params), `"requestId":`+string(req.ID)) {
					t.Fatalf("got %+v, want notifications/cancelled for %s", cancel, req.ID)
				}
			}
			final := decodeEvent(t, next(t, events))
			var res struct {
				Content []struct{ Text string }
				IsError bool
			}
			if err := json.Unmarshal(final.Result, &res); err != nil || len(res.Content) != 1 {
				t.Fatalf("final %s: %v", final.Result, err)
			}
			if diff := cmp.Diff(tt.want, res.Content[0].Text); diff != "" || res.IsError != tt.isError {
				t.Errorf("tool result (-want +got):\n%s\nisError %v, want %v", diff, res.IsError, tt.isError)
			}
		})
	}
}

// TestLegacyServerRequestStdio drives a server-to-client request over a
// stdio connection: the request is a line, the client's response line is
// routed back to the waiting handler.
func TestLegacyServerRequestStdio(t *testing.T) {
	s := NewServer(nil)
	askTool(s, "elicitation/create", `{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	lines := bufio.NewScanner(outR)
	read := func() rpcMessage {
		t.Helper()
		if !lines.Scan() {
			t.Fatal("no line")
		}
		var m rpcMessage
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	write := func(line string) { io.WriteString(inW, line+"\n") }
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := read(); !strings.Contains(string(m.Result), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %s", m.Result)
	}
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}}`)
	req := read()
	if req.Method != "elicitation/create" {
		t.Fatalf("got %+v, want elicitation/create", req)
	}
	write(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"action":"accept","content":{"name":"Ada"}}}`)
	final := read()
	if got, want := string(final.Result), `{"content":[{"type":"text","text":"{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}"}]}`; got != want {
		t.Errorf("result %s, want %s", got, want)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestLegacyStdioEOFFailsPendingRequest: when the client's input ends, a
// handler waiting for the client's answer fails at once instead of waiting
// for the timeout.
func TestLegacyStdioEOFFailsPendingRequest(t *testing.T) {
	s := NewServer(&ServerOptions{Legacy: LegacyOptions{ClientRequestTimeout: time.Hour}})
	askTool(s, "roots/list", "{}")
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}}
`
	var out strings.Builder
	start := time.Now()
	if err := s.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("ServeStdio took %v", d)
	}
	if !strings.Contains(out.String(), `"isError":true`) || !strings.Contains(out.String(), "the session has ended") {
		t.Errorf("output lacks the tool error:\n%s", out.String())
	}
}

// TestLegacyCancel: notifications/cancelled posted to the session cancels
// the named request's handler.
func TestLegacyCancel(t *testing.T) {
	s := NewServer(nil)
	started, cancelled := make(chan struct{}), make(chan struct{})
	AddTool(s, &Tool{Name: "block", Description: "Blocks until cancelled."},
		func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return "", ctx.Err()
		})
	c := newLegacyHTTP(t, s)
	go func() {
		resp := c.post(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"block"}}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	<-started
	c.postAccepted(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b","reason":"test"}}`)
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler was not cancelled")
	}
}

// TestLegacyDisconnectIsNotCancel: a client that loses the POST connection
// mid-call does not cancel the call (2025-11-25); it resumes the stream
// with Last-Event-ID and gets the rest, result included.
func TestLegacyDisconnectIsNotCancel(t *testing.T) {
	s := NewServer(nil)
	release := make(chan struct{})
	AddTool(s, &Tool{Name: "slow", Description: "Reports progress, waits, answers."},
		func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
			req.Progress(1, 2, "first")
			select {
			case <-release:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			req.Progress(2, 2, "second")
			return "survived", nil
		})
	// The POST of the call signals when the server is done with it: the
	// server noticed that its client went away.
	posted := make(chan struct{}, 1)
	c := newLegacyHTTPHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r)
		if r.Header.Get("X-Test-Call") != "" {
			posted <- struct{}{}
		}
	}), `{"roots":{},"elicitation":{}}`)
	ctx, drop := context.WithCancel(context.Background())
	resp := c.do(ctx, http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}`, "X-Test-Call", "1")
	events := readEvents(resp.Body)
	next(t, events) // priming
	first := next(t, events)
	drop()
	resp.Body.Close()
	select {
	case <-posted:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not notice, in 10 s, that the client of the call went away")
	}
	close(release)
	get := c.do(context.Background(), http.MethodGet, "", "Last-Event-ID", first.id)
	defer get.Body.Close()
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET: status %d", get.StatusCode)
	}
	rest := readEvents(get.Body)
	var got []string
	for ev := range rest {
		m := decodeEvent(t, ev)
		got = append(got, m.Method+string(m.Result))
	}
	want := []string{"notifications/progress", `{"content":[{"type":"text","text":"survived"}]}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resumed stream (-want +got):\n%s", diff)
	}
}

// TestLegacyListChanged: registering tools or prompts sends
// notifications/tools/list_changed or prompts/list_changed on the session's
// GET stream, as they are published (see TestChangesCoalesce).
func TestLegacyListChanged(t *testing.T) {
	s := NewServer(nil)
	longWindow(t, s)
	AddTool(s, &Tool{Name: "a", Description: "A."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
	c := newLegacyHTTP(t, s)
	get := c.do(context.Background(), http.MethodGet, "")
	defer get.Body.Close()
	events := readEvents(get.Body)
	if ev := next(t, events); ev.data != "" || ev.id != "0_0" {
		t.Fatalf("first event %+v, want priming 0_0", ev)
	}
	// A registration is announced at once; those after it, within the
	// window, together when the window ends: once per family.
	AddTool(s, &Tool{Name: "b", Description: "More."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
	if m := decodeEvent(t, next(t, events)); m.Method != "notifications/tools/list_changed" {
		t.Fatalf("got %+v, want notifications/tools/list_changed", m)
	}
	for _, name := range []string{"c", "d"} {
		AddTool(s, &Tool{Name: name, Description: "More."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
	}
	s.AddPrompt(&Prompt{Name: "p", Description: "P."}, func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) { return nil, nil })
	endWindow(s)
	var got []string
	for range 2 {
		got = append(got, decodeEvent(t, next(t, events)).Method)
	}
	slices.Sort(got) // each change is broadcast on its own goroutine
	want := []string{"notifications/prompts/list_changed", "notifications/tools/list_changed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("announced when the window ended (-want +got):\n%s", diff)
	}
}

// TestLegacyMaxSessions: initialize past MaxSessions gets 503, and ending
// a session makes room.
func TestLegacyMaxSessions(t *testing.T) {
	s := NewServer(&ServerOptions{Legacy: LegacyOptions{MaxSessions: 1}})
	c := newLegacyHTTP(t, s)
	other := &legacyClient{t: t, url: c.url}
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	resp := other.post(init)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second session: status %d, want 503", resp.StatusCode)
	}
	del := c.do(context.Background(), http.MethodDelete, "")
	del.Body.Close()
	resp = other.post(init)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("after DELETE: status %d, session %q", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
	}
}

// TestMemorySessionStore: Load renews, an idle session expires, Delete
// ends it.
func TestMemorySessionStore(t *testing.T) {
	// synctest's clock makes the idle timing exact, however loaded the
	// machine running the test is.
	synctest.Test(t, testMemorySessionStore)
}

func testMemorySessionStore(t *testing.T) {
	ctx := context.Background()
	st := NewMemorySessionStore(80 * time.Millisecond)
	want := &SessionState{ProtocolVersion: "2025-11-25"}
	st.Store(ctx, "a", want)
	st.Store(ctx, "b", want)
	for range 4 {
		time.Sleep(30 * time.Millisecond)
		if got, err := st.Load(ctx, "a"); err != nil || got != want {
			t.Fatalf("Load a: %v, %v", got, err)
		}
	}
	if _, err := st.Load(ctx, "b"); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("Load b after idling: %v, want ErrSessionNotFound", err)
	}
	st.Delete(ctx, "a")
	if _, err := st.Load(ctx, "a"); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("Load a after Delete: %v, want ErrSessionNotFound", err)
	}
}

func TestWithInputResponses(t *testing.T) {
	tests := []struct {
		params, state, want string
	}{
		{`{"name":"t","arguments":{}}`, "", `{"name":"t","arguments":{},"inputResponses":{"a":{"x":1},"b":{}}}`},
		{`{"name":"t","inputResponses":{"old":{}},"requestState":"old"}`, "s1", `{"name":"t","inputResponses":{"a":{"x":1},"b":{}},"requestState":"s1"}`},
		{``, "", `{"inputResponses":{"a":{"x":1},"b":{}}}`},
	}
	for _, tt := range tests {
		got := string(withInputResponses([]byte(tt.params), map[string]json.RawMessage{"b": json.RawMessage(`{}`), "a": json.RawMessage(`{"x":1}`)}, tt.state))
		if got != tt.want {
			t.Errorf("withInputResponses(%s, %q) = %s, want %s", tt.params, tt.state, got, tt.want)
		}
	}
}

func TestAppendLegacyResult(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"resultType":"complete","ttlMs":3600000,"cacheScope":"public","tools":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"}}}`, `{"tools":[]}`},
		{`{"resultType":"complete","tools":[],"_meta":{"io.modelcontextprotocol/serverInfo":{},"k":1}}`, `{"tools":[],"_meta":{"k":1}}`},
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{}},"a":1}`, `{"a":1}`},
		{`{}`, `{}`},
	}
	for _, tt := range tests {
		if got := string(appendLegacyResult(nil, []byte(tt.in))); got != tt.want {
			t.Errorf("appendLegacyResult(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// callAnswering posts a tools/call in the session and answers every request
// the server sends on the stream with answer(method, params) (a complete
// JSON-RPC response given the request id), until the call's response; it
// returns the result and the methods the server asked, in order.
func (c *legacyClient) callAnswering(t *testing.T, body string, answer func(id json.RawMessage, method string, params json.RawMessage) string) (json.RawMessage, []string) {
	t.Helper()
	resp := c.post(body)
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m rpcMessage
		json.NewDecoder(resp.Body).Decode(&m)
		return m.Result, nil
	}
	events := readEvents(resp.Body)
	var asked []string
	for {
		ev := next(t, events)
		if ev.data == "" {
			continue // priming
		}
		m := decodeEvent(t, ev)
		switch {
		case m.Method != "" && len(m.ID) > 0:
			asked = append(asked, m.Method)
			go c.postAccepted(answer(m.ID, m.Method, m.Params))
		case m.Method != "":
			// a notification
		default:
			if m.Error != nil {
				t.Fatalf("error response: %s", m.Error)
			}
			return m.Result, asked
		}
	}
}

// TestLegacyInputBridge: handlers written against the input API (Elicit,
// Sample, ListRoots) serve a legacy client: the library sends the client
// real requests, all of a round at once, runs the handler again with the
// answers, round after round, and turns a client's error into an isError
// result.
func TestLegacyInputBridge(t *testing.T) {
	s := NewServer(nil)
	form := json.RawMessage(`{"type":"object","properties":{"v":{"type":"string"}},"required":["v"]}`)
	ask := func(req *ToolRequest, key string) (string, error) {
		r, err := req.Elicit(key, &ElicitParams{Message: "Value for " + key + "?", RequestedSchema: form})
		if err != nil {
			return "", err
		}
		if !r.Accepted() {
			return string(r.Action), nil
		}
		return r.Content["v"].(string), nil
	}
	AddTool(s, &Tool{Name: "three", Description: "Asks for three inputs in one round."},
		func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
			v, err1 := ask(req, "v")
			m, err2 := req.Sample("m", &CreateMessageParams{Messages: []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "hi"}}}}, MaxTokens: 5})
			r, err3 := req.ListRoots("r")
			if err := errors.Join(err1, err2, err3); err != nil {
				return "", err
			}
			return v + " " + m.Text() + " " + r.Roots[0].URI, nil
		})
	AddTool(s, &Tool{Name: "steps", Description: "Asks twice, one after the other."},
		func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
			a, err := ask(req, "first")
			if err != nil {
				return "", err
			}
			b, err := ask(req, "second")
			if err != nil {
				return "", err
			}
			return a + "+" + b, nil
		})
	c := newLegacyHTTP(t, s)
	c.postAccepted(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	tests := []struct {
		name      string
		tool      string
		extra     string // more params members
		answer    func(id json.RawMessage, method string, params json.RawMessage) string
		wantText  string
		wantAsked []string
		isError   bool
	}{
		{
			name: "steps",
			tool: "steps",
			answer: func(id json.RawMessage, method string, params json.RawMessage) string {
				v := "one"
				if strings.Contains(string(params), "second") {
					v = "two"
				}
				return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"action":"accept","content":{"v":"` + v + `"}}}`
			},
			wantText:  "one+two",
			wantAsked: []string{"elicitation/create", "elicitation/create"},
		},
		{
			// A legacy client cannot answer ahead of being asked: input
			// members of its params are ignored, and it is asked.
			name:  "inputResponses from the client",
			tool:  "steps",
			extra: `,"inputResponses":{"first":{"action":"accept","content":{"v":"forged"}}},"requestState":"forged"`,
			answer: func(id json.RawMessage, method string, params json.RawMessage) string {
				v := "one"
				if strings.Contains(string(params), "second") {
					v = "two"
				}
				return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"action":"accept","content":{"v":"` + v + `"}}}`
			},
			wantText:  "one+two",
			wantAsked: []string{"elicitation/create", "elicitation/create"},
		},
		{
			name: "declined",
			tool: "steps",
			answer: func(id json.RawMessage, method string, params json.RawMessage) string {
				return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"action":"decline"}}`
			},
			wantText:  "decline+decline",
			wantAsked: []string{"elicitation/create", "elicitation/create"},
		},
		{
			name: "client error",
			tool: "steps",
			answer: func(id json.RawMessage, method string, params json.RawMessage) string {
				return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32601,"message":"no UI"}}`
			},
			wantText:  "Could not get the input this request needs from the client: the client answered elicitation/create with error -32601: no UI",
			wantAsked: []string{"elicitation/create"},
			isError:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, asked := c.callAnswering(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tt.tool+`"`+tt.extra+`}}`, tt.answer)
			var r struct {
				Content []struct{ Text string }
				IsError bool
			}
			if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
				t.Fatalf("result %s: %v", res, err)
			}
			if r.Content[0].Text != tt.wantText || r.IsError != tt.isError {
				t.Errorf("result %q (isError %v), want %q (isError %v)", r.Content[0].Text, r.IsError, tt.wantText, tt.isError)
			}
			if diff := cmp.Diff(tt.wantAsked, asked); diff != "" {
				t.Errorf("requests to the client (-want +got):\n%s", diff)
			}
		})
	}

	// A client that declared sampling, elicitation and roots gets all three
	// requests of one round at once.
	full := newLegacyHTTPCaps(t, s, `{"roots":{},"elicitation":{},"sampling":{}}`)
	res, asked := full.callAnswering(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"three"}}`,
		func(id json.RawMessage, method string, params json.RawMessage) string {
			result := map[string]string{
				"elicitation/create":     `{"action":"accept","content":{"v":"x"}}`,
				"sampling/createMessage": `{"role":"assistant","content":{"type":"text","text":"y"},"model":"m"}`,
				"roots/list":             `{"roots":[{"uri":"file:///z"}]}`,
			}[method]
			return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
		})
	slices.Sort(asked)
	if diff := cmp.Diff([]string{"elicitation/create", "roots/list", "sampling/createMessage"}, asked); diff != "" {
		t.Errorf("requests to the client (-want +got):\n%s", diff)
	}
	if want := `{"content":[{"type":"text","text":"x y file:///z"}]}`; string(res) != want {
		t.Errorf("result %s, want %s", res, want)
	}
}

// TestLegacyResourceUpdated: Server.NotifyResourceUpdated reaches the
// sessions subscribed to the URI, on their GET streams, and no others.
func TestLegacyResourceUpdated(t *testing.T) {
	s := NewServer(nil)
	s.AddResource(&Resource{URI: "test://watched", Name: "watched"}, func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{Text: "x"}}}, nil
	})
	open := func(subscribe bool) <-chan testEvent {
		c := newLegacyHTTP(t, s)
		if subscribe {
			resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://watched"}}`)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(b), `"result":{}`) {
				t.Fatalf("subscribe: %s", b)
			}
		}
		get := c.do(context.Background(), http.MethodGet, "")
		t.Cleanup(func() { get.Body.Close() })
		events := readEvents(get.Body)
		next(t, events) // priming
		return events
	}
	subscribed, other := open(true), open(false)
	s.NotifyResourceUpdated("test://watched")
	if m := decodeEvent(t, next(t, subscribed)); m.Method != "notifications/resources/updated" || string(m.Params) != `{"uri":"test://watched"}` {
		t.Fatalf("subscribed session got %+v, want notifications/resources/updated for test://watched", m)
	}
	s.RemoveResources("test://watched")
	for _, events := range []<-chan testEvent{subscribed, other} {
		if m := decodeEvent(t, next(t, events)); m.Method != "notifications/resources/list_changed" {
			t.Fatalf("got %+v, want notifications/resources/list_changed (and no resources/updated before it on the other session)", m)
		}
	}
}

// TestLegacyNoTaskChanges: a task change published on the Bus (by a task of
// any principal, here or on another replica) reaches no legacy session:
// they have no tasks, and notifications/tasks is not a 2025-11-25 message.
func TestLegacyNoTaskChanges(t *testing.T) {
	s := NewServer(nil)
	longWindow(t, s)
	AddTool(s, &Tool{Name: "a", Description: "A."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
	c := newLegacyHTTP(t, s)
	get := c.do(context.Background(), http.MethodGet, "")
	defer get.Body.Close()
	events := readEvents(get.Body)
	if ev := next(t, events); ev.data != "" {
		t.Fatalf("first event %+v, want priming", ev)
	}
	// Each change is broadcast on its own goroutine: two list changes
	// after the task change give it time to arrive, if it is sent at all.
	for i, name := range []string{"b", "c"} {
		s.bus.Publish(Change{Kind: TaskChanged, TaskID: "task-of-someone-else"})
		AddTool(s, &Tool{Name: name, Description: "More."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
		if i > 0 {
			endWindow(s) // the first change is announced at once, later ones when the window ends
		}
		if m := decodeEvent(t, next(t, events)); m.Method != "notifications/tools/list_changed" {
			t.Fatalf("event %d: got %+v, want only notifications/tools/list_changed", i, m)
		}
	}
}
