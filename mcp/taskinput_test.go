package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
)

// Tests of input requests in tasks: a task parks in input_required, and
// tasks/update resumes it.

var okForm = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)

// askOK asks the yes/no question key.
func askOK(req *ToolRequest, key string) (bool, error) {
	r, err := req.Elicit(key, &ElicitParams{Message: key + "?", RequestedSchema: okForm})
	if err != nil {
		return false, err
	}
	var v struct{ OK bool }
	if r.Accepted() {
		if err := r.Decode(&v); err != nil {
			return false, err
		}
	}
	return v.OK, nil
}

// inputServer returns a server with tools that ask for input in their
// tasks; runs counts the runs of "steps".
func inputServer(tb testing.TB, o TaskOptions) (*Server, *atomic.Int64) {
	s := NewServer(&ServerOptions{Tasks: o})
	var runs atomic.Int64
	AddTool(s, &Tool{Name: "confirm", Description: "d", TaskSupport: TaskOptional}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		req.StartTask()
		ok, err := askOK(req, "ok")
		if err != nil {
			return "", err
		}
		return fmt.Sprint("confirmed: ", ok), nil
	})
	AddTool(s, &Tool{Name: "two", Description: "d", TaskSupport: TaskOptional}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		req.StartTask()
		a, err1 := askOK(req, "a")
		b, err2 := askOK(req, "b")
		if err := errors.Join(err1, err2); err != nil {
			return "", err
		}
		return fmt.Sprint("a=", a, " b=", b), nil
	})
	AddTool(s, &Tool{Name: "steps", Description: "d", TaskSupport: TaskRequired}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		runs.Add(1)
		var n int
		req.LoadState(&n)
		if err := req.SaveState(n + 1); err != nil {
			return "", err
		}
		req.StartTask()
		one, err := askOK(req, "step1")
		if err != nil {
			return "", err
		}
		two, err := askOK(req, "step2")
		if err != nil {
			return "", err
		}
		return fmt.Sprint("step1=", one, " step2=", two, " earlier runs=", n), nil
	})
	AddTool(s, &Tool{Name: "pre", Description: "d", TaskSupport: TaskRequired}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
		before, err := askOK(req, "before") // before the task: an input_required round
		if err != nil {
			return "", err
		}
		req.StartTask()
		after, err := askOK(req, "after") // in the task
		if err != nil {
			return "", err
		}
		return fmt.Sprint("before=", before, " after=", after), nil
	})
	tb.Cleanup(func() { s.Shutdown(context.Background()) })
	return s, &runs
}

const yes = `{"action":"accept","content":{"ok":true}}`

func update(tb testing.TB, s *Server, id, responses string) {
	tb.Helper()
	r := ext(tb, s, "tasks/update", `{"taskId":"`+id+`","inputResponses":`+responses+`}`)
	if r.Error != nil {
		tb.Fatalf("tasks/update: %d %s", r.Error.Code, r.Error.Message)
	}
	delete(r.Result, "_meta")
	if !cmp.Equal(r.Result, map[string]any{"resultType": "complete"}) {
		tb.Errorf("tasks/update ack = %v, want exactly resultType complete", r.Result)
	}
}

