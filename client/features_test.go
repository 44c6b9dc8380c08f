package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

var stateKeys = mcp.StateOptions{Keys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}}

// inputServer has tools that ask for each kind of input, and a task tool.
func inputServer(t *testing.T) *mcp.Server {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "input"}, State: stateKeys})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Samples."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		r, err := req.Sample("q", &mcp.CreateMessageParams{MaxTokens: 10, Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: "2+2?"}}}}})
		if err != nil {
			return "", err
		}
		return "model said " + r.Text(), nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "Lists roots."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		r, err := req.ListRoots("r")
		if err != nil {
			return "", err
		}
		return r.Roots[0].URI, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "A task.", TaskSupport: mcp.TaskOptional}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		req.StartTask()
		r, err := req.Elicit("ok", &mcp.ElicitParams{Message: "Go on?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"sure":{"type":"boolean"}}}`)})
		if err != nil {
			return "", err
		}
		return "done: " + string(r.Action), nil
	})
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

func inputOptions(era mcp.Era) *client.Options {
	return &client.Options{
		Eras:  only(era),
		Tasks: true,
		Elicit: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"sure": true}}, nil
		},
		Sample: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "4"}}}, nil
		},
		Roots: func(ctx context.Context) ([]mcp.Root, error) {
			return []mcp.Root{{URI: "file:///work"}}, nil
		},
	}
}

func text(t *testing.T) func(*mcp.CallToolResult, error) string {
	return func(r *mcp.CallToolResult, err error) string {
		t.Helper()
		return textOf(t, r, err)
	}
}

func textOf(t *testing.T, r *mcp.CallToolResult, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Content) == 0 {
		t.Fatal("no content")
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T", r.Content[0])
	}
	return tc.Text
}

// ReturnInputRequired hands the input_required round to the caller, who
// retries with the answers and the requestState.
func TestReturnInputRequired(t *testing.T) {
	ctx := context.Background()
	c, err := client.Connect(ctx, transports(t, inputServer(t))["memory"], inputOptions(mcp.EraModern))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.Call(ctx, "tools/call", map[string]any{"name": "sample"}, client.ReturnInputRequired())
	if err != nil {
		t.Fatal(err)
	}
	var ir struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  *string                    `json:"requestState"`
	}
	if err := json.Unmarshal(raw, &ir); err != nil || ir.ResultType != "input_required" || ir.InputRequests["q"] == nil {
		t.Fatalf("first round = %s (%v), want input_required asking q", raw, err)
	}
	retry := map[string]any{"name": "sample", "inputResponses": map[string]any{
		"q": map[string]any{"role": "assistant", "model": "m", "content": map[string]any{"type": "text", "text": "5"}}}}
	if ir.RequestState != nil {
		retry["requestState"] = *ir.RequestState
	}
	raw, err = c.Call(ctx, "tools/call", retry, client.ReturnInputRequired())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "model said 5") {
		t.Errorf("retry = %s, want the caller's answer used", raw)
	}
}

func TestInputHandlersBothEras(t *testing.T) {
	s := inputServer(t)
	ctx := context.Background()
	for name, tr := range transports(t, s) {
		for _, era := range []mcp.Era{mcp.EraModern, mcp.EraLegacy} {
			t.Run(name+"/"+string(era), func(t *testing.T) {
				c, err := client.Connect(ctx, tr, inputOptions(era))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				caps := c.ClientCapabilities()
				if caps.Elicitation == nil || caps.Sampling == nil || caps.Roots == nil {
					t.Errorf("capabilities %+v do not declare every handler", caps)
				}
				if got := text(t)(c.CallTool(ctx, "sample", nil)); got != "model said 4" {
					t.Errorf("sample = %q", got)
				}
				if got := text(t)(c.CallTool(ctx, "roots", nil)); got != "file:///work" {
					t.Errorf("roots = %q", got)
				}
			})
		}
	}
}

func TestNoHandlerDeclaresNothing(t *testing.T) {
	s := inputServer(t)
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if diff := cmp.Diff(mcp.ClientCapabilities{}, c.ClientCapabilities()); diff != "" {
		t.Errorf("capabilities without handlers (-want +got):\n%s", diff)
	}
	_, err = c.CallTool(context.Background(), "sample", nil)
	var me *mcp.Error
	if !errors.As(err, &me) || me.Code != mcp.CodeMissingCapability {
		t.Errorf("sample without a handler = %v, want a -32021 error", err)
	}
}

// TestTask runs in a synctest bubble: the polls wait the server's
// pollIntervalMs on the fake clock.
func TestTask(t *testing.T) {
	synctest.Test(t, testTask)
}

func testTask(t *testing.T) {
	s := inputServer(t)
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.MemoryTransport{Server: s}, inputOptions(mcp.EraModern))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, task, err := c.StartTool(ctx, "slow", nil)
	if err != nil || res != nil || task == nil {
		t.Fatalf("StartTool = %v, %v, %v; want a task", res, task, err)
	}
	if got := text(t)(task.Wait(ctx)); got != "done: accept" {
		t.Errorf("Wait = %q", got)
	}
	// CallTool waits by itself.
	if got := text(t)(c.CallTool(ctx, "slow", nil)); got != "done: accept" {
		t.Errorf("CallTool = %q", got)
	}
	// Cancel.
	_, task, err = c.StartTool(ctx, "slow", nil)
	if err != nil || task == nil {
		t.Fatalf("StartTool = %v, %v", task, err)
	}
	if err := task.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Wait(ctx); !errors.Is(err, client.ErrTaskCancelled) {
		t.Errorf("Wait after Cancel = %v, want ErrTaskCancelled", err)
	}
}

