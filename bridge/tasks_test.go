package bridge_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/internal/realtime"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// Tests of bridged tool calls run as tasks of the front (Options.Tasks).

// taskBridge is a bridge whose tools are TaskOptional, "block" and
// "sample" TaskRequired, "echo" never a task, in front of the legacy or
// the modern era of backend.
func taskBridge(t *testing.T, era client.EraPreference, edit func(*bridge.Options)) (*bridge.Bridge, chan string) {
	started := make(chan string, 4)
	be := backend(started)
	o := &bridge.Options{
		Backend:   func() client.Transport { return &client.MemoryTransport{Server: be} },
		Eras:      era,
		Tasks:     mcp.TaskOptional,
		TaskTools: map[string]bridge.TaskTool{"block": {Support: mcp.TaskRequired}, "sample": {Support: mcp.TaskRequired}, "echo": {}},
		Server:    mcp.ServerOptions{Tasks: mcp.TaskOptions{PollInterval: 10 * time.Millisecond}},
	}
	if edit != nil {
		edit(o)
	}
	b := startBridge(t, o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Server().Shutdown(ctx)
	})
	return b, started
}

// withTasks declares the tasks extension.
func withTasks() mcptest.Option {
	return mcptest.ClientOptions(func(o *client.Options) { o.Tasks = true })
}

func TestTasksAdvertised(t *testing.T) {
	for _, tt := range []struct {
		name  string
		tasks mcp.TaskSupport
		want  bool
	}{{"off", mcp.TaskNone, false}, {"on", mcp.TaskOptional, true}} {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newBridge(t, func(o *bridge.Options) { o.Tasks = tt.tasks })
			d, err := mcptest.NewClient(t, b.Server()).Discover()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := d.Capabilities.Extensions[mcp.TasksExtension]; ok != tt.want {
				t.Errorf("the tasks extension advertised: %v, want %v (%v)", ok, tt.want, d.Capabilities.Extensions)
			}
		})
	}
}

// Without the extension a required tool is -32021 and the others answer
// directly; with it, an optional tool that answers quickly is answered
// directly too, and one that is never a task always is.
func TestTaskSupportPerTool(t *testing.T) {
	b, _ := taskBridge(t, client.LegacyOnly, nil)
	plain := mcptest.NewClient(t, b.Server())
	_, err := plain.Client().CallTool(context.Background(), "block", nil)
	var e *mcp.Error
	if !errors.As(err, &e) || e.Code != -32021 {
		t.Errorf("a required tool without the extension: %v, want -32021", err)
	}
	ext := mcptest.NewClient(t, b.Server(), withTasks())
	for name, args := range map[string]any{"echo": map[string]any{"text": "hi"}, "progress": nil} {
		res, task, err := ext.Client().StartTool(context.Background(), name, args)
		if err != nil || task != nil || res == nil {
			t.Errorf("%s with the extension: %v %v %v, want a direct result", name, res, task, err)
		}
	}
}

// A bridged call run as a task: tasks/get sees it working, tasks/cancel
// cancels the backend call (the backend gets notifications/cancelled), and
// the task ends cancelled.
func TestTaskCancelReachesBackend(t *testing.T) {
	for _, era := range []client.EraPreference{client.LegacyOnly, client.ModernOnly} {
		t.Run(eraName(era), func(t *testing.T) {
			b, started := taskBridge(t, era, nil)
			c := mcptest.NewClient(t, b.Server(), withTasks())
			ctx := context.Background()
			_, task, err := c.Client().StartTool(ctx, "block", nil)
			if err != nil || task == nil {
				t.Fatalf("StartTool = %v %v, want a task", task, err)
			}
			if s := <-started; s != "block" {
				t.Fatal(s)
			}
			st, err := task.Get(ctx)
			if err != nil || st.Status != mcp.TaskWorking {
				t.Fatalf("tasks/get = %+v %v, want working", st, err)
			}
			if err := task.Cancel(ctx); err != nil {
				t.Fatal(err)
			}
			if s := <-started; s != "cancelled" {
				t.Fatalf("the backend saw %q, want its call cancelled", s)
			}
			if _, err := task.Wait(ctx); !errors.Is(err, client.ErrTaskCancelled) {
				t.Errorf("Wait = %v, want ErrTaskCancelled", err)
			}
		})
	}
}

