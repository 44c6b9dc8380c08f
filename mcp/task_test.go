package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// Tests of the tasks extension through Server.Handle.

// extCaps declares the tasks extension (and elicitation).
const extCaps = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// taskCall sends method with params (a JSON object without _meta) and the
// given clientCapabilities, as principal p (nil: none).
func taskCall(tb testing.TB, ctx context.Context, s *Server, p *Principal, caps, method, params string) rpcReply {
	tb.Helper()
	body := mcpwire.Request{ID: "7", Method: method, Params: params, Caps: caps}.Bytes()
	msg := decodeMsg(tb, body)
	var c collector
	out, status := s.Handle(ctx, nil, &Incoming{Message: &msg, Principal: p}, &c)
	var resp struct {
		Result map[string]any `json:"result"`
		Error  *rpcError      `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		tb.Fatalf("%s: response is not JSON: %v: %s", method, err, out)
	}
	r := rpcReply{Status: status, Result: resp.Result, Error: resp.Error}
	for _, m := range c.msgs {
		var n map[string]any
		mustUnmarshal(tb, m, &n)
		r.Notifications = append(r.Notifications, n)
	}
	return r
}

// ext calls with the tasks extension declared and no principal.
func ext(tb testing.TB, s *Server, method, params string) rpcReply {
	tb.Helper()
	return taskCall(tb, context.Background(), s, nil, extCaps, method, params)
}

// startTask calls tool name and returns the id of the task it created.
func startTask(tb testing.TB, s *Server, name string) string {
	tb.Helper()
	r := ext(tb, s, "tools/call", `{"name":"`+name+`","arguments":{}}`)
	if r.Error != nil || r.Result["resultType"] != "task" {
		tb.Fatalf("tools/call %s = %+v %+v, want a CreateTaskResult", name, r.Result, r.Error)
	}
	return r.Result["taskId"].(string)
}

// getTask calls tasks/get and returns the task (without _meta).
func getTask(tb testing.TB, s *Server, id string) map[string]any {
	tb.Helper()
	r := ext(tb, s, "tasks/get", `{"taskId":"`+id+`"}`)
	if r.Error != nil {
		tb.Fatalf("tasks/get %s: %d %s", id, r.Error.Code, r.Error.Message)
	}
	delete(r.Result, "_meta")
	return r.Result
}

// awaitStatus waits, in a synctest bubble, until tasks/get reports one of
// the statuses (settle), and returns the task.
func awaitStatus(tb testing.TB, s *Server, id string, want ...TaskStatus) map[string]any {
	tb.Helper()
	var t map[string]any
	settle(tb, fmt.Sprintf("task %s reaching one of %v", id, want), func() bool {
		t = getTask(tb, s, id)
		for _, w := range want {
			if t["status"] == string(w) {
				return true
			}
		}
		return false
	})
	return t
}

// gate is a tool handler that blocks until released or cancelled.
type gate struct {
	release   chan string // a value ends the handler with that text
	cancelled chan error  // receives context.Cause when the handler is cancelled
	started   chan struct{}
}

func newGate() *gate {
	return &gate{release: make(chan string, 1), cancelled: make(chan error, 100), started: make(chan struct{}, 100)}
}

func (g *gate) handler(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
	g.started <- struct{}{}
	select {
	case text := <-g.release:
		if strings.HasPrefix(text, "error:") {
			return "", errors.New(strings.TrimPrefix(text, "error:"))
		}
		if strings.HasPrefix(text, "protocol:") {
			return "", &Error{Code: -32001, Message: strings.TrimPrefix(text, "protocol:"), Data: map[string]int{"n": 1}}
		}
		if text == "panic" {
			panic("handler bug")
		}
		return text, nil
	case <-ctx.Done():
		g.cancelled <- context.Cause(ctx)
		return "", ctx.Err()
	}
}

// taskServer returns a server with a gated tool of each task support
// level: "none", "optional" and "required".
func taskServer(tb testing.TB, o TaskOptions) (*Server, *gate) {
	s := NewServer(&ServerOptions{Tasks: o})
	g := newGate()
	AddTool(s, &Tool{Name: "none", Description: "d"}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		return "sync", nil
	})
	AddTool(s, &Tool{Name: "optional", Description: "d", TaskSupport: TaskOptional}, g.handler)
	AddTool(s, &Tool{Name: "required", Description: "d", TaskSupport: TaskRequired}, g.handler)
	AddTool(s, &Tool{Name: "quick", Description: "d", TaskSupport: TaskOptional}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		return "quick", nil
	})
	AddTool(s, &Tool{Name: "quick_required", Description: "d", TaskSupport: TaskRequired}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		return "quick", nil
	})
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			tb.Errorf("Shutdown: %v", err)
		}
	})
	return s, g
}

func TestTaskNegotiation(t *testing.T) {
	tests := []struct {
		name    string
		caps    string
		tool    string
		release string // sent to the gate before the call, for synchronous gated calls
		want    string // "sync", "task" or an error code
	}{
		{"none with extension", extCaps, "none", "", "sync"},
		{"optional without extension", `{}`, "optional", "done", "sync"},
		{"optional with extension", extCaps, "optional", "", "task"},
		{"optional, answered within SyncWait", extCaps, "quick", "", "sync"},
		{"required without extension", `{}`, "required", "", "-32021"},
		{"required with extension", extCaps, "required", "", "task"},
		{"required, answered within SyncWait", extCaps, "quick_required", "", "task"},
		{"other extensions only", `{"extensions":{"com.example/other":{}}}`, "optional", "done", "sync"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A server per case, in a bubble: SyncWait runs on the
			// bubble's clock, so "quick" answers within it however loaded
			// the machine is, and "optional" outlasts it without waiting.
			synctest.Test(t, func(t *testing.T) {
				s, g := taskServer(t, TaskOptions{SyncWait: 500 * time.Millisecond})
				if tt.release != "" {
					g.release <- tt.release
				}
				r := taskCall(t, context.Background(), s, nil, tt.caps, "tools/call", `{"name":"`+tt.tool+`","arguments":{}}`)
				var got string
				switch {
				case r.Error != nil:
					got = jsonNumber(r.Error.Code)
				case r.Result["resultType"] == "task":
					got = "task"
					if _, ok := r.Result["content"]; ok {
						t.Errorf("CreateTaskResult with content: %v", r.Result)
					}
				case r.Result["resultType"] == "complete":
					got = "sync"
					if _, ok := r.Result["taskId"]; ok {
						t.Errorf("synchronous result with a taskId: %v", r.Result)
					}
				}
				if got != tt.want {
					t.Fatalf("tools/call %s = %v %+v, want %s", tt.tool, r.Result, r.Error, tt.want)
				}
				if got == "-32021" {
					want := `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
					if string(r.Error.Data) != want || r.Status != http.StatusBadRequest {
						t.Errorf("-32021 data %s status %d, want %s 400", r.Error.Data, r.Status, want)
					}
				}
				if got == "task" && tt.tool != "quick_required" {
					// Leave no handler running for the next case.
					ext(t, s, "tasks/cancel", `{"taskId":"`+r.Result["taskId"].(string)+`"}`)
					<-g.cancelled
				}
			})
		})
	}
}

