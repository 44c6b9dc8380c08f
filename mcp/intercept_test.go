package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// seen is what a recording interceptor saw of one call.
type seen struct {
	Method, Name, ID string
	Transport        Transport
	Era              Era
	Phase            Phase
	Session          bool
	TaskID           bool
	Meta             string // RequestInfo.Meta.String("traceparent")
	ResultType       string
	ToolError        bool
	Code             int
	Status           int
}

// callRecorder is an interceptor that records every call, in the order the
// calls ended.
type callRecorder struct {
	mu    sync.Mutex
	calls []seen
	ended chan seen
}

func newCallRecorder() *callRecorder { return &callRecorder{ended: make(chan seen, 64)} }

func (r *callRecorder) intercept(ctx context.Context, c *Call, next CallHandler) Outcome {
	o := next(ctx, c)
	s := seen{Method: c.Method, Name: c.Name, ID: string(c.ID.Raw()), Transport: c.Transport, Era: c.Info.Era,
		Phase: c.Phase, Session: c.SessionID != "" || c.SessionDone() != nil, TaskID: c.TaskID != "",
		Meta: c.Info.Meta.String("traceparent"), ResultType: o.ResultType, ToolError: o.ToolError, Status: o.HTTPStatus}
	if o.Err != nil {
		s.Code = o.Err.Code
	}
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
	r.ended <- s
	return o
}

func (r *callRecorder) all() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.calls...)
}

// interceptedServer is a server with an echo tool, a failing tool, a
// prompt and the given interceptors.
func interceptedServer(ics ...Interceptor) *Server {
	s := NewServer(&ServerOptions{Interceptors: ics, Logger: discardLogger()})
	type in struct {
		Text string `json:"text"`
	}
	AddTool(s, &Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *ToolRequest, in in) (string, error) {
		return in.Text, nil
	})
	AddTool(s, &Tool{Name: "fail", Description: "Fails."}, func(ctx context.Context, req *ToolRequest, in in) (string, error) {
		return "", errors.New("it failed")
	})
	return s
}

const testTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

