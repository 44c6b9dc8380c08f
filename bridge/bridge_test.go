package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/internal/realtime"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

var testKeys = [][]byte{[]byte("0123456789abcdef0123456789abcdef")}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// backend is a legacy-era server as a bridge sees one: an echo tool, a
// tool that samples, one that reports progress and one that waits for
// its cancellation.
func backend(started chan<- string) *mcp.Server {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "backend", Version: "2.0.0"}, Instructions: "use echo", Logger: quiet, State: mcp.StateOptions{Keys: testKeys}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct {
			Text string `json:"text"`
		}) (string, error) {
			return in.Text, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "caps", Description: "Reports the capabilities the session declared."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			b, _ := json.Marshal(req.Info.ClientCapabilities)
			return string(b), nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Asks the model twice."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			msg := func(t string) *mcp.CreateMessageParams {
				return &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: t}}}}, MaxTokens: 5}
			}
			a, err := req.Sample("a", msg("first"))
			if err != nil {
				return "", err
			}
			b, err := req.Sample("b", msg("second"))
			if err != nil {
				return "", err
			}
			return a.Text() + "+" + b.Text(), nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "many", Description: "Asks three questions in one round."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			_, e1 := req.Elicit("name", &mcp.ElicitParams{Message: "name?"})
			_, e2 := req.Sample("greet", &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}}, MaxTokens: 5})
			_, e3 := req.ListRoots("roots")
			if err := errors.Join(e1, e2, e3); err != nil {
				return "", err
			}
			return "all three", nil
		})
	s.AddRawTool(&mcp.Tool{Name: "region", Description: "Takes a region in a header.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)},
		func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "logs", Description: "Logs twice."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.Log(mcp.LevelInfo, "t", "one")
			req.Log(mcp.LevelDebug, "t", "two")
			return "logged", nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			for i := 1; i <= 3; i++ {
				req.Progress(float64(i), 3, "")
			}
			return "done", nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "Waits for its cancellation."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			started <- "block"
			<-ctx.Done()
			started <- "cancelled"
			return "", ctx.Err()
		})
	return s
}

func newBridge(t *testing.T, edit func(*bridge.Options)) (*bridge.Bridge, chan string) {
	b, started, _ := newBridgeBackend(t, edit)
	return b, started
}

func newBridgeBackend(t *testing.T, edit func(*bridge.Options)) (*bridge.Bridge, chan string, *mcp.Server) {
	t.Helper()
	started := make(chan string, 4)
	be := backend(started)
	o := &bridge.Options{
		Backend: func() client.Transport { return &client.MemoryTransport{Server: be} },
		Eras:    client.LegacyOnly,
	}
	if edit != nil {
		edit(o)
	}
	return startBridge(t, o), started, be
}

// startBridge starts a bridge with o, quiet and with the test's state
// keys unless o sets its own, closed when the test ends.
func startBridge(t *testing.T, o *bridge.Options) *bridge.Bridge {
	t.Helper()
	if o.Server.Logger == nil {
		o.Server.Logger = quiet
	}
	if o.Server.State.Keys == nil {
		o.Server.State.Keys = testKeys
	}
	if o.Logger == nil {
		o.Logger = quiet
	}
	b, err := bridge.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestDiscoverFromBackend(t *testing.T) {
	b, _ := newBridge(t, nil)
	c := mcptest.NewClient(t, b.Server())
	d, err := c.Discover()
	if err != nil {
		t.Fatal(err)
	}
	if d.ServerInfo.Name != "backend" || d.ServerInfo.Version != "2.0.0" || d.Instructions != "use echo" {
		t.Errorf("discover = %+v, want the backend's identity and instructions", d)
	}
	if d.Capabilities.Tools == nil || d.Capabilities.Prompts != nil {
		t.Errorf("capabilities = %+v, want the backend's tools only", d.Capabilities)
	}
	if err := b.Server().Ready(context.Background()); err != nil {
		t.Errorf("Ready = %v", err)
	}
}

func TestCallsPassThrough(t *testing.T) {
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			b, _ := newBridge(t, nil)
			var opts []mcptest.Option
			if era == "legacy" {
				opts = append(opts, mcptest.Legacy())
			}
			c := mcptest.NewClient(t, b.Server(), opts...)
			tools, err := c.ListTools()
			if err != nil {
				t.Fatal(err)
			}
			if len(tools) != 8 {
				t.Errorf("%d tools, want the backend's 8", len(tools))
			}
			res, err := c.Client().CallTool(context.Background(), "echo", map[string]any{"text": "hi"})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "hi" {
				t.Errorf("echo = %q", got)
			}
			_, err = c.Client().CallTool(context.Background(), "nope", nil)
			if err == nil {
				t.Error("unknown tool: no error")
			}
		})
	}
}

