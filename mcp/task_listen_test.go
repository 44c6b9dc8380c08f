package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/internal/protocol"
)

// startTaskListen runs a subscriptions/listen request with the given caps
// and filter through Handle in the background.
func startTaskListen(s *Server, caps, filter string, n Notifier) (context.CancelFunc, chan listenResult) {
	msg, derr := mcpwire.Request{ID: "9", Method: "subscriptions/listen", Params: `{"notifications":` + filter + `}`, Caps: caps}.Message()
	if derr != nil {
		panic(derr.Message)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan listenResult, 1)
	go func() {
		resp, status := s.Handle(ctx, nil, &Incoming{Message: &msg}, n)
		done <- listenResult{string(resp), status}
	}()
	return cancel, done
}

func TestTaskStatusNotifications(t *testing.T) { synctest.Test(t, testTaskStatusNotifications) }

func testTaskStatusNotifications(t *testing.T) {
	s, _ := inputServer(t, TaskOptions{})
	id := startTask(t, s, "confirm")
	awaitStatus(t, s, id, TaskInputRequired)

	rec := newRecorder(false)
	cancel, done := startTaskListen(s, extCaps, `{"taskIds":["`+id+`","no-such-task"]}`, rec)
	defer func() { cancel(); <-done }()
	waitFor(t, "the acknowledgement", func() bool { return len(rec.messages()) == 1 })
	ack := rec.messages()[0]
	if !strings.Contains(ack, `"notifications":{"taskIds":["`+id+`"]}`) {
		t.Fatalf("acknowledgement %s; want only the existing task", ack)
	}

	update(t, s, id, `{"ok":`+yes+`}`)
	// working (resumed), then completed with the result.
	waitFor(t, "notifications/tasks up to completed", func() bool {
		msgs := rec.messages()
		return strings.Contains(msgs[len(msgs)-1], `"status":"completed"`)
	})
	var statuses []string
	for _, m := range rec.messages()[1:] {
		var n struct {
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		if err := json.Unmarshal([]byte(m), &n); err != nil {
			t.Fatal(err)
		}
		if n.Method != "notifications/tasks" || n.Params["taskId"] != id {
			t.Fatalf("notification %s", m)
		}
		if meta, _ := n.Params["_meta"].(map[string]any); meta[protocol.MetaSubscriptionID] != 9.0 {
			t.Errorf("notification not tagged with the subscription: %s", m)
		}
		if _, ok := n.Params["resultType"]; ok {
			t.Errorf("notification params carry resultType: %s", m)
		}
		statuses = append(statuses, n.Params["status"].(string))
	}
	// Each notification carries the task as it is when it is sent, so a
	// quick handler may complete before the first goes out; the same state
	// is never sent twice.
	if first := statuses[0]; (first != "working" && first != "completed") || statuses[len(statuses)-1] != "completed" {
		t.Errorf("statuses %v; want working (or already completed) first, completed last", statuses)
	}
	for i := 1; i < len(statuses); i++ {
		if statuses[i] == "completed" && statuses[i-1] == "completed" {
			t.Errorf("completed sent twice: %v", statuses)
		}
	}
	last := rec.messages()[len(rec.messages())-1]
	if !strings.Contains(last, `"result":{"resultType":"complete","content":[{"type":"text","text":"confirmed: true"}]`) {
		t.Errorf("the completed notification does not inline the result: %s", last)
	}
}

func TestTaskStatusNotificationsGated(t *testing.T) {
	synctest.Test(t, testTaskStatusNotificationsGated)
}

func testTaskStatusNotificationsGated(t *testing.T) {
	s, _ := inputServer(t, TaskOptions{})
	rec := newRecorder(false)
	cancel, done := startTaskListen(s, `{}`, `{"taskIds":["x"]}`, rec)
	defer cancel()
	r := <-done
	if !strings.Contains(r.resp, `"code":-32021`) || !strings.Contains(r.resp, TasksExtension) || r.status != http.StatusBadRequest {
		t.Errorf("taskIds without the extension = %s (HTTP %d), want -32021", r.resp, r.status)
	}
	// On a server without tasks, taskIds are simply not honoured.
	plain := NewServer(nil)
	AddTool(plain, &Tool{Name: "echo", Description: "d"}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
	rec = newRecorder(false)
	cancel2, done2 := startTaskListen(plain, extCaps, `{"toolsListChanged":true,"taskIds":["x"]}`, rec)
	defer func() { cancel2(); <-done2 }()
	waitFor(t, "the acknowledgement", func() bool { return len(rec.messages()) == 1 })
	if ack := rec.messages()[0]; strings.Contains(ack, "taskIds") {
		t.Errorf("a server without tasks acknowledged taskIds: %s", ack)
	}
}

// failingStore fails every operation once fail is set.
type failingStore struct {
	*MemoryTaskStore
	fail atomic.Bool
}

var errStoreDown = errors.New("store down")

func (f *failingStore) Create(ctx context.Context, t *TaskRecord) error {
	if f.fail.Load() {
		return errStoreDown
	}
	return f.MemoryTaskStore.Create(ctx, t)
}

func (f *failingStore) Get(ctx context.Context, id string) (*TaskRecord, error) {
	if f.fail.Load() {
		return nil, errStoreDown
	}
	return f.MemoryTaskStore.Get(ctx, id)
}

func (f *failingStore) Update(ctx context.Context, id string, fn func(*TaskRecord) (bool, error)) (*TaskRecord, error) {
	if f.fail.Load() {
		return nil, errStoreDown
	}
	return f.MemoryTaskStore.Update(ctx, id, fn)
}

func TestTaskStoreDown(t *testing.T) { synctest.Test(t, testTaskStoreDown) }

func testTaskStoreDown(t *testing.T) {
	// A store that fails gives 503 on every task method, never a panic,
	// and the handler of a call that could not become a task is stopped.
	st := &failingStore{MemoryTaskStore: NewMemoryTaskStore(0)}
	s, g := taskServer(t, TaskOptions{Store: st})
	id := startTask(t, s, "optional")
	st.fail.Store(true)
	for _, c := range []struct{ method, params string }{
		{"tools/call", `{"name":"optional","arguments":{}}`},
		{"tasks/get", `{"taskId":"` + id + `"}`},
		{"tasks/update", `{"taskId":"` + id + `","inputResponses":{"a":{}}}`},
		{"tasks/cancel", `{"taskId":"` + id + `"}`},
	} {
		r := ext(t, s, c.method, c.params)
		if r.Error == nil || r.Error.Code != -32603 || r.Status != http.StatusServiceUnavailable {
			t.Errorf("%s with the store down = %v %+v (HTTP %d), want -32603 503", c.method, r.Result, r.Error, r.Status)
		}
	}
	// The second tools/call's handler was stopped when its task could not
	// be stored.
	select {
	case <-g.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler of a call whose task could not be stored still runs")
	}
	st.fail.Store(false)
	g.release <- "done"
	awaitStatus(t, s, id, TaskCompleted)
}

// countingStore is a failingStore that counts Update calls.
type countingStore struct {
	failingStore
	updates atomic.Int32
}

func (c *countingStore) Update(ctx context.Context, id string, fn func(*TaskRecord) (bool, error)) (*TaskRecord, error) {
	defer c.updates.Add(1)
	return c.failingStore.Update(ctx, id, fn)
}

// TestTaskStoreOutageLoggedOnce: while the store is down, a running task's
// lease renewals fail every heartbeat; that is logged once, and the
// recovery once, not a warning per heartbeat.
//
// It runs in a synctest bubble: the 2 ms heartbeats tick on the bubble's
// clock, so the count of renewals does not depend on the machine's load.
func TestTaskStoreOutageLoggedOnce(t *testing.T) { synctest.Test(t, testTaskStoreOutageLoggedOnce) }

func testTaskStoreOutageLoggedOnce(t *testing.T) {
	st := &countingStore{failingStore: failingStore{MemoryTaskStore: NewMemoryTaskStore(0)}}
	var logs syncLog
	s := NewServer(&ServerOptions{Tasks: TaskOptions{Store: st, Heartbeat: 2 * time.Millisecond}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	g := newGate()
	AddTool(s, &Tool{Name: "optional", Description: "d", TaskSupport: TaskOptional}, g.handler)
	id := startTask(t, s, "optional")
	<-g.started
	waitUpdates := func(n int32) {
		t.Helper()
		target := st.updates.Load() + n
		settle(t, fmt.Sprintf("%d more store updates", n), func() bool { return st.updates.Load() >= target })
	}
	st.fail.Store(true)
	waitUpdates(10)
	st.fail.Store(false)
	waitUpdates(3)
	g.release <- "done"
	awaitStatus(t, s, id, TaskCompleted)
	out := logs.String()
	if n := strings.Count(out, "renewing a task's lease"); n != 1 {
		t.Errorf("%d lease warnings during one outage, want 1:\n%s", n, out)
	}
	if n := strings.Count(out, "reachable again"); n != 1 {
		t.Errorf("%d recovery messages, want 1:\n%s", n, out)
	}
}

// syncLog is a log sink safe for concurrent writes.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
