package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Tests of TaskProvider: a Provider's tools/call run as tasks.

// taskProvider answers tools/call of "slow" (blocks until released or
// cancelled), "quick", "ask" (asks for an elicitation under key "k",
// counting its runs in state) and "fail" (a protocol error); their task
// support comes from support.
type taskProvider struct {
	support   map[string]TaskSupport
	release   chan string
	cancelled chan struct{}
	taskIDs   chan string // the TaskID of each askTask run
	dropped   chan string // CancelTask's ids
}

func (p *taskProvider) ToolTaskSupport(name string) TaskSupport { return p.support[name] }

func (p *taskProvider) CancelTask(id string) { p.dropped <- id }

func (p *taskProvider) Provide(ctx context.Context, req *MethodRequest) (*ProvidedResult, error) {
	if req.Method != "tools/call" {
		return &ProvidedResult{Body: json.RawMessage(`{"tools":[]}`)}, nil
	}
	var params struct {
		Name string `json:"name"`
	}
	json.Unmarshal(req.Params, &params)
	text := func(s string) *ProvidedResult {
		b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}})
		return &ProvidedResult{Body: b}
	}
	switch params.Name {
	case "slow":
		time.Sleep(20 * time.Millisecond) // past SyncWait: in the task (a synctest bubble's clock)
		req.Progress(1, 2, "half way")
		select {
		case s := <-p.release:
			return text(s), nil
		case <-ctx.Done():
			p.cancelled <- struct{}{}
			return nil, ctx.Err()
		}
	case "quick":
		return &ProvidedResult{Body: json.RawMessage(`{"content":[{"type":"text","text":"quick"}],"isError":true,"_meta":{"x":1}}`)}, nil
	case "fail":
		return nil, &Error{Code: -32001, Message: "backend refused"}
	case "ask", "askTask":
		if params.Name == "askTask" {
			req.StartTask()
			p.taskIDs <- req.TaskID()
		}
		var runs int
		req.LoadState(&runs)
		runs++
		if err := req.SaveState(runs); err != nil {
			return nil, err
		}
		raw, err := req.RequestInput("k", "elicitation/create", json.RawMessage(`{"mode":"form","message":"ok?","requestedSchema":{"type":"object","properties":{}}}`))
		if err != nil {
			return nil, err
		}
		return text(string(raw) + " after " + string(rune('0'+runs)) + " runs"), nil
	}
	return nil, InvalidParams("Unknown tool: " + params.Name)
}

func providerTaskServer(t *testing.T) (*Server, *taskProvider) {
	p := &taskProvider{
		support:   map[string]TaskSupport{"slow": TaskOptional, "quick": TaskRequired, "ask": TaskOptional, "askTask": TaskOptional, "fail": TaskRequired},
		release:   make(chan string, 1),
		cancelled: make(chan struct{}, 1),
		taskIDs:   make(chan string, 4),
		dropped:   make(chan string, 4),
	}
	s := NewServer(&ServerOptions{Provider: p, Tasks: TaskOptions{SyncWait: 10 * time.Millisecond}})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s, p
}

func TestTaskProviderDiscover(t *testing.T) {
	s, _ := providerTaskServer(t)
	r := ext(t, s, "server/discover", `{}`)
	caps, _ := r.Result["capabilities"].(map[string]any)
	exts, _ := caps["extensions"].(map[string]any)
	if _, ok := exts[TasksExtension]; !ok {
		t.Errorf("server/discover of a TaskProvider's server: capabilities %v, want the tasks extension", caps)
	}
	plain := NewServer(&ServerOptions{Provider: ProviderFunc(func(ctx context.Context, req *MethodRequest) (*ProvidedResult, error) { return nil, nil })})
	if r := ext(t, plain, "tasks/get", `{"taskId":"x"}`); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("tasks/get on a plain Provider's server = %+v, want -32601", r.Error)
	}
}

func TestTaskProviderLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, p := providerTaskServer(t)
		// Without the extension: optional runs directly, required is -32021.
		p.release <- "direct"
		r := taskCall(t, context.Background(), s, nil, `{}`, "tools/call", `{"name":"slow","arguments":{}}`)
		if r.Error != nil || r.Result["resultType"] != "complete" {
			t.Fatalf("slow without the extension = %+v %+v, want a direct result", r.Result, r.Error)
		}
		r = taskCall(t, context.Background(), s, nil, `{}`, "tools/call", `{"name":"quick","arguments":{}}`)
		if r.Error == nil || r.Error.Code != -32021 {
			t.Fatalf("required tool without the extension = %+v, want -32021", r.Error)
		}
		// With it: a task, whose progress is its status message.
		id := startTask(t, s, "slow")
		settle(t, "the status message", func() bool { return getTask(t, s, id)["statusMessage"] == "half way" })
		p.release <- "done"
		task := awaitStatus(t, s, id, TaskCompleted, TaskFailed)
		res, _ := task["result"].(map[string]any)
		if content, _ := res["content"].([]any); len(content) != 1 || content[0].(map[string]any)["text"] != "done" {
			t.Errorf("completed task = %v, want the provider's result inlined", task)
		}
		// A required tool that answers at once: a task created finished,
		// with the provider's body (isError, its own _meta) kept.
		id = startTask(t, s, "quick")
		task = getTask(t, s, id)
		res, _ = task["result"].(map[string]any)
		meta, _ := res["_meta"].(map[string]any)
		if task["status"] != "completed" || res["isError"] != true || meta["x"] != 1.0 || res["resultType"] != "complete" {
			t.Errorf("quick task = %v", task)
		}
		id = startTask(t, s, "fail")
		task = getTask(t, s, id)
		if e, _ := task["error"].(map[string]any); task["status"] != "failed" || e["code"] != -32001.0 {
			t.Errorf("failing task = %v", task)
		}
	})
}

func TestTaskProviderCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, p := providerTaskServer(t)
		id := startTask(t, s, "slow")
		ext(t, s, "tasks/cancel", `{"taskId":"`+id+`"}`)
		select {
		case <-p.cancelled:
		case <-time.After(5 * time.Second):
			t.Fatal("tasks/cancel did not cancel the provider's context")
		}
		if st := awaitStatus(t, s, id, TaskCancelled, TaskCompleted, TaskFailed)["status"]; st != "cancelled" {
			t.Errorf("status = %v, want cancelled", st)
		}
	})
}

// TestTaskProviderInput: a provider's input request in a task parks it in
// input_required; tasks/update runs Provide again with the answer and its
// saved state.
func TestTaskProviderInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, p := providerTaskServer(t)
		// Input within SyncWait: an input_required round before any task.
		r := ext(t, s, "tools/call", `{"name":"ask","arguments":{}}`)
		if r.Result["resultType"] != "input_required" {
			t.Fatalf("ask = %+v %+v, want input_required", r.Result, r.Error)
		}
		// StartTask before asking: the task parks in input_required.
		id := startTask(t, s, "askTask")
		task := awaitStatus(t, s, id, TaskInputRequired, TaskFailed)
		if diff := cmp.Diff([]string{"k"}, inputKeys(task)); diff != "" {
			t.Fatalf("input keys (-want +got):\n%s\n%v", diff, task)
		}
		if got := <-p.taskIDs; got != id {
			t.Errorf("TaskID = %q, want the task's %q", got, id)
		}
		update(t, s, id, `{"k":{"action":"accept","content":{}}}`)
		task = awaitStatus(t, s, id, TaskCompleted, TaskFailed)
		res, _ := task["result"].(map[string]any)
		content, _ := res["content"].([]any)
		if len(content) != 1 || content[0].(map[string]any)["text"] != `{"action":"accept","content":{}} after 2 runs` {
			t.Errorf("task after the update = %v", task)
		}
	})
}

// TestTaskProviderCancelParked: tasks/cancel of a task waiting for input
// (no run going on) tells the provider, a TaskCanceller.
func TestTaskProviderCancelParked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, p := providerTaskServer(t)
		id := startTask(t, s, "askTask")
		<-p.taskIDs
		awaitStatus(t, s, id, TaskInputRequired)
		ext(t, s, "tasks/cancel", `{"taskId":"`+id+`"}`)
		synctest.Wait()
		select {
		case got := <-p.dropped:
			if got != id {
				t.Errorf("CancelTask(%q), want %q", got, id)
			}
		default:
			t.Error("CancelTask was not called")
		}
	})
}

// admittingProvider is a taskProvider whose TaskAdmitter refuses the
// callers without a principal, and records the tools it was asked about.
type admittingProvider struct {
	*taskProvider
	asked chan string
}

func (p admittingProvider) AdmitTask(ctx context.Context, info *RequestInfo, name string) error {
	p.asked <- name
	if info.Principal == nil {
		return &Error{Code: -32001, Message: "not for you"}
	}
	return nil
}

// TestTaskAdmitter: a TaskProvider's TaskAdmitter runs before a call of a
// task-capable tool may become a task, with or without the extension, and
// its error answers the call (no task); it is not asked about a tool that
// is never a task.
func TestTaskAdmitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := admittingProvider{taskProvider: &taskProvider{support: map[string]TaskSupport{"quick": TaskRequired}}, asked: make(chan string, 8)}
		s := NewServer(&ServerOptions{Provider: p})
		defer s.Shutdown(context.Background())
		ann := &Principal{Subject: "ann"}
		for _, tc := range []struct {
			name, tool, caps string
			p                *Principal
			code             int // the error's, 0 for a task or a result
			resultType       string
			asked            bool
		}{
			{"refused, with the extension", "quick", extCaps, nil, -32001, "", true},
			{"refused, without it", "quick", `{}`, nil, -32001, "", true},
			{"admitted", "quick", extCaps, ann, 0, "task", true},
			{"admitted, without the extension", "quick", `{}`, ann, -32021, "", true},
			{"never a task", "other", extCaps, nil, -32602, "", false},
		} {
			r := taskCall(t, context.Background(), s, tc.p, tc.caps, "tools/call", `{"name":"`+tc.tool+`","arguments":{}}`)
			switch {
			case tc.code != 0 && (r.Error == nil || r.Error.Code != tc.code):
				t.Errorf("%s: %+v %+v, want error %v", tc.name, r.Result, r.Error, tc.code)
			case tc.code == 0 && (r.Error != nil || r.Result["resultType"] != tc.resultType):
				t.Errorf("%s: %+v %+v, want resultType %s", tc.name, r.Result, r.Error, tc.resultType)
			}
			var asked bool
			select {
			case name := <-p.asked:
				asked = name == tc.tool
			default:
			}
			if asked != tc.asked {
				t.Errorf("%s: AdmitTask asked: %v, want %v", tc.name, asked, tc.asked)
			}
		}
	})
}