// The backend's sampling requests become input_required rounds; the
// retries answer them and the one backend call goes on.
func TestSamplingBecomesInputRequired(t *testing.T) {
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			b, _ := newBridge(t, nil)
			opts := []mcptest.Option{countingSampler()}
			if era == "legacy" {
				opts = append(opts, mcptest.Legacy())
			}
			c := mcptest.NewClient(t, b.Server(), opts...)
			res, err := c.Client().CallTool(context.Background(), "sample", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "ans1+ans2" {
				t.Errorf("sample = %q, want both answers relayed in order", got)
			}
		})
	}
}

// countingSampler makes a test client answer its nth sampling request
// "ans<n>".
func countingSampler() mcptest.Option {
	var mu sync.Mutex
	n := 0
	return mcptest.ClientOptions(func(o *client.Options) {
		o.Sample = func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			mu.Lock()
			n++
			k := n
			mu.Unlock()
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("ans", k)}}}, nil
		}
	})
}

// The first round on the wire: one input_required result keyed as the
// backend's handler named the request (r1 for another backend), with
// the backend's params; the session stays leased until the retry.
func TestInputRequiredWire(t *testing.T) {
	b, _ := newBridge(t, nil)
	r := mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "tools/call", Params: `{"name":"sample"}`, Caps: `{"sampling":{}}`})
	var resp struct {
		Result struct {
			ResultType    string
			InputRequests map[string]struct {
				Method string
				Params struct{ MaxTokens int }
			}
			RequestState string
		}
	}
	r.Decode(t, &resp)
	got := resp.Result
	// The backend is an mcpkit server: its handler's keys (a, b) are kept.
	if got.ResultType != "input_required" || got.InputRequests["a"].Method != "sampling/createMessage" || got.InputRequests["a"].Params.MaxTokens != 5 || got.RequestState == "" {
		t.Fatalf("first round = %s", r.Last())
	}
	// The retry answers r1; the backend asks again (r2).
	r = mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "tools/call", Caps: `{"sampling":{}}`,
		Params: `{"name":"sample","inputResponses":{"a":{"role":"assistant","model":"m","content":{"type":"text","text":"x"}}},"requestState":` + quoteJSON(got.RequestState) + `}`})
	r.Decode(t, &resp)
	if _, ok := resp.Result.InputRequests["b"]; !ok || resp.Result.ResultType != "input_required" {
		t.Fatalf("second round = %s, want b", r.Last())
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A held call whose retry never comes is cancelled after HoldTimeout and
// its session freed; a late retry gets -32603 and is not run again.
func TestHoldTimeout(t *testing.T) {
	b, _ := newBridge(t, func(o *bridge.Options) {
		o.HoldTimeout = 20 * time.Millisecond
		o.MaxSessions = 1
		o.LeaseWait = 5 * time.Second
	})
	r := mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "tools/call", Params: `{"name":"sample"}`, Caps: `{"sampling":{}}`})
	var resp struct {
		Result struct{ RequestState string }
	}
	r.Decode(t, &resp)
	// The one session is freed by the timeout: a call with the same
	// capabilities gets it (waiting at most LeaseWait).
	r2 := mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "tools/call", Params: `{"name":"echo","arguments":{"text":"after"}}`, Caps: `{"sampling":{}}`})
	if !strings.Contains(string(r2.Last()), `"after"`) {
		t.Fatalf("call after the hold timeout = %s", r2.Last())
	}
	r = mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "tools/call", Caps: `{"sampling":{}}`,
		Params: `{"name":"sample","inputResponses":{"a":{"role":"assistant","model":"m","content":{"type":"text","text":"x"}}},"requestState":` + quoteJSON(resp.Result.RequestState) + `}`})
	var e struct{ Error *mcp.Error }
	r.Decode(t, &e)
	if e.Error == nil || e.Error.Code != -32603 || !strings.Contains(e.Error.Message, "not run again") {
		t.Fatalf("late retry = %s, want -32603", r.Last())
	}
}

