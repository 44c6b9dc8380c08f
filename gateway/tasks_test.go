package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/internal/realtime"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

// Tests of backends' tool calls run as tasks of the gateway's front
// (Backend.Tasks, TaskTools).

// taskServer is a backend for the task tests; seen gets what its tools
// see: "block" and "ask" when they start, "cancelled" when their call is
// cancelled. gate is what "gate" waits for.
func taskServer(seen chan<- string, gate <-chan struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "work", Version: "1.0.0"}, Logger: quiet, State: mcp.StateOptions{Keys: testKeys}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct {
			Text string `json:"text"`
		}) (string, error) {
			return in.Text, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "gate", Description: "Waits for the test."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			select {
			case <-gate:
				return "opened", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "Waits for its cancellation."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			seen <- "block"
			<-ctx.Done()
			seen <- "cancelled"
			return "", ctx.Err()
		})
	msg := func(t string) *mcp.CreateMessageParams {
		return &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: t}}}}, MaxTokens: 5}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Asks the model twice."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
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
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the model once."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			a, err := req.Sample("a", msg("question"))
			if err != nil {
				return "", err
			}
			return a.Text(), nil
		})
	return s
}

// taskGateway starts a gateway with backend "work" (taskServer: its tools
// TaskOptional, "block" TaskRequired, "echo" never a task, "ask" a task
// when it asks) and "plain" (no task support), in era, the front's
// SyncWait off (a call that may be a task is one at once) unless edit
// changes it. It returns what the backend sees and its gate.
func taskGateway(t *testing.T, era client.EraPreference, edit func(*gateway.Options, []gateway.Backend)) (*gateway.Gateway, chan string, chan struct{}) {
	t.Helper()
	seen, gate := make(chan string, 8), make(chan struct{})
	work := taskServer(seen, gate)
	backends := []gateway.Backend{{
		Name: "work", Transport: func() client.Transport { return &client.MemoryTransport{Server: work} },
		Tasks: mcp.TaskOptional,
		TaskTools: map[string]bridge.TaskTool{"block": {Support: mcp.TaskRequired}, "echo": {},
			"ask": {Support: mcp.TaskOptional, InputStartsTask: true}},
	}, srv{name: "plain", tools: []string{"t"}}.backend()}
	opts := &gateway.Options{Logger: quiet, Bridge: bridge.Options{Eras: era, HoldTimeout: time.Hour},
		Server: mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: testKeys},
			Tasks: mcp.TaskOptions{PollInterval: 10 * time.Millisecond, SyncWait: mcp.Off}}}
	if edit != nil {
		edit(opts, backends)
	}
	g, err := gateway.New(context.Background(), backends, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		g.Server().Shutdown(ctx)
		g.Close()
	})
	return g, seen, gate
}

// taskClient connects to g, declaring the tasks extension (tasks) and
// answering sampling requests with "ans1", "ans2", ...
func taskClient(t *testing.T, g *gateway.Gateway, tasks bool) *client.Client {
	t.Helper()
	var n atomic.Int32
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: g.Server()}, &client.Options{NoCache: true, Tasks: tasks,
		Sample: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("ans", n.Add(1))}}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// receive waits for the backend to see what.