func TestListen(t *testing.T) {
	ctx := context.Background()
	for _, era := range []mcp.Era{mcp.EraModern, mcp.EraLegacy} {
		for _, name := range []string{"memory", "http"} {
			t.Run(name+"/"+string(era), func(t *testing.T) {
				s := testServer(t)
				defer s.Shutdown(context.Background())
				tr := transports(t, s)[name]
				c, err := client.Connect(ctx, tr, &client.Options{Eras: only(era)})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				want := client.ListenFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"test://a"}}
				var got []string
				for ev, err := range c.Listen(lctx, want) {
					if err != nil {
						t.Fatal(err)
					}
					if ev.Acknowledged != nil {
						if m := want.Missing(*ev.Acknowledged); m.ToolsListChanged {
							t.Errorf("acknowledged %+v leaves out tools", *ev.Acknowledged)
						}
						s.NotifyResourceUpdated("test://a")
						continue
					}
					got = append(got, ev.Notification.Method)
					if len(got) == 1 {
						s.RemoveTools("fail")
					}
					if len(got) == 2 {
						break
					}
				}
				if diff := cmp.Diff([]string{"notifications/resources/updated", "notifications/tools/list_changed"}, got); diff != "" {
					t.Errorf("notifications (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestListenLegacyShared checks that two Listen streams on one legacy
// session that name the same resource share its subscription: the one
// that ends first leaves the other subscribed.
func TestListenLegacyShared(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := testServer(t)
	defer s.Shutdown(context.Background())
	c, err := client.Connect(ctx, transports(t, s)["memory"], &client.Options{Eras: only(mcp.EraLegacy)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f := client.ListenFilter{ResourceSubscriptions: []string{"test://a"}}
	var got []string
	for ev, err := range c.Listen(ctx, f) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Acknowledged != nil {
			// A second stream on the same URI opens and ends.
			for ev2, err := range c.Listen(ctx, f) {
				if err != nil || ev2.Acknowledged == nil {
					t.Fatalf("second stream: %+v, %v", ev2, err)
				}
				break
			}
			s.NotifyResourceUpdated("test://a")
			continue
		}
		got = append(got, ev.Notification.Method)
		break
	}
	if diff := cmp.Diff([]string{"notifications/resources/updated"}, got); diff != "" {
		t.Errorf("the first stream's notifications (-want +got):\n%s", diff)
	}
}

func TestListenStdio(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, selfCommand("serve"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Two streams at once, each named by its own id.
	acks := 0
	for ev, err := range c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Acknowledged == nil {
			t.Fatalf("first event %+v, want the acknowledgment", ev)
		}
		for ev2, err := range c.Listen(ctx, client.ListenFilter{PromptsListChanged: true}) {
			if err != nil || ev2.Acknowledged == nil || ev2.Acknowledged.ToolsListChanged {
				t.Fatalf("second stream: %+v, %v", ev2, err)
			}
			acks++
			break
		}
		acks++
		break
	}
	if acks != 2 {
		t.Errorf("%d acknowledgments, want 2", acks)
	}
}

func TestCache(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "c"}, Cache: mcp.CacheOptions{TTL: time.Hour}})
	var reads atomic.Int32
	s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		reads.Add(1)
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "x"}}}, nil
	})
	hs := httptest.NewServer(s)
	defer hs.Close()
	ctx := context.Background()
	shared := client.NewCache(10)
	connect := func(cred string) *client.Client {
		c, err := client.Connect(ctx, &client.HTTPTransport{URL: hs.URL}, &client.Options{Cache: shared, CacheCredential: cred})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := connect("alice"), connect("bob")
	read := func(c *client.Client, opts ...client.CallOption) {
		t.Helper()
		if _, err := c.ReadResource(ctx, "test://r", opts...); err != nil {
			t.Fatal(err)
		}
	}
	read(a)
	read(a)
	read(b) // public: shared
	if n := reads.Load(); n != 1 {
		t.Errorf("%d reads after three cached reads, want 1", n)
	}
	read(a, client.NoCache())
	if n := reads.Load(); n != 2 {
		t.Errorf("%d reads after a NoCache read, want 2", n)
	}
	s.NotifyResourceUpdated("test://r") // nobody listens: the cache is only invalidated by what arrives
	read(a)
	if n := reads.Load(); n != 2 {
		t.Errorf("%d reads, want 2", n)
	}
}

func TestCancelStdio(t *testing.T) {
	s := mcp.NewServer(nil)
	started := make(chan struct{})
	cancelled := make(chan struct{})
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "Blocks."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return "", ctx.Err()
	})
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, &client.Options{Eras: client.LegacyOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	if _, err := c.CallTool(ctx, "block", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("CallTool = %v, want context.Canceled", err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's handler was not cancelled")
	}
}

// only is the preference that settles on era alone.
func only(era mcp.Era) client.EraPreference {
	if era == mcp.EraLegacy {
		return client.LegacyOnly
	}
	return client.ModernOnly
}