func jsonNumber(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestTaskMethodsGated(t *testing.T) {
	plain := NewServer(nil)
	AddTool(plain, &Tool{Name: "echo", Description: "d"}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
	tasks, _ := taskServer(t, TaskOptions{})
	tests := []struct {
		name   string
		s      *Server
		caps   string
		method string
		params string
		code   int
		status int
	}{
		{"get without extension", tasks, `{}`, "tasks/get", `{"taskId":"gate-test"}`, -32021, 400},
		{"update without extension", tasks, `{}`, "tasks/update", `{"taskId":"gate-test","inputResponses":{}}`, -32021, 400},
		{"cancel without extension", tasks, `{}`, "tasks/cancel", `{"taskId":"gate-test"}`, -32021, 400},
		{"get unknown", tasks, extCaps, "tasks/get", `{"taskId":"nope"}`, -32602, 400},
		{"update unknown", tasks, extCaps, "tasks/update", `{"taskId":"nope","inputResponses":{}}`, -32602, 400},
		{"cancel unknown", tasks, extCaps, "tasks/cancel", `{"taskId":"nope"}`, -32602, 400},
		{"get without taskId", tasks, extCaps, "tasks/get", `{}`, -32602, 400},
		{"get with a numeric taskId", tasks, extCaps, "tasks/get", `{"taskId":1}`, -32602, 400},
		{"update without inputResponses", tasks, extCaps, "tasks/update", `{"taskId":"nope"}`, -32602, 400},
		{"update with null inputResponses", tasks, extCaps, "tasks/update", `{"taskId":"nope","inputResponses":null}`, -32602, 400},
		{"tasks/result removed", tasks, extCaps, "tasks/result", `{"taskId":"x"}`, -32601, 404},
		{"tasks/list removed", tasks, extCaps, "tasks/list", `{}`, -32601, 404},
		{"get on a server without tasks", plain, extCaps, "tasks/get", `{"taskId":"x"}`, -32601, 404},
		{"cancel on a server without tasks", plain, extCaps, "tasks/cancel", `{"taskId":"x"}`, -32601, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := taskCall(t, context.Background(), tt.s, nil, tt.caps, tt.method, tt.params)
			if r.Error == nil || r.Error.Code != tt.code || r.Status != tt.status {
				t.Fatalf("%s = %v %+v (HTTP %d), want error %d (HTTP %d)", tt.method, r.Result, r.Error, r.Status, tt.code, tt.status)
			}
		})
	}
}

func TestTaskDiscover(t *testing.T) {
	plain := NewServer(nil)
	AddTool(plain, &Tool{Name: "echo", Description: "d"}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
	tasks, _ := taskServer(t, TaskOptions{})
	for _, tt := range []struct {
		name string
		s    *Server
		want bool
	}{{"without task tools", plain, false}, {"with task tools", tasks, true}} {
		t.Run(tt.name, func(t *testing.T) {
			res := mustResult(t, tt.s, "server/discover", "{}")
			caps := res["capabilities"].(map[string]any)
			exts, _ := caps["extensions"].(map[string]any)
			v, got := exts[TasksExtension]
			if got != tt.want {
				t.Fatalf("extensions = %v, tasks advertised %v, want %v", exts, got, tt.want)
			}
			if got && !cmp.Equal(v, map[string]any{}) {
				t.Errorf("extension settings %v, want {}", v)
			}
			if _, ok := caps["tasks"]; ok {
				t.Error("capabilities.tasks (the v1 slot) is set")
			}
		})
	}
}

func TestTaskLifecycle(t *testing.T) {
	tests := []struct {
		release    string
		status     TaskStatus
		result     any // the inlined result's content text, or nil
		isError    bool
		errCode    float64
		errMessage string
	}{
		{release: "all done", status: TaskCompleted, result: "all done"},
		{release: "error:disk full", status: TaskCompleted, result: "disk full", isError: true},
		{release: "protocol:upstream refused", status: TaskFailed, errCode: -32001, errMessage: "upstream refused"},
		{release: "panic", status: TaskFailed, errCode: -32603, errMessage: "Internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.release, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, g := taskServer(t, TaskOptions{})
				r := ext(t, s, "tools/call", `{"name":"optional","arguments":{}}`)
				if r.Error != nil {
					t.Fatal(r.Error)
				}
				created := r.Result
				id, _ := created["taskId"].(string)
				for _, k := range []string{"result", "error", "inputRequests", "requestState", "task", "ttl", "pollInterval"} {
					if _, ok := created[k]; ok {
						t.Errorf("CreateTaskResult has %q: %v", k, created)
					}
				}
				if created["status"] != "working" || created["ttlMs"] != 3600000.0 || created["pollIntervalMs"] != 500.0 || len(id) != 22 {
					t.Errorf("CreateTaskResult = %v; want working, ttlMs 3600000, pollIntervalMs 500, a 22-character id", created)
				}
				if w := getTask(t, s, id); w["status"] != "working" || w["result"] != nil {
					t.Errorf("tasks/get while working = %v", w)
				}
				g.release <- tt.release
				task := awaitStatus(t, s, id, TaskCompleted, TaskFailed, TaskCancelled)
				if task["status"] != string(tt.status) {
					t.Fatalf("status %v, want %s: %v", task["status"], tt.status, task)
				}
				if _, ok := task["requestState"]; ok {
					t.Error("tasks/get carries requestState")
				}
				if tt.status == TaskCompleted {
					res := task["result"].(map[string]any)
					content := res["content"].([]any)
					if text := content[0].(map[string]any)["text"]; text != tt.result || (res["isError"] == true) != tt.isError {
						t.Errorf("result = %v; want text %q isError %v", res, tt.result, tt.isError)
					}
					if meta, _ := res["_meta"].(map[string]any); meta["io.modelcontextprotocol/related-task"] != nil {
						t.Error("inlined result carries related-task _meta")
					}
					if _, ok := task["error"]; ok {
						t.Error("completed task carries error")
					}
				} else {
					e := task["error"].(map[string]any)
					if e["code"] != tt.errCode || e["message"] != tt.errMessage || task["statusMessage"] != tt.errMessage {
						t.Errorf("error = %v, statusMessage %v; want %v %q", e, task["statusMessage"], tt.errCode, tt.errMessage)
					}
					if _, ok := task["result"]; ok {
						t.Error("failed task carries result")
					}
				}
			})
		})
	}
}