// A backend's sampling requests during a task park the task in
// input_required with them in inputRequests; tasks/update answers them and
// the same backend call goes on to complete the task.
// The task starts before the backend call (SyncWait off), or when the
// backend asks (InputStartsTask, however long SyncWait is).
func TestTaskInputRequired(t *testing.T) {
	starts := map[string]func(*bridge.Options){
		"at once": func(o *bridge.Options) { o.Server.Tasks.SyncWait = mcp.Off },
		"on input": func(o *bridge.Options) {
			o.Server.Tasks.SyncWait = time.Minute
			o.TaskTools["sample"] = bridge.TaskTool{Support: mcp.TaskOptional, InputStartsTask: true}
		},
	}
	for _, era := range []client.EraPreference{client.LegacyOnly, client.ModernOnly} {
		for start, edit := range starts {
			t.Run(eraName(era)+"/"+start, func(t *testing.T) {
				b, _ := taskBridge(t, era, edit)
				c := mcptest.NewClient(t, b.Server(), withTasks(), countingSampler())
				var statuses []mcp.TaskStatus
				res, err := c.Client().CallTool(context.Background(), "sample", nil, client.WithTaskStatus(func(s client.TaskState) {
					if len(statuses) == 0 || statuses[len(statuses)-1] != s.Status {
						statuses = append(statuses, s.Status)
					}
				}))
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != "ans1+ans2" {
					t.Errorf("sample = %q, want both answers relayed in order", got)
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
}

// An input request before the task starts (within SyncWait) is an
// input_required round of the tools/call itself; the retry goes on and,
// for a required tool, gets a task created finished.
func TestTaskInputBeforeTask(t *testing.T) {
	b, _ := taskBridge(t, client.LegacyOnly, func(o *bridge.Options) {
		o.Server.Tasks.SyncWait = time.Minute
	})
	caps := `{"sampling":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	r := mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "tools/call", Params: `{"name":"sample"}`, Caps: caps})
	var resp struct {
		Result struct {
			ResultType   string
			RequestState string
			TaskID       string `json:"taskId"`
		}
	}
	answer := `{"role":"assistant","model":"m","content":{"type":"text","text":"x"}}`
	for _, key := range []string{"a", "b"} {
		r.Decode(t, &resp)
		if resp.Result.ResultType != "input_required" {
			t.Fatalf("round for %s = %s", key, r.Last())
		}
		r = mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "tools/call", Caps: caps,
			Params: `{"name":"sample","inputResponses":{"` + key + `":` + answer + `},"requestState":` + quoteJSON(resp.Result.RequestState) + `}`})
	}
	r.Decode(t, &resp)
	if resp.Result.ResultType != "task" || resp.Result.TaskID == "" {
		t.Fatalf("last round = %s, want a task", r.Last())
	}
	c := mcptest.NewClient(t, b.Server(), withTasks())
	res, err := c.Client().Task(resp.Result.TaskID).Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "x+x" {
		t.Errorf("task result = %q", got)
	}
}

func eraName(e client.EraPreference) string {
	if e == client.ModernOnly {
		return "modern"
	}
	return "legacy"
}

// A task that waits for input longer than HoldTimeout: its backend call is
// cancelled, and the late tasks/update fails the task (it is never run
// again).
func TestTaskHoldTimeout(t *testing.T) {
	b, _ := taskBridge(t, client.LegacyOnly, func(o *bridge.Options) {
		o.Server.Tasks.SyncWait = mcp.Off
		o.HoldTimeout = 20 * time.Millisecond
	})
	c := mcptest.NewClient(t, b.Server(), withTasks(), countingSampler())
	ctx := context.Background()
	_, task, err := c.Client().StartTool(ctx, "sample", nil)
	if err != nil || task == nil {
		t.Fatalf("StartTool = %v %v, want a task", task, err)
	}
	realtime.Poll(t, 10*time.Second, "the task waiting for input", func() bool {
		st, err := task.Get(ctx)
		return err == nil && st.Status == mcp.TaskInputRequired
	})
	realtime.Poll(t, 10*time.Second, "the held call's end", func() bool { return bridge.Held(b) == 0 })
	_, err = task.Wait(ctx) // answers the input: the task runs on, and fails
	var e *mcp.Error
	if !errors.As(err, &e) || e.Code != -32603 || !strings.Contains(e.Message, "not run again") {
		t.Errorf("Wait = %v, want the task failed with -32603 (not run again)", err)
	}
}

// tasks/cancel of a task that waits for input lets go of its held backend
// call at once (cancelling it), not after HoldTimeout.
func TestTaskCancelWhileWaitingForInput(t *testing.T) {
	b, _ := taskBridge(t, client.LegacyOnly, func(o *bridge.Options) {
		o.Server.Tasks.SyncWait = mcp.Off
		o.HoldTimeout = time.Hour
	})
	c := mcptest.NewClient(t, b.Server(), withTasks(), countingSampler())
	ctx := context.Background()
	_, task, err := c.Client().StartTool(ctx, "sample", nil)
	if err != nil || task == nil {
		t.Fatalf("StartTool = %v %v, want a task", task, err)
	}
	realtime.Poll(t, 10*time.Second, "the task waiting for input", func() bool {
		st, err := task.Get(ctx)
		return err == nil && st.Status == mcp.TaskInputRequired
	})
	if n := bridge.Held(b); n != 1 {
		t.Fatalf("%d held calls, want the task's", n)
	}
	if err := task.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	realtime.Poll(t, 10*time.Second, "the held call's end", func() bool { return bridge.Held(b) == 0 })
	if st, err := task.Get(ctx); err != nil || st.Status != mcp.TaskCancelled {
		t.Errorf("tasks/get = %+v %v, want cancelled", st, err)
	}
}