func TestInterceptorsSeeCallsAndOutcomes(t *testing.T) {
	rec := newCallRecorder()
	s := interceptedServer(rec.intercept)
	call(t, s, "server/discover", "")
	callCtx(t, context.Background(), s, "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`, `"traceparent":"`+testTraceparent+`","progressToken":3`)
	call(t, s, "tools/call", `{"name":"fail","arguments":{}}`)
	call(t, s, "tools/call", `{"name":"nope","arguments":{}}`)
	call(t, s, "tools/list", "")
	call(t, s, "no/such/method", "") // not intercepted: unknown methods are answered before
	want := []seen{
		{Method: "server/discover", ID: "7", ResultType: "complete", Status: 200},
		{Method: "tools/call", Name: "echo", ID: "7", Meta: testTraceparent, ResultType: "complete", Status: 200},
		{Method: "tools/call", Name: "fail", ID: "7", ResultType: "complete", ToolError: true, Status: 200},
		{Method: "tools/call", Name: "nope", ID: "7", Code: jsonrpc.CodeInvalidParams, Status: 400},
		{Method: "tools/list", ID: "7", ResultType: "complete", Status: 200},
	}
	if diff := cmp.Diff(want, rec.all()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestInterceptorOrderAndContext(t *testing.T) {
	type key struct{}
	var mu sync.Mutex
	var order []string
	mark := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	outer := func(ctx context.Context, c *Call, next CallHandler) Outcome {
		mark("outer before")
		o := next(context.WithValue(ctx, key{}, "from outer"), c)
		mark("outer after")
		return o
	}
	inner := func(ctx context.Context, c *Call, next CallHandler) Outcome {
		mark("inner before " + ctx.Value(key{}).(string))
		o := next(ctx, c)
		mark("inner after")
		return o
	}
	s := NewServer(&ServerOptions{Interceptors: []Interceptor{outer, inner}})
	AddTool(s, &Tool{Name: "ctx", Description: "Reads the context."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		mark("handler " + ctx.Value(key{}).(string))
		return "ok", nil
	})
	if r := call(t, s, "tools/call", `{"name":"ctx","arguments":{}}`); r.Error != nil {
		t.Fatalf("error %+v", r.Error)
	}
	want := []string{"outer before", "inner before from outer", "handler from outer", "inner after", "outer after"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestInterceptorAnswersAndReplaces(t *testing.T) {
	ran := false
	refuse := func(ctx context.Context, c *Call, next CallHandler) Outcome {
		if c.Name == "echo" {
			return Outcome{Err: &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Too many calls", Data: map[string]int{"retryAfterMs": 1000}}}
		}
		o := next(ctx, c)
		if o.Err != nil {
			return Outcome{Err: &Error{Code: jsonrpc.CodeInternalError, Message: "replaced: " + o.Err.Message}}
		}
		return o
	}
	s := NewServer(&ServerOptions{Interceptors: []Interceptor{refuse}})
	AddTool(s, &Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		ran = true
		return "", nil
	})
	r := call(t, s, "tools/call", `{"name":"echo","arguments":{}}`)
	if ran {
		t.Error("the handler ran although the interceptor answered")
	}
	want := &rpcError{Code: int(jsonrpc.CodeInvalidRequest), Message: "Too many calls", Data: json.RawMessage(`{"retryAfterMs":1000}`)}
	if diff := cmp.Diff(want, r.Error); diff != "" || r.Status != 400 {
		t.Errorf("status %d, error (-want +got):\n%s", r.Status, diff)
	}
	r = call(t, s, "tools/call", `{"name":"other","arguments":{}}`)
	if r.Error == nil || r.Error.Code != int(jsonrpc.CodeInternalError) || !strings.HasPrefix(r.Error.Message, "replaced: Unknown tool") {
		t.Errorf("replaced error: %+v", r.Error)
	}
}

func TestInterceptorPanicIsInternalError(t *testing.T) {
	for _, after := range []bool{false, true} {
		s := NewServer(&ServerOptions{Logger: discardLogger(), Interceptors: []Interceptor{func(ctx context.Context, c *Call, next CallHandler) Outcome {
			if after {
				next(ctx, c)
			}
			panic("interceptor bug")
		}}})
		AddTool(s, &Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
			return "ok", nil
		})
		for range 2 { // the server survives
			r := call(t, s, "tools/call", `{"name":"echo","arguments":{}}`)
			if r.Error == nil || r.Error.Code != int(jsonrpc.CodeInternalError) || r.Error.Message != "Internal error" || r.Status != 500 {
				t.Errorf("after=%v: status %d, error %+v", after, r.Status, r.Error)
			}
		}
	}
}

func TestInterceptorWithoutOutcome(t *testing.T) {
	s := NewServer(&ServerOptions{Logger: discardLogger(), Interceptors: []Interceptor{func(ctx context.Context, c *Call, next CallHandler) Outcome {
		return Outcome{} // neither next nor an error
	}}})
	r := call(t, s, "server/discover", "")
	if r.Error == nil || r.Error.Code != int(jsonrpc.CodeInternalError) {
		t.Errorf("error %+v", r.Error)
	}
}

func TestRequestInfoMeta(t *testing.T) {
	var got RequestMeta
	s := NewServer(nil)
	AddTool(s, &Tool{Name: "meta", Description: "Reads _meta."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		got = req.Info.Meta
		return "", nil
	})
	callCtx(t, context.Background(), s, "tools/call", `{"name":"meta","arguments":{}}`,
		`"traceparent":"`+testTraceparent+`","tracestate":"a=b","baggage":"k=v","io.modelcontextprotocol/related":{},"progressToken":1,"x.example/n":2`)
	want := RequestMeta{
		"traceparent": json.RawMessage(`"` + testTraceparent + `"`), "tracestate": json.RawMessage(`"a=b"`),
		"baggage": json.RawMessage(`"k=v"`), "x.example/n": json.RawMessage(`2`),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Meta (-want +got):\n%s", diff)
	}
	if got.String("tracestate") != "a=b" || got.String("x.example/n") != "" {
		t.Errorf("String: %q %q", got.String("tracestate"), got.String("x.example/n"))
	}
	callCtx(t, context.Background(), s, "tools/call", `{"name":"meta","arguments":{}}`, `"progressToken":1`)
	if got != nil {
		t.Errorf("Meta without other members: %v, want nil", got)
	}
}

// httpPost posts a 2026-07-28 request to url the way a client does.
func httpPost(t *testing.T, url, method, name, params, extraMeta string) *http.Response {
	t.Helper()
	return mcpwire.Send(t, context.Background(), url, mcpwire.Request{ID: "5", Method: method, Name: name, Params: params, Meta: extraMeta})
}

func TestInterceptorsOnTransports(t *testing.T) {
	t.Run("http", func(t *testing.T) {
		rec := newCallRecorder()
		srv := httptest.NewServer(interceptedServer(rec.intercept))
		defer srv.Close()
		resp := httpPost(t, srv.URL, "server/discover", "", "", "")
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		resp = httpPost(t, srv.URL, "tools/call", "echo", `{"name":"echo","arguments":{"text":"x"}}`, `"traceparent":"`+testTraceparent+`"`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		want := []seen{
			{Method: "server/discover", ID: "5", Transport: TransportStreamableHTTP, ResultType: "complete", Status: 200},
			{Method: "tools/call", Name: "echo", ID: "5", Transport: TransportStreamableHTTP, Meta: testTraceparent, ResultType: "complete", Status: 200},
		}
		if diff := cmp.Diff(want, rec.all()); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		rec := newCallRecorder()
		s := interceptedServer(rec.intercept)
		in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + withMeta(`{"name":"echo","arguments":{"text":"x"}}`, `"traceparent":"`+testTraceparent+`"`) + "}\n"
		var out strings.Builder
		if err := s.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		want := []seen{{Method: "tools/call", Name: "echo", ID: "1", Transport: TransportStdio, Meta: testTraceparent, ResultType: "complete", Status: 200}}
		if diff := cmp.Diff(want, rec.all()); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
	})
	t.Run("legacy-stdio", func(t *testing.T) {
		rec := newCallRecorder()
		s := interceptedServer(rec.intercept)
		in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"traceparent":"` + testTraceparent + `"}}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}` + "\n"
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- s.ServeStdio(context.Background(), strings.NewReader(in), pw) }()
		br := bufio.NewReader(pr)
		for range 3 {
			if _, err := br.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
		}
		go io.Copy(io.Discard, pr)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		want := []seen{
			{Method: "initialize", ID: "1", Transport: TransportStdio, Era: EraLegacy, Session: true, ResultType: "complete", Status: 200},
			{Method: "tools/call", Name: "echo", ID: "2", Transport: TransportStdio, Era: EraLegacy, Session: true, Meta: testTraceparent, ResultType: "complete", Status: 200},
			{Method: "tools/call", Name: "nope", ID: "3", Transport: TransportStdio, Era: EraLegacy, Session: true, Code: jsonrpc.CodeInvalidParams, Status: 200},
		}
		got := rec.all() // calls after initialize run concurrently
		slices.SortFunc(got, func(a, b seen) int { return strings.Compare(a.ID, b.ID) })
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
	})
}

// TestInterceptorListenIsOneCall opens a listen stream over real HTTP/1.1
// (so that it is parked) and checks that the interceptor's call lasts until
// the stream ends at Shutdown, with notifications in between.
func TestInterceptorListenIsOneCall(t *testing.T) {
	rec := newCallRecorder()
	s := interceptedServer(rec.intercept)
	srv := httptest.NewServer(s)
	defer srv.Close()
	resp := httpPost(t, srv.URL, "subscriptions/listen", "", `{"notifications":{"toolsListChanged":true}}`, "")
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	readEvent := func() string {
		t.Helper()
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				return d
			}
		}
	}
	if ev := readEvent(); !strings.Contains(ev, "acknowledged") {
		t.Fatalf("first event %s", ev)
	}
	s.AddRawTool(&Tool{Name: "new", Description: "New.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) { return &CallToolResult{}, nil })
	if ev := readEvent(); !strings.Contains(ev, "notifications/tools/list_changed") {
		t.Fatalf("second event %s", ev)
	}
	select {
	case c := <-rec.ended:
		t.Fatalf("the listen call ended while its stream is open: %+v", c)
	default:
	}
	if ParkedListenStreams(s) != 1 {
		t.Errorf("parked streams: %d, want 1", ParkedListenStreams(s))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-rec.ended:
		want := seen{Method: "subscriptions/listen", ID: "5", Transport: TransportStreamableHTTP, ResultType: "complete", Status: 200}
		if diff := cmp.Diff(want, c); diff != "" {
			t.Errorf("ended call (-want +got):\n%s", diff)
		}
	case <-ctx.Done():
		t.Fatal("the listen call did not end at Shutdown")
	}
}

// TestNoInterceptorsNoAllocs pins what a server without interceptors
// allocates: server/discover none at all, through Handle.
func TestNoInterceptorsNoAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts need a quiet run")
	}
	s := echoServer()
	msg := decodeMsg(t, []byte(discoverBody))
	buf := make([]byte, 0, 4096)
	in := &Incoming{Message: &msg}
	n := testing.AllocsPerRun(200, func() {
		out, _ := s.Handle(context.Background(), buf[:0], in, nil)
		buf = out[:0]
	})
	if n != 0 {
		t.Errorf("server/discover without interceptors allocates %v times, want 0", n)
	}
	p := newInProcessHTTP(t, echoServer(), "tools/call", "echo", echoCallBody)
	floor := testing.AllocsPerRun(200, newInProcessHTTP(t, floorHandler{}, "tools/call", "echo", echoCallBody).do)
	got := testing.AllocsPerRun(200, p.do)
	if got > floor+5 {
		t.Errorf("tools/call without interceptors allocates %v times, want at most the floor's %v plus 5", got, floor)
	}
}

// TestInterceptedCallAllocs pins the cost of the interceptor path: with
// one interceptor that only calls next, a tools/call allocates at most 3
// times more than without any (the exchangeCall, which holds the call's
// shared state, and the chain's closures' escapes).
func TestInterceptedCallAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts need a quiet run")
	}
	plain := testing.AllocsPerRun(200, newInProcessHTTP(t, echoServer(), "tools/call", "echo", echoCallBody).do)
	s := NewServer(&ServerOptions{Info: Implementation{Name: "bench-server", Version: "1.0.0"}, Interceptors: []Interceptor{
		func(ctx context.Context, c *Call, next CallHandler) Outcome { return next(ctx, c) },
	}})
	type echoIn struct {
		Text string `json:"text"`
	}
	AddTool(s, &Tool{Name: "echo", Description: "Echoes the text."},
		func(ctx context.Context, req *ToolRequest, in echoIn) (string, error) { return in.Text, nil })
	p := newInProcessHTTP(t, s, "tools/call", "echo", echoCallBody)
	got := testing.AllocsPerRun(200, p.do)
	if p.w.status != 200 {
		t.Fatalf("status %d: %s", p.w.status, p.w.body)
	}
	t.Logf("%v allocations, %v without interceptors", got, plain)
	if got > plain+3 {
		t.Errorf("an intercepted tools/call allocates %v times, want at most %v (without interceptors) plus 3", got, plain)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestInterceptorTaskPhases checks that a tools/call that becomes a task
// is one call (result type "task") and its handler's background run
// another (PhaseTaskRun), with the run's outcome.
func TestInterceptorTaskPhases(t *testing.T) {
	rec := newCallRecorder()
	s := NewServer(&ServerOptions{Interceptors: []Interceptor{rec.intercept}, Tasks: TaskOptions{SyncWait: -1}})
	release := make(chan struct{})
	AddTool(s, &Tool{Name: "slow", Description: "d", TaskSupport: TaskRequired}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		<-release
		return "", errors.New("slow failed")
	})
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	r := ext(t, s, "tools/call", `{"name":"slow","arguments":{}}`)
	if r.Error != nil || r.Result["resultType"] != "task" {
		t.Fatalf("tools/call: %+v %+v", r.Error, r.Result)
	}
	first := <-rec.ended
	if diff := cmp.Diff(seen{Method: "tools/call", Name: "slow", ID: "7", ResultType: "task", Status: 200}, first); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	close(release)
	run := <-rec.ended
	if diff := cmp.Diff(seen{Method: "tools/call", Name: "slow", ID: "7", Phase: PhaseTaskRun, TaskID: true, ResultType: "complete", ToolError: true, Status: 200}, run); diff != "" {
		t.Errorf("task run (-want +got):\n%s", diff)
	}
}

// TestInterceptorLegacyClientRequest checks that the roots/list request a
// legacy stdio session is sent while a tool runs is a call of its own
// (PhaseClientRequest), which ends before the tool call does.
func TestInterceptorLegacyClientRequest(t *testing.T) {
	rec := newCallRecorder()
	s := NewServer(&ServerOptions{Interceptors: []Interceptor{rec.intercept}})
	AddTool(s, &Tool{Name: "roots", Description: "Lists roots."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		r, err := req.ListRoots("r")
		if err != nil {
			return "", err
		}
		return r.Roots[0].URI, nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), inR, outW) }()
	br := bufio.NewReader(outR)
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"1"}}}`)
	read()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roots","arguments":{}}}`)
	var req struct {
		ID     json.RawMessage
		Method string
	}
	if err := json.Unmarshal([]byte(read()), &req); err != nil || req.Method != "roots/list" {
		t.Fatalf("server request %+v, %v", req, err)
	}
	send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"roots":[{"uri":"file:///r"}]}}`)
	if l := read(); !strings.Contains(l, `file:///r`) {
		t.Fatalf("tool result %s", l)
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []seen{
		{Method: "initialize", ID: "1", Transport: TransportStdio, Era: EraLegacy, Session: true, ResultType: "complete", Status: 200},
		{Method: "roots/list", ID: string(req.ID), Transport: TransportStdio, Era: EraLegacy, Phase: PhaseClientRequest, Session: true, ResultType: "complete", Status: 200},
		{Method: "tools/call", Name: "roots", ID: "2", Transport: TransportStdio, Era: EraLegacy, Session: true, ResultType: "complete", Status: 200},
	}
	if diff := cmp.Diff(want, rec.all()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// BenchmarkToolsCallIntercepted is BenchmarkToolsCall with one
// interceptor that only calls next: the cost of the interceptor path.
func BenchmarkToolsCallIntercepted(b *testing.B) {
	s := NewServer(&ServerOptions{Info: Implementation{Name: "bench-server", Version: "1.0.0"}, Interceptors: []Interceptor{
		func(ctx context.Context, c *Call, next CallHandler) Outcome { return next(ctx, c) },
	}})
	type echoIn struct {
		Text string `json:"text"`
	}
	AddTool(s, &Tool{Name: "echo", Description: "Echoes the text."},
		func(ctx context.Context, req *ToolRequest, in echoIn) (string, error) { return in.Text, nil })
	p := newInProcessHTTP(b, s, "tools/call", "echo", echoCallBody)
	p.do()
	if p.w.status != 200 {
		b.Fatalf("status %d, body %s", p.w.status, p.w.body)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.do()
	}
}

// TestInterceptorPassesACopy checks that an interceptor may hand next a
// modified copy of the Call.
func TestInterceptorPassesACopy(t *testing.T) {
	s := interceptedServer(func(ctx context.Context, c *Call, next CallHandler) Outcome {
		cc := *c
		cc.Name = "renamed for the next interceptor"
		return next(ctx, &cc)
	})
	if r := call(t, s, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`); r.Error != nil {
		t.Errorf("error %+v", r.Error)
	}
}

// TestInterceptorListenClientGone checks the outcome of a parked listen
// stream whose client hangs up: the call ends then, as cancelled.
func TestInterceptorListenClientGone(t *testing.T) {
	rec := newCallRecorder()
	s := interceptedServer(rec.intercept)
	srv := httptest.NewServer(s)
	defer srv.Close()
	resp := httpPost(t, srv.URL, "subscriptions/listen", "", `{"notifications":{"toolsListChanged":true}}`, "")
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "event: ") {
		t.Fatalf("first line %q, %v", line, err)
	}
	resp.Body.Close() // the client goes away
	http.DefaultClient.CloseIdleConnections()
	select {
	case c := <-rec.ended:
		if c.Method != "subscriptions/listen" || c.Code != jsonrpc.CodeInternalError {
			t.Errorf("ended call %+v, want subscriptions/listen cancelled (-32603)", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the listen call did not end when its client went away")
	}
	s.Shutdown(context.Background())
}

// TestInterceptorsSeeRejectedRequests checks that a request for a known
// method that fails validation reaches the interceptors with its error
// (so that metrics and traces count it), and one for an unknown method
// does not.
func TestInterceptorsSeeRejectedRequests(t *testing.T) {
	rec := newCallRecorder()
	s := interceptedServer(rec.intercept)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"made/up","params":{}}`,
	} {
		msg := decodeMsg(t, []byte(body))
		s.Handle(context.Background(), nil, &Incoming{Message: &msg}, nil)
	}
	want := []seen{
		{Method: "tools/call", Name: "echo", ID: "1", Code: jsonrpc.CodeInvalidParams, Status: 400},
		{Method: "tools/list", ID: "2", Code: CodeUnsupportedVersion, Status: 400},
	}
	if diff := cmp.Diff(want, rec.all()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestCallRegistered checks Call.Registered: true for the names of
// registered tools, prompts, resources and template matches, false for
// names the client made up and for methods without a registered name.
func TestCallRegistered(t *testing.T) {
	got := map[string]bool{}
	var mu sync.Mutex
	s := interceptedServer(func(ctx context.Context, c *Call, next CallHandler) Outcome {
		mu.Lock()
		got[c.Method+" "+c.Name] = c.Registered()
		mu.Unlock()
		return next(ctx, c)
	})
	s.AddPrompt(&Prompt{Name: "greet", Description: "Greets."}, func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) {
		return &GetPromptResult{}, nil
	})
	read := func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.URI, Text: "x"}}}, nil
	}
	s.AddResource(&Resource{URI: "file:///a", Name: "a", Description: "A."}, read)
	s.AddResourceTemplate(&ResourceTemplate{URITemplate: "file:///t/{x}", Name: "t", Description: "T."}, read)
	for _, c := range []struct{ method, params string }{
		{"tools/call", `{"name":"echo","arguments":{"text":"hi"}}`},
		{"tools/call", `{"name":"nope","arguments":{}}`},
		{"prompts/get", `{"name":"greet"}`},
		{"prompts/get", `{"name":"nope"}`},
		{"resources/read", `{"uri":"file:///a"}`},
		{"resources/read", `{"uri":"file:///t/1"}`},
		{"resources/read", `{"uri":"file:///nope"}`},
		{"tools/list", ``},
	} {
		call(t, s, c.method, c.params)
	}
	want := map[string]bool{
		"tools/call echo": true, "tools/call nope": false,
		"prompts/get greet": true, "prompts/get nope": false,
		"resources/read file:///a": true, "resources/read file:///t/1": true, "resources/read file:///nope": false,
		"tools/list ": false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Registered by call (-want +got):\n%s", diff)
	}
}