func TestTaskCancel(t *testing.T) { synctest.Test(t, testTaskCancel) }

func testTaskCancel(t *testing.T) {
	s, g := taskServer(t, TaskOptions{})
	id := startTask(t, s, "optional")
	ack := ext(t, s, "tasks/cancel", `{"taskId":"`+id+`"}`)
	wantAck := map[string]any{"resultType": "complete", "_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "mcpkit", "version": "0.0.0"}}}
	if diff := cmp.Diff(wantAck, ack.Result); diff != "" || ack.Error != nil {
		t.Fatalf("cancel ack (-want +got):\n%s%v", diff, ack.Error)
	}
	select {
	case cause := <-g.cancelled:
		if !errors.Is(cause, errTaskCancelled) {
			t.Errorf("the handler's context ended with %v, want errTaskCancelled", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler was not cancelled")
	}
	if st := getTask(t, s, id)["status"]; st != "cancelled" {
		t.Errorf("status after cancel = %v", st)
	}
	// Idempotent: again, the same ack; the status stays.
	if again := ext(t, s, "tasks/cancel", `{"taskId":"`+id+`"}`); !cmp.Equal(wantAck, again.Result) {
		t.Errorf("second cancel = %v %+v", again.Result, again.Error)
	}
	// A finished task is not cancelled: it stays as it ended.
	id2 := startTask(t, s, "optional")
	g.release <- "finished"
	awaitStatus(t, s, id2, TaskCompleted)
	if r := ext(t, s, "tasks/cancel", `{"taskId":"`+id2+`"}`); !cmp.Equal(wantAck, r.Result) {
		t.Errorf("cancel of a completed task = %v %+v", r.Result, r.Error)
	}
	if st := getTask(t, s, id2)["status"]; st != "completed" {
		t.Errorf("a completed task became %v after cancel", st)
	}
}

func TestTaskProgress(t *testing.T) { synctest.Test(t, testTaskProgress) } // its waits on the bubble's clock

func testTaskProgress(t *testing.T) {
	s := NewServer(&ServerOptions{Tasks: TaskOptions{SyncWait: Off}})
	step := make(chan struct{})
	AddTool(s, &Tool{Name: "steps", Description: "d", TaskSupport: TaskOptional}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		req.Progress(1, 3, "")
		<-step
		req.Progress(2, 3, "second step")
		<-step
		return "done", nil
	})
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	id := startTask(t, s, "steps")
	awaitMessage := func(want string) {
		t.Helper()
		settle(t, fmt.Sprintf("statusMessage %q", want), func() bool { return getTask(t, s, id)["statusMessage"] == want })
	}
	awaitMessage("1/3")
	step <- struct{}{}
	awaitMessage("second step")
	step <- struct{}{}
	if task := awaitStatus(t, s, id, TaskCompleted); task["statusMessage"] != nil {
		t.Errorf("a completed task keeps statusMessage %v", task["statusMessage"])
	}
}

func TestTaskOwner(t *testing.T) {
	s, g := taskServer(t, TaskOptions{})
	alice := &Principal{Issuer: "https://issuer.example", Subject: "alice"}
	bob := &Principal{Issuer: "https://issuer.example", Subject: "bob"}
	ctx := context.Background()
	r := taskCall(t, ctx, s, alice, extCaps, "tools/call", `{"name":"optional","arguments":{}}`)
	id := r.Result["taskId"].(string)
	for _, tt := range []struct {
		name string
		p    *Principal
		ok   bool
	}{
		{"the owner", &Principal{Issuer: "https://issuer.example", Subject: "alice"}, true},
		{"another principal", bob, false},
		{"no principal", nil, false},
		{"same subject, other issuer", &Principal{Issuer: "https://other.example", Subject: "alice"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
				params := `{"taskId":"` + id + `"}`
				if m == "tasks/update" {
					params = `{"taskId":"` + id + `","inputResponses":{}}`
				}
				if m == "tasks/cancel" && tt.ok {
					continue // keep the task for the other cases
				}
				r := taskCall(t, ctx, s, tt.p, extCaps, m, params)
				if tt.ok != (r.Error == nil) {
					t.Errorf("%s = %v %+v, want allowed %v", m, r.Result, r.Error, tt.ok)
				}
				if !tt.ok && (r.Error == nil || r.Error.Code != -32602) {
					t.Errorf("%s by a stranger: %+v, want -32602 as for an unknown task", m, r.Error)
				}
			}
		})
	}
	if st := getTaskAs(t, s, alice, id)["status"]; st != "working" {
		t.Errorf("strangers changed the task: %v", st)
	}
	g.release <- "done"
}

func getTaskAs(t *testing.T, s *Server, p *Principal, id string) map[string]any {
	r := taskCall(t, context.Background(), s, p, extCaps, "tasks/get", `{"taskId":"`+id+`"}`)
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	return r.Result
}

func TestTaskLimit(t *testing.T) { synctest.Test(t, testTaskLimit) } // its waits on the bubble's clock

func testTaskLimit(t *testing.T) {
	s, g := taskServer(t, TaskOptions{MaxRunning: 1})
	id := startTask(t, s, "optional")
	r := ext(t, s, "tools/call", `{"name":"required","arguments":{}}`)
	if r.Error == nil || r.Error.Code != -32603 || r.Status != http.StatusServiceUnavailable || string(r.Error.Data) != `{"maxRunningTasks":1}` {
		t.Fatalf("a call past MaxRunning = %v %+v (HTTP %d); want -32603, 503, data maxRunningTasks", r.Result, r.Error, r.Status)
	}
	if !strings.Contains(r.Error.Message, "at most 1 tasks") {
		t.Errorf("message %q does not say the bound", r.Error.Message)
	}
	// Synchronous calls are not bounded by it.
	if r := ext(t, s, "tools/call", `{"name":"none","arguments":{}}`); r.Error != nil {
		t.Errorf("a TaskNone call past MaxRunning: %+v", r.Error)
	}
	g.release <- "done"
	awaitStatus(t, s, id, TaskCompleted)
	// The slot is free again once the handler returned: once every
	// goroutine of the bubble is blocked, the first task's is done.
	synctest.Wait()
	if r := ext(t, s, "tools/call", `{"name":"required","arguments":{}}`); r.Error != nil {
		t.Fatalf("still refused after the first task ended: %+v", r.Error)
	}
}

func TestTaskStoreFull(t *testing.T) { synctest.Test(t, testTaskStoreFull) }

func testTaskStoreFull(t *testing.T) {
	s, g := taskServer(t, TaskOptions{Store: NewMemoryTaskStore(1)})
	startTask(t, s, "optional")
	r := ext(t, s, "tools/call", `{"name":"quick_required","arguments":{}}`)
	if r.Error == nil || r.Error.Code != -32603 || r.Status != http.StatusServiceUnavailable || !strings.Contains(r.Error.Message, "store is full") {
		t.Fatalf("a task past the store's bound = %v %+v (HTTP %d)", r.Result, r.Error, r.Status)
	}
	g.release <- "done"
}

func TestTaskExpiry(t *testing.T) {
	synctest.Test(t, testTaskExpiry) // exact TTL timing on a loaded machine
}

func testTaskExpiry(t *testing.T) {
	s, _ := taskServer(t, TaskOptions{TTL: 200 * time.Millisecond})
	r := ext(t, s, "tools/call", `{"name":"quick_required","arguments":{}}`)
	id := r.Result["taskId"].(string)
	if r.Result["ttlMs"] != 200.0 {
		t.Errorf("ttlMs = %v, want 200", r.Result["ttlMs"])
	}
	if st := getTask(t, s, id)["status"]; st != "completed" {
		t.Fatalf("status %v", st)
	}
	time.Sleep(300 * time.Millisecond)
	if r := ext(t, s, "tasks/get", `{"taskId":"`+id+`"}`); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("tasks/get after the TTL = %v %+v, want -32602", r.Result, r.Error)
	}

	// A negative TTL keeps tasks: ttlMs null.
	s2, _ := taskServer(t, TaskOptions{TTL: Off})
	r = ext(t, s2, "tools/call", `{"name":"quick_required","arguments":{}}`)
	if v, ok := r.Result["ttlMs"]; !ok || v != nil {
		t.Errorf("ttlMs with a negative TTL = %v (present %v), want null", v, ok)
	}
}