// Past MaxSessions with every session busy, a caller gets 503 with
// Retry-After after LeaseWait; an idle session of another key is evicted
// instead.
func TestSessionCap(t *testing.T) {
	b, _ := newBridge(t, func(o *bridge.Options) {
		o.MaxSessions = 1
		o.LeaseWait = 20 * time.Millisecond
		o.HoldTimeout = time.Minute
	})
	// Hold the one session: a sampling call waiting for its retry.
	mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "tools/call", Params: `{"name":"sample"}`, Caps: `{"sampling":{}}`})
	r := mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "tools/call", Params: `{"name":"caps"}`, Caps: `{"roots":{}}`})
	if r.Status != 503 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("past the cap: status %d, Retry-After %q, body %s; want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"), r.Raw)
	}
}

func TestEvictsIdleSessionsLRU(t *testing.T) {
	b, _ := newBridge(t, func(o *bridge.Options) { o.MaxSessions = 1 })
	for _, caps := range []string{`{"roots":{}}`, `{"sampling":{}}`, `{"roots":{}}`} {
		r := mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "tools/call", Params: `{"name":"caps"}`, Caps: caps})
		var resp struct {
			Result mcp.CallToolResult
		}
		r.Decode(t, &resp)
		var seen mcp.ClientCapabilities
		json.Unmarshal([]byte(resp.Result.Content[0].(*mcp.TextContent).Text), &seen)
		want := mcp.ClientCapabilities{}
		json.Unmarshal([]byte(caps), &want)
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("caps %s: the backend session saw (-want +got):\n%s", caps, diff)
		}
	}
}

func TestKeyNormalizes(t *testing.T) {
	for _, tc := range []struct{ caps, want string }{
		{`{}`, `{}`},
		{`{"sampling":{"tools":{"x":1}},"extensions":{"io.modelcontextprotocol/tasks":{},"a.b/ext":{}},"experimental":{"x":{}}}`, `{"sampling":{"tools":{}}}`},
		{`{"elicitation":{}}`, `{"elicitation":{"form":{}}}`},
		{`{"elicitation":{"url":{}},"roots":{"listChanged":true}}`, `{"elicitation":{"url":{}},"roots":{"listChanged":true}}`},
	} {
		var c mcp.ClientCapabilities
		if err := json.Unmarshal([]byte(tc.caps), &c); err != nil {
			t.Fatal(err)
		}
		if got, _ := bridge.Key(&c, nil); got != tc.want {
			t.Errorf("Key(%s) = %s, want %s", tc.caps, got, tc.want)
		}
	}
	var c mcp.ClientCapabilities
	json.Unmarshal([]byte(`{"extensions":{"a.b/ext":{"v":1}}}`), &c)
	if got, _ := bridge.Key(&c, []string{"a.b/ext"}); got != `{"extensions":{"a.b/ext":{"v":1}}}` {
		t.Errorf("a named extension is kept: %s", got)
	}
}

func TestProgressRelayed(t *testing.T) {
	b, _ := newBridge(t, nil)
	c := mcptest.NewClient(t, b.Server())
	var got []float64
	_, err := c.Client().CallTool(context.Background(), "progress", nil, client.WithProgress(func(p client.Progress) { got = append(got, p.Progress) }))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{1, 2, 3}, got); diff != "" {
		t.Error(diff)
	}
}