func receive(t *testing.T, seen <-chan string, what string) {
	t.Helper()
	select {
	case s := <-seen:
		if s != what {
			t.Fatalf("the backend saw %q, want %q", s, what)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the backend did not see %q", what)
	}
}

var eras = map[string]client.EraPreference{"legacy": client.LegacyOnly, "modern": client.ModernOnly}

func TestTasksAdvertised(t *testing.T) {
	g, _, _ := taskGateway(t, client.LegacyOnly, nil)
	caps := taskClient(t, g, true).Capabilities()
	if _, ok := caps.Extensions[mcp.TasksExtension]; !ok {
		t.Errorf("a gateway with a backend with tasks does not advertise the extension: %v", caps.Extensions)
	}
	_, plain := start(t, []gateway.Backend{srv{name: "a", tools: []string{"t"}}.backend()}, nil)
	if _, ok := plain.Capabilities().Extensions[mcp.TasksExtension]; ok {
		t.Error("a gateway without task support advertises the tasks extension")
	}
}

// A call through the gateway becomes a task of its front: tasks/get sees
// it working, and it completes with the backend's result.
func TestTaskThroughGateway(t *testing.T) {
	for name, era := range eras {
		t.Run(name, func(t *testing.T) {
			g, _, gate := taskGateway(t, era, nil)
			c := taskClient(t, g, true)
			ctx := context.Background()
			_, task, err := c.StartTool(ctx, "work_gate", nil)
			if err != nil || task == nil {
				t.Fatalf("StartTool = %v %v, want a task", task, err)
			}
			st, err := task.Get(ctx)
			if err != nil || st.Status != mcp.TaskWorking {
				t.Fatalf("tasks/get = %+v %v, want working", st, err)
			}
			close(gate)
			res, err := task.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "opened" {
				t.Errorf("the task's result = %q, want the backend's", got)
			}
		})
	}
}

// The task support of each public name: the backend's TaskTools by its
// own names, none for a backend without task support, and the usual
// errors for names no call routes (denied, unknown), never a task.
func TestTaskSupportThroughGateway(t *testing.T) {
	g, _, _ := taskGateway(t, client.LegacyOnly, func(o *gateway.Options, bs []gateway.Backend) {
		bs[0].DenyTools = []string{"gate"}
	})
	ext, plain := taskClient(t, g, true), taskClient(t, g, false)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		c     *client.Client
		task  bool
		code  int // the error's, 0 for none
		reply string
	}{
		{"work_block", plain, false, -32021, ""},
		{"work_echo", ext, false, 0, "hi"},
		{"plain_t", ext, false, 0, "plain:t"},
		{"work_sample", plain, false, 0, "ans1+ans2"}, // optional: a caller without the extension gets a plain call
		{"work_gate", ext, false, -32602, ""},         // denied
		{"nope_x", ext, false, -32602, ""},
	} {
		var args any
		if tc.name == "work_echo" {
			args = map[string]any{"text": "hi"}
		}
		res, task, err := tc.c.StartTool(ctx, tc.name, args)
		var e *mcp.Error
		switch {
		case tc.code != 0:
			if !errors.As(err, &e) || e.Code != tc.code || task != nil {
				t.Errorf("%s: %v %v, want error %d", tc.name, task, err, tc.code)
			}
		case err != nil || task != nil || res == nil:
			t.Errorf("%s: %v %v %v, want a direct result", tc.name, res, task, err)
		case res.Content[0].(*mcp.TextContent).Text != tc.reply:
			t.Errorf("%s = %q, want %q", tc.name, res.Content[0].(*mcp.TextContent).Text, tc.reply)
		}
	}
}

// A tool the backend does not have, of a backend whose tools may all be
// tasks, is a task like the others (the gateway does not ask the backend
// first): it fails with the backend's error.
func TestTaskUnknownToolOfBackend(t *testing.T) {
	g, _, _ := taskGateway(t, client.LegacyOnly, nil)
	_, task, err := taskClient(t, g, true).StartTool(context.Background(), "work_nope", nil)
	if err != nil || task == nil {
		t.Fatalf("StartTool = %v %v, want a task", task, err)
	}
	_, err = task.Wait(context.Background())
	var e *mcp.Error
	if !errors.As(err, &e) || e.Code != -32602 || !strings.Contains(e.Message, "nope") {
		t.Errorf("Wait = %v, want the backend's -32602 naming the tool", err)
	}
}