func TestTaskTTLOutlivesLongRuns(t *testing.T) {
	synctest.Test(t, testTaskTTLOutlivesLongRuns) // exact TTL timing on a loaded machine
}

func testTaskTTLOutlivesLongRuns(t *testing.T) {
	// A task that runs longer than TTL stays readable for TTL after it ends.
	s, g := taskServer(t, TaskOptions{TTL: 300 * time.Millisecond})
	id := startTask(t, s, "optional")
	time.Sleep(400 * time.Millisecond)
	g.release <- "late"
	task := awaitStatus(t, s, id, TaskCompleted)
	if ttl := task["ttlMs"].(float64); ttl < 600 {
		t.Errorf("ttlMs of a task that ran past its TTL = %v; want it extended past its end", ttl)
	}
	time.Sleep(100 * time.Millisecond)
	getTask(t, s, id)
}

func TestTaskSyncWait(t *testing.T) {
	t.Run("StartTask ends the wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := NewServer(&ServerOptions{Tasks: TaskOptions{SyncWait: time.Hour}})
			AddTool(s, &Tool{Name: "starts", Description: "d", TaskSupport: TaskOptional}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
				if !req.StartTask() {
					return "", errors.New("StartTask reported false")
				}
				if !req.StartTask() {
					return "", errors.New("StartTask reported false the second time")
				}
				return "from the task", nil
			})
			t.Cleanup(func() { s.Shutdown(context.Background()) })
			start := time.Now()
			id := startTask(t, s, "starts")
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the call waited %v despite StartTask", d)
			}
			task := awaitStatus(t, s, id, TaskCompleted)
			if text := task["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; text != "from the task" {
				t.Errorf("result text %v", text)
			}
			// Without the extension StartTask does nothing.
			r := call(t, s, "tools/call", `{"name":"starts","arguments":{}}`)
			if r.Error != nil || r.Result["isError"] != true {
				t.Errorf("StartTask in a synchronous call: %v %+v; want the handler to see false", r.Result, r.Error)
			}
		})
	})
	t.Run("negative SyncWait starts at once", func(t *testing.T) {
		s, _ := taskServer(t, TaskOptions{SyncWait: Off})
		if r := ext(t, s, "tools/call", `{"name":"quick","arguments":{}}`); r.Result["resultType"] != "task" {
			t.Errorf("a quick optional tool with SyncWait < 0 = %v %+v, want a task", r.Result, r.Error)
		}
	})
	t.Run("progress during the wait streams", func(t *testing.T) {
		s := NewServer(&ServerOptions{Tasks: TaskOptions{SyncWait: time.Hour}})
		AddTool(s, &Tool{Name: "p", Description: "d", TaskSupport: TaskOptional}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
			req.Progress(1, 2, "sync part")
			return "ok", nil
		})
		msg := decodeMsg(t, mcpwire.Request{ID: "7", Method: "tools/call", Params: `{"name":"p","arguments":{}}`, Caps: extCaps, Meta: `"progressToken":"tok"`}.Bytes())
		var c collector
		out, _ := s.Handle(context.Background(), nil, &Incoming{Message: &msg}, &c)
		if !strings.Contains(string(out), `"text":"ok"`) || len(c.msgs) != 1 || !strings.Contains(string(c.msgs[0]), `"sync part"`) {
			t.Errorf("response %s, notifications %q", out, c.msgs)
		}
	})
}