// A caller that goes away cancels the backend call.
func TestCancellationForwarded(t *testing.T) {
	b, started := newBridge(t, nil)
	c := mcptest.NewClient(t, b.Server())
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Client().CallTool(ctx, "block", nil)
		errc <- err
	}()
	if s := <-started; s != "block" {
		t.Fatal(s)
	}
	cancel()
	if s := <-started; s != "cancelled" {
		t.Fatalf("the backend saw %q, want its call cancelled", s)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

// A backend process that exits during a call: the caller gets -32603 with
// the exit status and not the stderr; the bridge restarts the backend.
func TestBackendExit(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := bridge.New(context.Background(), &bridge.Options{
		Backend: func() client.Transport {
			return &client.CommandTransport{Command: exe, Env: []string{"BRIDGE_TEST_BACKEND=1"}, Stderr: io.Discard}
		},
		Server:     mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: testKeys}},
		Logger:     quiet,
		MinBackoff: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c := mcptest.NewClient(t, b.Server())
	_, err = c.Client().CallTool(context.Background(), "exit", nil)
	var e *mcp.Error
	if !errors.As(err, &e) || e.Code != -32603 || !strings.Contains(e.Message, "exit status 3") || strings.Contains(e.Message, "secret") {
		t.Fatalf("err = %v, want -32603 naming exit status 3 without stderr", err)
	}
	// A later call gets a new backend session.
	res, err := c.Client().CallTool(context.Background(), "echo", map[string]any{"text": "back"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "back" {
		t.Errorf("echo = %q", got)
	}
}

// stdioBackendTools add tools to the stdio backend of TestMain (from
// platform-specific test files).
var stdioBackendTools []func(*mcp.Server)

// TestMain runs the test binary as a stdio backend for TestBackendExit.
func TestMain(m *testing.M) {
	if dir := os.Getenv("BRIDGE_TEST_IDENTITY_DIR"); dir != "" {
		identityBackend(dir) // identity_test.go
		os.Exit(0)
	}
	if os.Getenv("BRIDGE_TEST_BACKEND") == "1" {
		s := backend(make(chan string, 4))
		mcp.AddTool(s, &mcp.Tool{Name: "exit", Description: "Exits."},
			func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
				fmt.Fprintln(os.Stderr, "secret stderr line")
				os.Exit(3)
				return "", nil
			})
		out := &exitAfterAnswer{w: os.Stdout}
		mcp.AddTool(s, &mcp.Tool{Name: "exitsoon", Description: "Answers, then exits."},
			func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
				out.armed.Store(true) // exit once the answer is written
				return exitSoonAnswer, nil
			})
		for _, add := range stdioBackendTools {
			add(s)
		}
		s.ServeStdio(context.Background(), os.Stdin, out)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// exitSoonAnswer is the answer of the stdio backend's exitsoon tool.
const exitSoonAnswer = "bye from exitsoon"

// exitAfterAnswer is the stdio backend's output: once armed (by exitsoon),
// the process exits with status 4 as soon as the write carrying
// exitSoonAnswer is done, so the bridge has the answer before the exit.
type exitAfterAnswer struct {
	w     io.Writer
	armed atomic.Bool
}

func (e *exitAfterAnswer) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if e.armed.Load() && bytes.Contains(p, []byte(exitSoonAnswer)) {
		os.Exit(4)
	}
	return n, err
}

// A backend's tools/list_changed reaches the front's listen streams (on
// every replica, through the Bus); the acknowledgement grants only what
// the backend declares.
func TestListChangedRelayed(t *testing.T) {
	b, _, be := newBridgeBackend(t, nil)
	c := mcptest.NewClient(t, b.Server())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ev, err := range c.Client().Listen(ctx, client.ListenFilter{ToolsListChanged: true, PromptsListChanged: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Acknowledged != nil {
			if !ev.Acknowledged.ToolsListChanged || ev.Acknowledged.PromptsListChanged {
				t.Fatalf("acknowledged %+v, want tools only (the backend has no prompts)", ev.Acknowledged)
			}
			mcp.AddTool(be, &mcp.Tool{Name: "late", Description: "Registered late."},
				func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
			continue
		}
		if ev.Notification.Method != "notifications/tools/list_changed" {
			t.Fatalf("got %s", ev.Notification.Method)
		}
		break
	}
}

// Two replicas: the retry of a held call that reaches the other replica
// is forwarded to the owner (its AdvertiseURL sealed in the state) and
// answered there; without an AdvertiseURL it gets -32603 and is never run
// again.
func TestRetryOnAnotherReplica(t *testing.T) {
	be := backend(make(chan string, 4))
	replica := func(advertise, protected bool) (*bridge.Bridge, string) {
		var h http.Handler
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
		t.Cleanup(ts.Close)
		o := &bridge.Options{
			Backend: func() client.Transport { return &client.MemoryTransport{Server: be} },
			Eras:    client.LegacyOnly,
			Server:  mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: testKeys}},
			Logger:  quiet,
		}
		if advertise {
			o.AdvertiseURL = ts.URL
		}
		if protected {
			o.Server.Auth = &mcp.AuthOptions{
				Verifier: mcp.TokenVerifierFunc(func(ctx context.Context, token string) (*mcp.Principal, error) {
					if token != "alice-token" {
						return nil, mcp.ErrInvalidToken
					}
					return &mcp.Principal{Subject: "alice", Issuer: "https://issuer.example"}, nil
				}),
				Resource:             "https://mcp.example/mcp",
				AuthorizationServers: []string{"https://issuer.example"},
			}
		}
		b, err := bridge.New(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		h = b.Server()
		return b, ts.URL
	}
	answer := `{"role":"assistant","model":"m","content":{"type":"text","text":"%s"}}`
	for _, tt := range []struct{ advertise, protected bool }{{true, false}, {false, false}, {true, true}} {
		advertise := tt.advertise
		t.Run(fmt.Sprintf("advertise=%v,protected=%v", tt.advertise, tt.protected), func(t *testing.T) {
			_, urlA := replica(advertise, tt.protected)
			_, urlB := replica(advertise, tt.protected)
			ctx := context.Background()
			caps := `{"sampling":{}}`
			// On a protected front the caller's token is not forwarded
			// (no handler sees it): the owner authenticates the
			// forwarded retry by the caller sealed with the shared keys.
			var hdr http.Header
			if tt.protected {
				hdr = http.Header{"Authorization": {"Bearer alice-token"}}
			}
			r := mcpwire.Post(t, ctx, urlA, mcpwire.Request{Method: "tools/call", Params: `{"name":"sample"}`, Caps: caps, Header: hdr})
			var first struct {
				Result struct{ RequestState string }
			}
			r.Decode(t, &first)
			r = mcpwire.Post(t, ctx, urlB, mcpwire.Request{Method: "tools/call", Caps: caps, Header: hdr,
				Params: `{"name":"sample","inputResponses":{"a":` + fmt.Sprintf(answer, "one") + `},"requestState":` + quoteJSON(first.Result.RequestState) + `}`})
			var second struct {
				Result struct {
					ResultType    string
					RequestState  string
					InputRequests map[string]json.RawMessage
				}
				Error *mcp.Error
			}
			r.Decode(t, &second)
			if !advertise {
				if second.Error == nil || second.Error.Code != -32603 || !strings.Contains(second.Error.Message, "not run again") {
					t.Fatalf("retry on the other replica = %s, want -32603", r.Last())
				}
				return
			}
			if second.Result.ResultType != "input_required" || second.Result.InputRequests["b"] == nil {
				t.Fatalf("forwarded retry = %s, want the owner's next round (b)", r.Last())
			}
			// The last retry, on B again: forwarded, and the call completes.
			r = mcpwire.Post(t, ctx, urlB, mcpwire.Request{Method: "tools/call", Caps: caps, Header: hdr,
				Params: `{"name":"sample","inputResponses":{"b":` + fmt.Sprintf(answer, "two") + `},"requestState":` + quoteJSON(second.Result.RequestState) + `}`})
			if !strings.Contains(string(r.Last()), `"one+two"`) {
				t.Fatalf("final retry = %s, want one+two", r.Last())
			}
		})
	}
}

// Requests a backend sends together become one input_required result.
func TestGatherOneRound(t *testing.T) {
	b, _ := newBridge(t, nil)
	r := mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "tools/call", Params: `{"name":"many"}`, Caps: `{"sampling":{},"elicitation":{},"roots":{}}`})
	var resp struct {
		Result struct {
			InputRequests map[string]struct{ Method string }
		}
	}
	r.Decode(t, &resp)
	got := map[string]string{}
	for k, v := range resp.Result.InputRequests {
		got[k] = v.Method
	}
	want := map[string]string{"name": "elicitation/create", "greet": "sampling/createMessage", "roots": "roots/list"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("one round (-want +got):\n%s", diff)
	}
}

// A caller that asks for logs gets the backend's log messages of its call
// (an exclusive lease: on stdio a log message names no request), at its
// level.
func TestLogsRelayed(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	stdio := func(o *bridge.Options) {
		o.Eras = client.AnyEra
		o.Backend = func() client.Transport {
			return &client.CommandTransport{Command: exe, Env: []string{"BRIDGE_TEST_BACKEND=1"}, Stderr: io.Discard}
		}
	}
	for _, tt := range []struct {
		name string
		edit func(*bridge.Options)
	}{
		{"legacy", func(o *bridge.Options) { o.Eras = client.LegacyOnly }},
		{"modern", func(o *bridge.Options) { o.Eras = client.AnyEra }},
		// On stdio a modern backend's log message names no request either.
		{"modern stdio", stdio},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newBridge(t, tt.edit)
			c := mcptest.NewClient(t, b.Server())
			var got []string
			_, err := c.Client().CallTool(context.Background(), "logs", nil, client.WithLogLevel(mcp.LevelInfo),
				client.WithLog(func(m *client.LogMessage) { got = append(got, string(m.Level)+":"+string(m.Data)) }))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{`info:"one"`}, got); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
		})
	}
}