// refuseAfter is an interceptor that lets the calls of method whose Name
// is name run, then answers them with an error, as a policy that checks a
// call's outcome would.
func refuseAfter(method, name string) Interceptor {
	return func(ctx context.Context, c *Call, next CallHandler) Outcome {
		o := next(ctx, c)
		if c.Method == method && c.Name == name && c.Phase == PhaseRequest {
			e := &Error{Code: jsonrpc.CodeInvalidRequest, Message: "refused by policy"}
			return Outcome{Err: e, HTTPStatus: e.HTTPStatus()}
		}
		return o
	}
}

// TestInterceptorRefusedTaskIsCancelled checks that a tool call that
// became a task and that an interceptor then answered with an error does
// not leave the task running unseen: the client never learns its id, so
// its handler is stopped.
func TestInterceptorRefusedTaskIsCancelled(t *testing.T) {
	s := NewServer(&ServerOptions{Interceptors: []Interceptor{refuseAfter("tools/call", "slow")}, Tasks: TaskOptions{SyncWait: -1}, Logger: discardLogger()})
	stopped := make(chan error, 1)
	AddTool(s, &Tool{Name: "slow", Description: "d", TaskSupport: TaskRequired}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return "", ctx.Err()
	})
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	r := ext(t, s, "tools/call", `{"name":"slow","arguments":{}}`)
	if r.Error == nil || r.Error.Message != "refused by policy" {
		t.Fatalf("tools/call: error %+v, result %+v; want the interceptor's error", r.Error, r.Result)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, errTaskCancelled) {
			t.Errorf("the handler stopped with %v, want the task's cancellation", err)
		}
	case <-time.After(10 * time.Second): // a guard: without the fix it runs until Shutdown
		t.Fatal("the task of the refused call still runs")
	}
}