func TestTaskClientLeavesDuringWait(t *testing.T) { synctest.Test(t, testTaskClientLeavesDuringWait) }

func testTaskClientLeavesDuringWait(t *testing.T) {
	s, g := taskServer(t, TaskOptions{SyncWait: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan rpcReply)
	go func() { done <- taskCall(t, ctx, s, nil, extCaps, "tools/call", `{"name":"optional","arguments":{}}`) }()
	<-g.started
	cancel()
	r := <-done
	if r.Error == nil || r.Error.Code != -32603 {
		t.Errorf("call whose client left = %v %+v", r.Result, r.Error)
	}
	select {
	case <-g.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler was not cancelled when the client left")
	}
	if n := s.tasks.store.(*MemoryTaskStore).Len(); n != 0 {
		t.Errorf("%d tasks stored for a call whose client left", n)
	}
}

func TestTaskShutdown(t *testing.T) { synctest.Test(t, testTaskShutdown) }

func testTaskShutdown(t *testing.T) {
	s, g := taskServer(t, TaskOptions{})
	id := startTask(t, s, "optional")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if cause := <-g.cancelled; !errors.Is(cause, errShutdown) {
		t.Errorf("handler cancelled with %v", cause)
	}
	task := getTask(t, s, id)
	if task["status"] != "failed" || task["error"].(map[string]any)["code"] != -32603.0 {
		t.Errorf("a task stopped by Shutdown = %v; want failed with -32603", task)
	}
	r := ext(t, s, "tools/call", `{"name":"optional","arguments":{}}`)
	if r.Error == nil || r.Status != http.StatusServiceUnavailable {
		t.Errorf("a task call after Shutdown = %v %+v (HTTP %d), want 503", r.Result, r.Error, r.Status)
	}
	// Synchronous calls still work (http.Server.Shutdown drains them).
	if r := ext(t, s, "tools/call", `{"name":"none","arguments":{}}`); r.Error != nil {
		t.Errorf("a synchronous call after Shutdown: %+v", r.Error)
	}
}

func TestTaskRunnerLost(t *testing.T) { synctest.Test(t, testTaskRunnerLost) }

func testTaskRunnerLost(t *testing.T) {
	// A working task whose runner stopped renewing its lease is reported
	// failed by whichever server reads it.
	st := NewMemoryTaskStore(0)
	s, _ := taskServer(t, TaskOptions{Store: st})
	now := time.Now()
	rec := &TaskRecord{ID: "orphan", Tool: "optional", Status: TaskWorking, CreatedAt: now.Add(-time.Minute), UpdatedAt: now.Add(-time.Minute),
		TTL: time.Hour, Runner: "gone", LeaseUntil: now.Add(-time.Second)}
	if err := st.Create(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	task := getTask(t, s, "orphan")
	if task["status"] != "failed" || !strings.Contains(task["statusMessage"].(string), "stopped") {
		t.Errorf("an orphaned task = %v; want failed", task)
	}
	// A live lease is respected.
	rec.ID, rec.LeaseUntil = "alive", now.Add(time.Minute)
	st.Create(context.Background(), rec)
	if st := getTask(t, s, "alive")["status"]; st != "working" {
		t.Errorf("a task with a live lease = %v", st)
	}
}

func TestTaskCancelSignalFromElsewhere(t *testing.T) {
	synctest.Test(t, testTaskCancelSignalFromElsewhere)
}

func testTaskCancelSignalFromElsewhere(t *testing.T) {
	// Two servers sharing a store: a cancellation through one stops the
	// handler on the other.
	st := NewMemoryTaskStore(0)
	a, ga := taskServer(t, TaskOptions{Store: st})
	b, _ := taskServer(t, TaskOptions{Store: st})
	id := startTask(t, a, "optional")
	if r := ext(t, b, "tasks/cancel", `{"taskId":"`+id+`"}`); r.Error != nil {
		t.Fatal(r.Error)
	}
	select {
	case <-ga.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler on A was not cancelled by B")
	}
}

func TestTaskHeartbeatCatchesMissedCancel(t *testing.T) {
	synctest.Test(t, testTaskHeartbeatCatchesMissedCancel)
}

func testTaskHeartbeatCatchesMissedCancel(t *testing.T) {
	// A cancellation whose signal was lost is noticed at the next
	// heartbeat.
	s, g := taskServer(t, TaskOptions{Heartbeat: 20 * time.Millisecond})
	id := startTask(t, s, "optional")
	s.tasks.store.Update(context.Background(), id, func(t *TaskRecord) (bool, error) {
		t.Status = TaskCancelled
		return true, nil
	}) // no Publish
	select {
	case <-g.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the heartbeat did not stop the handler of a cancelled task")
	}
}

func TestTaskIDsUnguessable(t *testing.T) { synctest.Test(t, testTaskIDsUnguessable) }

func testTaskIDsUnguessable(t *testing.T) {
	s, _ := taskServer(t, TaskOptions{})
	seen := map[string]bool{}
	for range 50 {
		r := ext(t, s, "tools/call", `{"name":"quick_required","arguments":{}}`)
		id := r.Result["taskId"].(string)
		if seen[id] || len(id) != 22 {
			t.Fatalf("task id %q: repeated or not 128 bits", id)
		}
		seen[id] = true
	}
}

func TestTaskRegistrationPanics(t *testing.T) {
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), `AddTool "bad": invalid TaskSupport`) {
			t.Errorf("panic = %v", p)
		}
	}()
	AddTool(NewServer(nil), &Tool{Name: "bad", Description: "d", TaskSupport: 7}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
}