// Mcp-Param-* headers are checked against the backend tool's x-mcp-header
// parameters, as for a registered tool: a mismatch is -32020, HTTP 400.
func TestParamHeadersChecked(t *testing.T) {
	b, _ := newBridge(t, nil)
	for _, tc := range []struct {
		header string
		status int
	}{{"eu", 200}, {"us", 400}} {
		r := mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "tools/call", Params: `{"name":"region","arguments":{"region":"eu"}}`,
			Header: http.Header{"Mcp-Param-Region": {tc.header}}})
		if r.Status != tc.status {
			t.Errorf("Mcp-Param-Region %s: status %d, want %d: %s", tc.header, r.Status, tc.status, r.Last())
		}
	}
}

// A session whose backend exited while idle is not handed out again: the
// next call gets a new backend session instead of the dead one's error.
// (The backend is spoken to as a legacy one: a modern backend's shared
// session is never idle, its list-changes stream holds it, and that stream
// replaces it on its own when it ends.)
func TestIdleSessionThatExited(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b := startBridge(t, &bridge.Options{
		Backend: func() client.Transport {
			return &client.CommandTransport{Command: exe, Env: []string{"BRIDGE_TEST_BACKEND=1"}, Stderr: io.Discard}
		},
		Eras: client.LegacyOnly,
	})
	c := mcptest.NewClient(t, b.Server())
	if _, err := c.Client().CallTool(context.Background(), "exitsoon", nil); err != nil {
		t.Fatal(err)
	}
	// The session's process exits, and the bridge sees its connection end.
	realtime.Poll(t, 10*time.Second, "the backend session's end", func() bool { return bridge.EndedSessions(b) == 1 })
	res, err := c.Client().CallTool(context.Background(), "echo", map[string]any{"text": "fresh"})
	if err != nil {
		t.Fatalf("a call after the idle session's backend exited: %v", err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "fresh" {
		t.Errorf("echo = %q", got)
	}
}

// A backend may send a notification as soon as its session is up, while
// New is still building the front: the bridge drops it (nobody can have
// listed or listen yet) instead of reading a front that does not exist.
// Under -race this failed with a data race on the front server.
func TestNotificationDuringStart(t *testing.T) {
	be := backend(make(chan string, 4))
	done := make(chan struct{})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for {
			select {
			case <-done:
				return
			default:
				be.NotifyListChanged(mcp.ToolsListChanged)
				runtime.Gosched()
			}
		}
	}()
	b := startBridge(t, &bridge.Options{
		Backend: func() client.Transport { return &client.MemoryTransport{Server: be} },
		Eras:    client.LegacyOnly,
	})
	close(done)
	<-sent
	c := mcptest.NewClient(t, b.Server())
	if _, err := c.Client().CallTool(context.Background(), "echo", map[string]any{"text": "up"}); err != nil {
		t.Fatalf("a call after notifications during start: %v", err)
	}
}