func inputKeys(task map[string]any) []string {
	reqs, _ := task["inputRequests"].(map[string]any)
	var keys []string
	for k, v := range reqs {
		if m, _ := v.(map[string]any); m["method"] != "elicitation/create" {
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) > 1 && keys[0] > keys[1] {
		keys[0], keys[1] = keys[1], keys[0]
	}
	return keys
}

func resultOf(task map[string]any) string {
	res, _ := task["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	return text
}

func TestTaskInput(t *testing.T) { synctest.Test(t, testTaskInput) }

func testTaskInput(t *testing.T) {
	s, _ := inputServer(t, TaskOptions{})
	id := startTask(t, s, "confirm")
	task := awaitStatus(t, s, id, TaskInputRequired)
	want := map[string]any{"ok": map[string]any{"method": "elicitation/create", "params": map[string]any{
		"mode": "form", "message": "ok?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []any{"ok"}}}}}
	if diff := cmp.Diff(want, task["inputRequests"]); diff != "" {
		t.Errorf("inputRequests (-want +got):\n%s", diff)
	}
	for _, k := range []string{"requestState", "result", "error"} {
		if _, ok := task[k]; ok {
			t.Errorf("an input_required task has %q", k)
		}
	}
	update(t, s, id, `{"ok":`+yes+`}`)
	if task := awaitStatus(t, s, id, TaskCompleted); resultOf(task) != "confirmed: true" {
		t.Errorf("result %q", resultOf(task))
	}
}

func TestTaskInputPartial(t *testing.T) { synctest.Test(t, testTaskInputPartial) }

func testTaskInputPartial(t *testing.T) {
	s, _ := inputServer(t, TaskOptions{})
	id := startTask(t, s, "two")
	task := awaitStatus(t, s, id, TaskInputRequired)
	if keys := inputKeys(task); !cmp.Equal(keys, []string{"a", "b"}) {
		t.Fatalf("input requests %v, want a and b at once", keys)
	}
	update(t, s, id, `{"a":`+yes+`}`)
	task = getTask(t, s, id)
	if task["status"] != "input_required" || !cmp.Equal(inputKeys(task), []string{"b"}) {
		t.Fatalf("after answering a: %v %v; want input_required with b only", task["status"], inputKeys(task))
	}
	// Unknown, already answered and malformed answers are ignored.
	update(t, s, id, `{"a":{"action":"accept","content":{"ok":false}},"zzz":{"x":1},"b":"not an object"}`)
	if task := getTask(t, s, id); task["status"] != "input_required" || !cmp.Equal(inputKeys(task), []string{"b"}) {
		t.Fatalf("after ignored answers: %v %v", task["status"], inputKeys(task))
	}
	update(t, s, id, `{"b":{"action":"accept","content":{"ok":false}}}`)
	if task := awaitStatus(t, s, id, TaskCompleted); resultOf(task) != "a=true b=false" {
		t.Errorf("result %q, want the first answer to a kept", resultOf(task))
	}
	// Updates to a finished task are acknowledged and change nothing.
	update(t, s, id, `{"b":`+yes+`}`)
	if task := getTask(t, s, id); resultOf(task) != "a=true b=false" {
		t.Errorf("a finished task changed: %v", task)
	}
}

func TestTaskInputRounds(t *testing.T) { synctest.Test(t, testTaskInputRounds) }

func testTaskInputRounds(t *testing.T) {
	s, runs := inputServer(t, TaskOptions{})
	id := startTask(t, s, "steps")
	if keys := inputKeys(awaitStatus(t, s, id, TaskInputRequired)); !cmp.Equal(keys, []string{"step1"}) {
		t.Fatalf("first round asks %v", keys)
	}
	update(t, s, id, `{"step1":`+yes+`}`)
	task := awaitStatus(t, s, id, TaskInputRequired, TaskCompleted)
	if keys := inputKeys(task); !cmp.Equal(keys, []string{"step2"}) {
		t.Fatalf("second round asks %v (status %v)", keys, task["status"])
	}
	// An answer that does not fit the form is asked for again.
	update(t, s, id, `{"step2":{"action":"accept","content":{"ok":"maybe"}}}`)
	task = awaitStatus(t, s, id, TaskInputRequired, TaskCompleted)
	if keys := inputKeys(task); !cmp.Equal(keys, []string{"step2"}) {
		t.Fatalf("after an unfit answer the task asks %v (status %v)", keys, task["status"])
	}
	update(t, s, id, `{"step2":{"action":"decline"}}`)
	task = awaitStatus(t, s, id, TaskCompleted)
	if got := resultOf(task); got != "step1=true step2=false earlier runs=3" {
		t.Errorf("result %q: answers or saved state did not carry across runs", got)
	}
	if n := runs.Load(); n != 4 {
		t.Errorf("the handler ran %d times, want 4 (one per round)", n)
	}
}

func TestTaskInputBeforeTask(t *testing.T) { synctest.Test(t, testTaskInputBeforeTask) }

func testTaskInputBeforeTask(t *testing.T) {
	s, _ := inputServer(t, TaskOptions{})
	r := ext(t, s, "tools/call", `{"name":"pre","arguments":{}}`)
	if r.Error != nil || r.Result["resultType"] != "input_required" || r.Result["taskId"] != nil {
		t.Fatalf("round 1 = %v %+v; want input_required without a task", r.Result, r.Error)
	}
	state, _ := r.Result["requestState"].(string)
	r = ext(t, s, "tools/call", `{"name":"pre","arguments":{},"inputResponses":{"before":`+yes+`},"requestState":"`+state+`"}`)
	if r.Error != nil || r.Result["resultType"] != "task" {
		t.Fatalf("round 2 = %v %+v; want a task", r.Result, r.Error)
	}
	if _, ok := r.Result["requestState"]; ok {
		t.Error("CreateTaskResult carries requestState")
	}
	id := r.Result["taskId"].(string)
	if keys := inputKeys(awaitStatus(t, s, id, TaskInputRequired)); !cmp.Equal(keys, []string{"after"}) {
		t.Fatalf("the task asks %v", keys)
	}
	update(t, s, id, `{"after":{"action":"accept","content":{"ok":false}}}`)
	// The run after the update gets the answer given before the task.
	if task := awaitStatus(t, s, id, TaskCompleted); resultOf(task) != "before=true after=false" {
		t.Errorf("result %q", resultOf(task))
	}
}

func TestTaskInputResumesElsewhere(t *testing.T) { synctest.Test(t, testTaskInputResumesElsewhere) }

func testTaskInputResumesElsewhere(t *testing.T) {
	st := NewMemoryTaskStore(0)
	a, _ := inputServer(t, TaskOptions{Store: st})
	b, _ := inputServer(t, TaskOptions{Store: st})
	id := startTask(t, a, "confirm")
	awaitStatus(t, a, id, TaskInputRequired)
	update(t, b, id, `{"ok":`+yes+`}`)
	if task := awaitStatus(t, a, id, TaskCompleted); resultOf(task) != "confirmed: true" {
		t.Errorf("result %q", resultOf(task))
	}
}

func TestTaskInputToolGone(t *testing.T) { synctest.Test(t, testTaskInputToolGone) }

func testTaskInputToolGone(t *testing.T) {
	s, _ := inputServer(t, TaskOptions{})
	id := startTask(t, s, "confirm")
	awaitStatus(t, s, id, TaskInputRequired)
	s.RemoveTools("confirm")
	update(t, s, id, `{"ok":`+yes+`}`)
	task := awaitStatus(t, s, id, TaskFailed, TaskCompleted)
	if task["status"] != "failed" || !strings.Contains(task["statusMessage"].(string), "no longer available") {
		t.Errorf("a task whose tool is gone = %v", task)
	}
}

func TestTaskInputCancel(t *testing.T) { synctest.Test(t, testTaskInputCancel) }

func testTaskInputCancel(t *testing.T) {
	s, _ := inputServer(t, TaskOptions{})
	id := startTask(t, s, "confirm")
	awaitStatus(t, s, id, TaskInputRequired)
	ext(t, s, "tasks/cancel", `{"taskId":"`+id+`"}`)
	task := getTask(t, s, id)
	if task["status"] != "cancelled" || task["inputRequests"] != nil {
		t.Fatalf("cancelled while waiting: %v", task)
	}
	update(t, s, id, `{"ok":`+yes+`}`)
	if task := getTask(t, s, id); task["status"] != "cancelled" {
		t.Errorf("an update revived a cancelled task: %v", task)
	}
}

func TestTaskInputCapabilities(t *testing.T) { synctest.Test(t, testTaskInputCapabilities) }

func testTaskInputCapabilities(t *testing.T) {
	// A task whose client cannot elicit fails with -32021 when the
	// handler asks.
	s, _ := inputServer(t, TaskOptions{})
	r := taskCall(t, context.Background(), s, nil, `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, "tools/call", `{"name":"confirm","arguments":{}}`)
	id := r.Result["taskId"].(string)
	task := awaitStatus(t, s, id, TaskFailed, TaskCompleted, TaskInputRequired)
	if e, _ := task["error"].(map[string]any); task["status"] != "failed" || e["code"] != -32021.0 {
		t.Errorf("task = %v; want failed with -32021", task)
	}
}