// BenchmarkTasksGet measures a poll of a finished task (in memory): the
// request a client repeats most.
func BenchmarkTasksGet(b *testing.B) {
	s, _ := taskServer(b, TaskOptions{})
	r := ext(b, s, "tools/call", `{"name":"quick_required","arguments":{}}`)
	id := r.Result["taskId"].(string)
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"` + id + `","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + extCaps + `}}}`)
	msg := decodeMsg(b, body)
	in := &Incoming{Message: &msg}
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = s.Handle(context.Background(), dst[:0], in, nil)
	}
}

// BenchmarkTaskCreate measures a tools/call that creates a finished task
// (a TaskRequired tool that answers at once).
func BenchmarkTaskCreate(b *testing.B) {
	s, _ := taskServer(b, TaskOptions{TTL: time.Second})
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"quick_required","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + extCaps + `}}}`)
	msg := decodeMsg(b, body)
	in := &Incoming{Message: &msg}
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = s.Handle(context.Background(), dst[:0], in, nil)
	}
}

func TestTaskShutdownDuringWait(t *testing.T) { synctest.Test(t, testTaskShutdownDuringWait) }

func testTaskShutdownDuringWait(t *testing.T) {
	// A call still in its SyncWait when Shutdown begins becomes a task that
	// is stopped at once, and Shutdown does not wait for it forever.
	s, g := taskServer(t, TaskOptions{SyncWait: 200 * time.Millisecond})
	done := make(chan rpcReply)
	go func() { done <- ext(t, s, "tools/call", `{"name":"optional","arguments":{}}`) }()
	<-g.started
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	r := <-done
	if r.Error != nil {
		t.Fatalf("the call = %+v", r.Error)
	}
	if task := getTask(t, s, r.Result["taskId"].(string)); task["status"] != "failed" {
		t.Errorf("task = %v, want failed", task)
	}
}