// TestInterceptorRefusedSessionChange checks that a legacy session's
// resources/subscribe and logging/setLevel that an interceptor answers
// with an error after their handler ran leave the session as it was: no
// updates for the refused URI, no change of level.
func TestInterceptorRefusedSessionChange(t *testing.T) {
	observed := make(chan string, 16)
	s := NewServer(&ServerOptions{Logger: discardLogger(), Interceptors: []Interceptor{
		refuseAfter("resources/subscribe", "file:///refused"),
		refuseAfter("resources/unsubscribe", "file:///allowed"),
		refuseAfter("logging/setLevel", ""),
	}, Listen: ListenOptions{Observe: func(ctx context.Context, info *RequestInfo, f SubscriptionFilter) (func(), error) {
		uri := strings.Join(f.ResourceSubscriptions, ",")
		observed <- "observe " + uri
		return func() { observed <- "end " + uri }, nil
	}}})
	for _, uri := range []string{"file:///refused", "file:///allowed"} {
		s.AddResource(&Resource{URI: uri, Name: "r"}, func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{}, nil
		})
	}
	AddTool(s, &Tool{Name: "log", Description: "Logs at info."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		req.Log(LevelInfo, "t", "an info message")
		return "logged", nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), inR, outW) }()
	br := bufio.NewReader(outR)
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	read()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, line := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///refused"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"file:///allowed"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"error"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"resources/unsubscribe","params":{"uri":"file:///allowed"}}`,
	} {
		send(line)
		l := read()
		if refused := i != 1; refused != strings.Contains(l, "refused by policy") {
			t.Fatalf("answer %d: %s", i, l)
		}
	}
	// In the order sent: an update of the refused URI (which must not
	// arrive), then one of the allowed URI.
	s.NotifyResourceUpdated("file:///refused")
	s.NotifyResourceUpdated("file:///allowed")
	if l := read(); !strings.Contains(l, `"file:///allowed"`) {
		t.Errorf("first notification %s, want the allowed URI's update only", l)
	}
	// The level stays what it was (debug): the info message arrives
	// before the result.
	send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"log","arguments":{}}}`)
	if l := read(); !strings.Contains(l, "an info message") {
		t.Errorf("after a refused setLevel: %s, want the info log message first", l)
	}
	// The observer (a bridge's backend subscription) saw the refused
	// subscribe undone, and the allowed one kept through the refused
	// unsubscribe.
	var got []string
	for len(observed) > 0 {
		got = append(got, <-observed)
	}
	if diff := cmp.Diff([]string{"observe file:///refused", "end file:///refused", "observe file:///allowed"}, got); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