// tasks/cancel of a running task cancels its backend call (the backend
// gets notifications/cancelled), and the task ends cancelled.
func TestTaskCancelReachesBackendThroughGateway(t *testing.T) {
	for name, era := range eras {
		t.Run(name, func(t *testing.T) {
			g, seen, _ := taskGateway(t, era, nil)
			c := taskClient(t, g, true)
			ctx := context.Background()
			_, task, err := c.StartTool(ctx, "work_block", nil)
			if err != nil || task == nil {
				t.Fatalf("StartTool = %v %v, want a task", task, err)
			}
			receive(t, seen, "block")
			if err := task.Cancel(ctx); err != nil {
				t.Fatal(err)
			}
			receive(t, seen, "cancelled")
			if _, err := task.Wait(ctx); !errors.Is(err, client.ErrTaskCancelled) {
				t.Errorf("Wait = %v, want ErrTaskCancelled", err)
			}
		})
	}
}

// A backend's input requests inside a task park it in input_required;
// tasks/update answers them and the same backend call completes the task.
func TestTaskInputRequiredThroughGateway(t *testing.T) {
	for name, era := range eras {
		t.Run(name, func(t *testing.T) {
			g, _, _ := taskGateway(t, era, nil)
			c := taskClient(t, g, true)
			var statuses []mcp.TaskStatus
			res, err := c.CallTool(context.Background(), "work_sample", nil, client.WithTaskStatus(func(s client.TaskState) {
				if len(statuses) == 0 || statuses[len(statuses)-1] != s.Status {
					statuses = append(statuses, s.Status)
				}
			}))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "ans1+ans2" {
				t.Errorf("work_sample = %q, want both answers relayed in order", got)
			}
			seen := false
			for _, s := range statuses {
				seen = seen || s == mcp.TaskInputRequired
			}
			if !seen || statuses[len(statuses)-1] != mcp.TaskCompleted {
				t.Errorf("statuses %v, want input_required on the way to completed", statuses)
			}
		})
	}
}

// A tool whose input starts its task (InputStartsTask, by the backend's
// name) becomes a task when the backend asks, however long SyncWait is;
// tasks/cancel while it waits for input lets go of the backend call held
// for it at once, not after HoldTimeout: with one backend session, held by
// that call, the next call gets the session.
func TestTaskCancelWhileWaitingForInputThroughGateway(t *testing.T) {
	for name, era := range eras {
		t.Run(name, func(t *testing.T) {
			g, _, _ := taskGateway(t, era, func(o *gateway.Options, _ []gateway.Backend) {
				o.Server.Tasks.SyncWait = time.Hour
				o.Bridge.MaxSessions = 1
				o.Bridge.LeaseWait = 10 * time.Second // bounds the wait of a failing test
			})
			c := taskClient(t, g, true)
			ctx := context.Background()
			_, task, err := c.StartTool(ctx, "work_ask", nil)
			if err != nil || task == nil {
				t.Fatalf("StartTool = %v %v, want a task started by the input request", task, err)
			}
			realtime.Poll(t, 10*time.Second, "the task waiting for input", func() bool {
				st, err := task.Get(ctx)
				return err == nil && st.Status == mcp.TaskInputRequired
			})
			if err := task.Cancel(ctx); err != nil {
				t.Fatal(err)
			}
			if st, err := task.Get(ctx); err != nil || st.Status != mcp.TaskCancelled {
				t.Errorf("tasks/get = %+v %v, want cancelled", st, err)
			}
			res, err := c.CallTool(ctx, "work_echo", map[string]any{"text": "next"})
			if err != nil || res.Content[0].(*mcp.TextContent).Text != "next" {
				t.Errorf("the next call = %v %v, want it served by the session the task let go of", res, err)
			}
		})
	}
}