// TestTaskKeepsRequestValues: a handler that runs as a task sees the
// values of the request's context (trace spans, loggers) but not its
// cancellation, which comes when the request is answered.
func TestTaskKeepsRequestValues(t *testing.T) { synctest.Test(t, testTaskKeepsRequestValues) }

func testTaskKeepsRequestValues(t *testing.T) {
	type key struct{}
	s := NewServer(nil)
	got := make(chan any, 1)
	release := make(chan struct{})
	AddTool(s, &Tool{Name: "bg", Description: "d", TaskSupport: TaskRequired}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		<-release
		got <- ctx.Value(key{})
		return "done", ctx.Err()
	})
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "trace-1"))
	r := taskCall(t, ctx, s, nil, extCaps, "tools/call", `{"name":"bg","arguments":{}}`)
	if r.Error != nil || r.Result["resultType"] != "task" {
		t.Fatalf("tools/call = %+v %+v, want a task", r.Result, r.Error)
	}
	cancel() // the request is over; the task goes on
	close(release)
	if v := <-got; v != "trace-1" {
		t.Errorf("the task's handler saw %v for the request's value, want trace-1", v)
	}
	if st := awaitStatus(t, s, r.Result["taskId"].(string), TaskCompleted, TaskFailed); st["status"] != string(TaskCompleted) {
		t.Errorf("task %v, want completed (the request's cancellation must not reach it)", st)
	}
}