// A caller without the scopes a backend's tool needs gets 403
// insufficient_scope for a call that would be a task, as for any call,
// and no task is made; with them it gets the task.
func TestTaskScopes(t *testing.T) {
	as := oauthtest.NewServer(t, nil)
	seen, gate := make(chan string, 8), make(chan struct{})
	work := taskServer(seen, gate)
	be := gateway.Backend{Name: "work", Transport: func() client.Transport { return &client.MemoryTransport{Server: work} },
		Tasks: mcp.TaskRequired, Scopes: []string{"work:run"}}
	g, err := gateway.New(context.Background(), []gateway.Backend{be}, &gateway.Options{Logger: quiet, Server: mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: testKeys},
		Tasks: mcp.TaskOptions{SyncWait: mcp.Off},
		Auth:  &mcp.AuthOptions{Verifier: as.Verifier(resource), Resource: resource, AuthorizationServers: []string{as.URL}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	close(gate)
	caps := `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	for _, tc := range []struct {
		name   string
		scopes []string
		caps   string
		status int
		want   string
	}{
		{"no scope", nil, caps, 403, `"error":"insufficient_scope"`},
		{"no scope, no extension", nil, "", 403, `"error":"insufficient_scope"`},
		{"the scope", []string{"work:run"}, caps, 200, `"resultType":"task"`},
		{"the scope, no extension", []string{"work:run"}, "", 400, `-32021`},
	} {
		token := as.Token(&oauthtest.TokenOptions{Scopes: tc.scopes, Audience: resource})
		resp := serve(t, g.Server(), mcpwire.Request{Method: "tools/call", Params: `{"name":"work_gate","arguments":{}}`, Caps: tc.caps}, token)
		if resp.Status != tc.status || !strings.Contains(string(resp.Raw), tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.name, resp.Status, resp.Raw, tc.status, tc.want)
		}
	}
}

// Reload cannot turn tasks on for a gateway whose front started without
// them, and changes the task support of a gateway that has them; New
// refuses an invalid TaskSupport.
func TestTaskReload(t *testing.T) {
	g, _ := start(t, []gateway.Backend{srv{name: "a", tools: []string{"t"}}.backend()}, nil)
	b := srv{name: "a", tools: []string{"t"}}.backend()
	b.Tasks = mcp.TaskOptional
	err := g.Reload(context.Background(), []gateway.Backend{b}, "")
	if err == nil || !strings.Contains(err.Error(), `backend "a" has task support`) || !strings.Contains(err.Error(), "restart the gateway") {
		t.Errorf("Reload turning tasks on = %v, want an error naming the backend", err)
	}
	// A gateway that started with tasks takes new task support on reload.
	tg, _, _ := taskGateway(t, client.LegacyOnly, nil)
	plain := taskClient(t, tg, false)
	if _, err := plain.CallTool(context.Background(), "work_echo", map[string]any{"text": "hi"}); err != nil {
		t.Fatalf("work_echo before the reload: %v", err)
	}
	work := taskServer(make(chan string, 8), make(chan struct{}))
	reloaded := gateway.Backend{Name: "work", Transport: func() client.Transport { return &client.MemoryTransport{Server: work} },
		TaskTools: map[string]bridge.TaskTool{"echo": {Support: mcp.TaskRequired}}}
	if err := tg.Reload(context.Background(), []gateway.Backend{reloaded}, ""); err != nil {
		t.Fatal(err)
	}
	var e *mcp.Error
	if _, err := plain.CallTool(context.Background(), "work_echo", map[string]any{"text": "hi"}); !errors.As(err, &e) || e.Code != -32021 {
		t.Errorf("work_echo, required after the reload, without the extension = %v, want -32021", err)
	}
	bad := srv{name: "a", tools: []string{"t"}}.backend()
	bad.Tasks = mcp.TaskRequired + 1
	if _, err := gateway.New(context.Background(), []gateway.Backend{bad}, &gateway.Options{Logger: quiet}); err == nil || !strings.Contains(err.Error(), "invalid TaskSupport") {
		t.Errorf("New with an invalid Tasks = %v", err)
	}
}
