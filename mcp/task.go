package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/jsonrpc"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// This file implements the tasks extension (io.modelcontextprotocol/tasks):
// a tools/call of a tool that supports tasks may be answered with a task
// handle (resultType "task") while its handler goes on running in the
// background; the client polls tasks/get, answers the handler's input
// requests with tasks/update and may cancel it with tasks/cancel. Handlers
// keep their one shape: the library decides, per call, whether the call
// becomes a task (see Tool.TaskSupport and TaskOptions.SyncWait).

// TasksExtension is the identifier of the tasks extension, the key under
// which clients declare it in their per-request capabilities and servers
// advertise it in capabilities.extensions.
const TasksExtension = "io.modelcontextprotocol/tasks"

// TaskSupport says whether the calls of a tool may run as tasks.
type TaskSupport uint8

const (
	// TaskNone: calls are always answered directly (the default).
	TaskNone TaskSupport = iota
	// TaskOptional: a call from a client that declared the tasks
	// extension becomes a task unless its handler answers within
	// TaskOptions.SyncWait; other clients get a direct answer.
	TaskOptional
	// TaskRequired: every call becomes a task, however fast its handler
	// answers (an input_required round before the task starts excepted).
	// A client that did not declare the tasks extension gets error -32021
	// naming it in data.requiredCapabilities.
	TaskRequired
)

// String returns "none", "optional" or "required" (the words of
// UnmarshalText).
func (t TaskSupport) String() string {
	switch t {
	case TaskNone:
		return "none"
	case TaskOptional:
		return "optional"
	case TaskRequired:
		return "required"
	}
	return "TaskSupport(" + strconv.Itoa(int(t)) + ")"
}

// MarshalText encodes t as String does.
func (t TaskSupport) MarshalText() ([]byte, error) {
	if t > TaskRequired {
		return nil, errors.New("mcp: " + t.String() + " has no name")
	}
	return []byte(t.String()), nil
}

// UnmarshalText reads "none", "optional" or "required", as configuration
// files and flags name task support.
func (t *TaskSupport) UnmarshalText(text []byte) error {
	switch string(text) {
	case "none":
		*t = TaskNone
	case "optional":
		*t = TaskOptional
	case "required":
		*t = TaskRequired
	default:
		return fmt.Errorf("%q: want none, optional or required", text)
	}
	return nil
}

// TaskOptions configures the tasks of a Server. The zero value gives
// sensible defaults; Off follows the convention of ServerOptions.
type TaskOptions struct {
	// Store keeps the tasks. Default: a MemoryTaskStore private to the
	// server. Replicas that serve one endpoint need a shared store (see
	// the module github.com/mcpkit/mcpkit/redis), so that any of them can
	// answer tasks/get, tasks/update and tasks/cancel for any task.
	Store TaskStore
	// TTL is how long a task stays readable: at least TTL after it was
	// created and TTL after its last change (ttlMs grows while a task runs
	// or waits for input). Default one hour. Off keeps tasks until the
	// store drops them (ttlMs null).
	TTL time.Duration
	// PollInterval is the polling interval suggested to clients
	// (pollIntervalMs). Default 500 milliseconds. It cannot be off.
	PollInterval time.Duration
	// SyncWait is how long a tools/call of a TaskOptional or TaskRequired
	// tool waits for its handler before answering with a task. A handler
	// that answers within it is answered directly (for TaskRequired: with
	// a task that is already finished), and one that asks for input within
	// it gets an input_required result (multi round-trip input before the
	// task starts). A handler can end the wait early with
	// ToolRequest.StartTask. Default 50 milliseconds. Off starts the task
	// before the handler runs.
	SyncWait time.Duration
	// MaxRunning bounds the handlers this server runs as tasks at once.
	// Past it, a call that would start one gets error -32603 with HTTP
	// status 503 and data {"maxRunningTasks": N}. Default 1000. It cannot
	// be off.
	MaxRunning int
	// Heartbeat is how often a server renews its claim on the tasks it
	// runs. A working task whose runner missed three heartbeats (its
	// process died) is reported failed. Default 10 seconds. It cannot be
	// off.
	Heartbeat time.Duration
}

// Defaults of TaskOptions.
const (
	defaultTaskTTL      = time.Hour
	defaultPollInterval = 500 * time.Millisecond
	defaultSyncWait     = 50 * time.Millisecond
	defaultMaxRunning   = 1000
	defaultHeartbeat    = 10 * time.Second
)

// StartTask ends the synchronous part of a call to a tool that supports
// tasks, when the call may become a task (the tool is TaskOptional or
// TaskRequired and the client declared the tasks extension): the client
// gets the task handle at once, and the handler goes on in the background;
// from then on its input requests (Elicit and friends) put the task in
// input_required instead of answering the call with input_required, and
// progress updates the task's status message. It reports whether the
// call now runs as a task, and does nothing otherwise.
func (r *ToolRequest) StartTask() bool {
	if r.x == nil || r.x.task == nil {
		return false
	}
	return r.x.task.start()
}

// StartTask is ToolRequest.StartTask for a Provider's tools/call that may
// become a task (see TaskProvider): the caller gets the task handle at
// once, and input requested from then on parks the task in
// input_required. It reports whether the call now runs as a task, and does
// nothing in other requests.
func (r *MethodRequest) StartTask() bool {
	if r.x == nil || r.x.task == nil {
		return false
	}
	return r.x.task.start()
}

// TaskID returns the id of the task a Provider's tools/call runs as, or
// will run as if it becomes one (see TaskProvider); "" in a call that
// cannot become a task.
func (r *MethodRequest) TaskID() string {
	if r.x == nil || r.x.task == nil {
		return ""
	}
	return r.x.task.id
}

// TaskCanceller is implemented by a TaskProvider that keeps something of
// a task between its runs (the bridge holds the backend call of a task
// waiting for input): CancelTask is called with the task's id when
// tasks/cancel, on any server sharing the task store, cancelled a task
// that no run of this server was serving, so that it can let go of it.
// It is called on a goroutine of its own, also for ids the provider does
// not know (ignore those).
type TaskCanceller interface {
	CancelTask(id string)
}

// errShutdown is the cause with which Shutdown cancels running tasks.
var errShutdown = errors.New("mcp: server shut down")

// taskState is the tasks machinery of one Server.
type taskState struct {
	s            *Server
	store        TaskStore
	storeDown    atomic.Bool   // a background store write failed and none has succeeded since
	ttl          time.Duration // <= 0: unlimited
	pollInterval time.Duration
	syncWait     time.Duration // < 0: start at once
	maxRunning   int
	heartbeat    time.Duration
	runner       string // identifies this server in TaskRecord.Runner

	// enabled is set once a task-capable tool was registered or a store
	// configured; the tasks/* methods answer -32601 until then.
	enabled  atomic.Bool
	initOnce sync.Once
	unsub    func()

	mu      sync.Mutex
	runs    map[string]*taskRun // runs in their task phase, by task id
	running int                 // reserved handler slots
	closed  bool
	wg      sync.WaitGroup // background handlers

	// Hooks for tests.
	now   func() time.Time
	newID func() string
}

func (ts *taskState) init(s *Server, o *TaskOptions) {
	ts.s = s
	ts.store = o.Store
	ts.ttl = offSetting(o.TTL, defaultTaskTTL)
	ts.pollInterval = setting("Tasks.PollInterval", o.PollInterval, defaultPollInterval)
	ts.syncWait = offSetting(o.SyncWait, defaultSyncWait)
	ts.maxRunning = setting("Tasks.MaxRunning", o.MaxRunning, defaultMaxRunning)
	ts.heartbeat = setting("Tasks.Heartbeat", o.Heartbeat, defaultHeartbeat)
	ts.runner = randomID()
	ts.runs = make(map[string]*taskRun)
	ts.now = time.Now
	ts.newID = randomID
	if o.Store != nil {
		ts.enable()
	}
}

// enable turns the tasks methods on; called when a task-capable tool is
// registered.
func (ts *taskState) enable() {
	ts.initOnce.Do(func() {
		if ts.store == nil {
			ts.store = NewMemoryTaskStore(0)
		}
		ts.unsub = ts.store.Subscribe(ts.signal)
		ts.enabled.Store(true)
	})
}

// randomID returns 128 random bits, base64url-encoded (22 characters):
// task ids are bearer handles and must be unguessable.
func randomID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand panics on the impossible)
	return b64.EncodeToString(b[:])
}

// lease is how long a runner's claim on a task lasts without renewal.
func (ts *taskState) lease() time.Duration { return 3 * ts.heartbeat }

// keep extends t.TTL so that the task stays readable for the server's TTL
// from now, and a working task at least until its runner's lease lapses
// (the runner renews both at every heartbeat).
func (ts *taskState) keep(t *TaskRecord, now time.Time) {
	if ts.ttl <= 0 {
		t.TTL = 0
		return
	}
	ext := ts.ttl
	if t.Status == TaskWorking {
		ext = max(ext, ts.lease())
	}
	if min := now.Sub(t.CreatedAt) + ext; t.TTL < min {
		// Whole milliseconds: ttlMs is an integer.
		t.TTL = min.Truncate(time.Millisecond)
	}
}

// errTooManyTasks is the error past TaskOptions.MaxRunning.
func (ts *taskState) errTooManyTasks() *Error {
	return &Error{
		Code:    jsonrpc.CodeInternalError,
		Message: "Too many tasks: this server runs at most " + strconv.Itoa(ts.maxRunning) + " tasks at once; retry later",
		Data:    json.RawMessage(`{"maxRunningTasks":` + strconv.Itoa(ts.maxRunning) + `}`),
		status:  http.StatusServiceUnavailable,
	}
}

// reserve takes a handler slot, failing past MaxRunning or after Shutdown.
func (ts *taskState) reserve() error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return &Error{Code: jsonrpc.CodeInternalError, Message: "Server shutting down: no new tasks are started; retry on another replica", status: http.StatusServiceUnavailable}
	}
	if ts.running >= ts.maxRunning {
		return ts.errTooManyTasks()
	}
	ts.running++
	ts.wg.Add(1)
	return nil
}

// release returns a slot taken by reserve.
func (ts *taskState) release() {
	ts.mu.Lock()
	ts.running--
	ts.mu.Unlock()
	ts.wg.Done()
}

// signal receives the ids published on the store: a task this server runs
// may have been cancelled through another server.
func (ts *taskState) signal(id string) {
	ts.mu.Lock()
	r := ts.runs[id]
	ts.mu.Unlock()
	if r == nil {
		// No run here: a provider may hold work of the task between
		// its runs (a task waiting for input).
		if tc, ok := ts.s.opts.Provider.(TaskCanceller); ok {
			go tc.CancelTask(id)
		}
		return
	}
	go r.checkCancelled()
}

// shutdown cancels every task this server runs and waits for their
// handlers to return, or for ctx.
func (ts *taskState) shutdown(ctx context.Context) error {
	ts.mu.Lock()
	ts.closed = true
	runs := make([]*taskRun, 0, len(ts.runs))
	for _, r := range ts.runs {
		runs = append(runs, r)
	}
	ts.mu.Unlock()
	for _, r := range runs {
		r.cancel(errShutdown)
	}
	done := make(chan struct{})
	go func() {
		ts.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if ts.unsub != nil {
		ts.unsub()
	}
	return nil
}

// principalID returns the id a task created by a request of principal p
// is bound to: "" without a principal.
func principalID(p *Principal) string {
	if p == nil {
		return ""
	}
	return p.ID()
}

// taskMethod is the common start of tasks/get, tasks/update and
// tasks/cancel: the extension must be enabled (-32601) and declared by the
// request (-32021), and params.taskId must be a string.
func (x *exchange) taskMethod() (string, error) {
	if !x.s.tasks.enabled.Load() {
		return "", methodNotFound(x.method)
	}
	// Only the extension matters here: scan for it rather than decode the
	// capabilities.
	exts, _ := jsonscan.Lookup(x.meta.caps, "extensions")
	if _, ok := jsonscan.Lookup(exts, TasksExtension); !ok || !jsonscan.IsObject(exts) {
		return "", missingTasksExtension()
	}
	v, _ := x.param("taskId")
	id, ok := jsonscan.String(v)
	if !ok {
		return "", InvalidParams("Invalid params: " + x.method + " needs a string taskId")
	}
	return id, nil
}

func missingTasksExtension() *Error {
	return MissingCapability(ClientCapabilities{Extensions: map[string]json.RawMessage{TasksExtension: json.RawMessage("{}")}})
}

func unknownTask(id string) *Error {
	return InvalidParams("Unknown task: " + strconv.Quote(id) + " (it does not exist, or it expired)")
}

// getTask reads a task the caller may see: tasks bound to a principal are
// reported unknown to everyone else.
func (x *exchange) getTask(ctx context.Context, id string) (*TaskRecord, error) {
	t, err := x.s.tasks.store.Get(ctx, id)
	if err != nil {
		return nil, x.s.tasks.storeError(err, id)
	}
	if t.Owner != "" && t.Owner != principalID(x.info.Principal) {
		return nil, unknownTask(id)
	}
	return t, nil
}

// storeError turns a store failure into a protocol error.
func (ts *taskState) storeError(err error, id string) error {
	switch {
	case errors.Is(err, ErrTaskNotFound):
		return unknownTask(id)
	case errors.Is(err, ErrTaskStoreFull):
		return &Error{Code: jsonrpc.CodeInternalError, Message: "Too many tasks: the task store is full; retry later", status: http.StatusServiceUnavailable, Err: err}
	}
	if e, ok := asError(err); ok {
		return e
	}
	ts.s.log.Error("mcp: task store", "task", id, "err", err)
	return &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the task store failed", status: http.StatusServiceUnavailable, Err: err}
}

func handleTasksGet(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	id, err := x.taskMethod()
	if err != nil {
		return nil, err
	}
	t, err := x.getTask(ctx, id)
	if err != nil {
		return nil, err
	}
	ts := &x.s.tasks
	if now := ts.now(); t.Status == TaskWorking && t.Runner != "" && !t.LeaseUntil.IsZero() && now.After(t.LeaseUntil) {
		// The runner stopped renewing its claim: its process is gone.
		lost := false
		t, err = ts.store.Update(ctx, id, func(t *TaskRecord) (bool, error) {
			lost = t.Status == TaskWorking && now.After(t.LeaseUntil)
			if !lost {
				return false, nil
			}
			ts.fail(t, &Error{Code: jsonrpc.CodeInternalError, Message: "The server running the task stopped before the task finished"}, now)
			return true, nil
		})
		if err != nil {
			return nil, ts.storeError(err, id)
		}
		if lost {
			ts.changed(id)
		}
	}
	body := appendTask(make([]byte, 0, 256+len(t.Result)+len(t.Error)), t, true)
	return x.appendResult(dst, resultComplete, false, body, nil), nil
}

func handleTasksUpdate(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	id, err := x.taskMethod()
	if err != nil {
		return nil, err
	}
	resp, ok := x.param("inputResponses")
	if !ok || !jsonscan.IsObject(resp) {
		return nil, InvalidParams("Invalid params: tasks/update needs inputResponses, an object that maps the keys of the task's input requests to the client's results")
	}
	t, err := x.getTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Status == TaskInputRequired && answersAny(t, resp) {
		if err := x.s.tasks.deliver(ctx, x, t, resp); err != nil {
			return nil, err
		}
	}
	return x.appendResult(dst, resultComplete, false, nil, nil), nil
}

// answersAny reports whether resp answers one of the task's outstanding
// input requests.
func answersAny(t *TaskRecord, resp []byte) bool {
	for k := range t.InputRequests {
		if v, ok := jsonscan.Lookup(resp, k); ok && jsonscan.Kind(v) == '{' {
			return true
		}
	}
	return false
}

func handleTasksCancel(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	id, err := x.taskMethod()
	if err != nil {
		return nil, err
	}
	t, err := x.getTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if !t.Status.Terminal() {
		if err := x.s.tasks.cancelTask(ctx, id, "Cancelled by the client"); err != nil {
			return nil, err
		}
	}
	return x.appendResult(dst, resultComplete, false, nil, nil), nil
}

// cancelTask moves task id to cancelled with the status message msg,
// unless it ended meanwhile, and tells its runner, wherever it is, to stop
// the handler.
func (ts *taskState) cancelTask(ctx context.Context, id, msg string) error {
	now := ts.now()
	cancelled := false
	_, err := ts.store.Update(ctx, id, func(t *TaskRecord) (bool, error) {
		cancelled = !t.Status.Terminal()
		if !cancelled {
			return false, nil // finished meanwhile: it stays as it ended
		}
		if err := moveTask(t, TaskCancelled); err != nil {
			cancelled = false
			return false, err
		}
		t.StatusMessage = msg
		t.InputRequests, t.Runner, t.LeaseUntil = nil, "", time.Time{}
		t.UpdatedAt = now
		ts.keep(t, now)
		return true, nil
	})
	if err != nil {
		return ts.storeError(err, id)
	}
	if cancelled {
		ts.changed(id)
	}
	if err := ts.store.Publish(ctx, id); err != nil {
		ts.s.log.Warn("mcp: publishing a task cancellation", "task", id, "err", err)
	}
	return nil
}

// fail moves t to failed with the error e, and leaves it as it is when
// the table refuses that (it ended meanwhile): it logs the refusal.
func (ts *taskState) fail(t *TaskRecord, e *Error, now time.Time) {
	if err := moveTask(t, TaskFailed); err != nil {
		ts.s.log.Error("mcp: failing a task", "err", err)
		return
	}
	t.StatusMessage = e.Message
	t.Error = jsonrpcErrorObject(e)
	t.Result, t.InputRequests, t.Runner, t.LeaseUntil = nil, nil, "", time.Time{}
	t.UpdatedAt = now
	ts.keep(t, now)
}

// jsonrpcErrorObject encodes e as a JSON-RPC error object.
func jsonrpcErrorObject(e *Error) json.RawMessage {
	w := e.wire()
	b := []byte(`{"code":`)
	b = strconv.AppendInt(b, int64(w.Code), 10)
	b = append(b, `,"message":`...)
	b = wire.AppendString(b, w.Message)
	if len(w.Data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, w.Data...)
	}
	return append(b, '}')
}

// appendTask appends the task t as a JSON object: the members of a
// CreateTaskResult (detailed false), or of a tasks/get result (detailed
// true: with inputRequests, result or error according to the status).
func appendTask(dst []byte, t *TaskRecord, detailed bool) []byte {
	dst = append(dst, `{"taskId":`...)
	dst = wire.AppendString(dst, t.ID)
	dst = append(dst, `,"status":`...)
	dst = wire.AppendString(dst, string(t.Status))
	if t.StatusMessage != "" {
		dst = append(dst, `,"statusMessage":`...)
		dst = wire.AppendString(dst, t.StatusMessage)
	}
	dst = append(dst, `,"createdAt":"`...)
	dst = appendTimestamp(dst, t.CreatedAt)
	dst = append(dst, `","lastUpdatedAt":"`...)
	dst = appendTimestamp(dst, t.UpdatedAt)
	dst = append(dst, `","ttlMs":`...)
	if t.TTL > 0 {
		dst = strconv.AppendInt(dst, max(t.TTL.Milliseconds(), 1), 10)
	} else {
		dst = append(dst, "null"...)
	}
	if t.PollInterval > 0 {
		dst = append(dst, `,"pollIntervalMs":`...)
		dst = strconv.AppendInt(dst, max(t.PollInterval.Milliseconds(), 1), 10)
	}
	if detailed {
		switch t.Status {
		case TaskInputRequired:
			dst = append(dst, `,"inputRequests":`...)
			dst = append(dst, mustMarshal(t.InputRequests)...)
		case TaskCompleted:
			dst = append(dst, `,"result":`...)
			dst = append(dst, t.Result...)
		case TaskFailed:
			dst = append(dst, `,"error":`...)
			dst = append(dst, t.Error...)
		}
	}
	return append(dst, '}')
}

// appendTimestamp appends t in UTC as RFC 3339 with milliseconds.
func appendTimestamp(dst []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000Z07:00")
}

// changed tells subscriptions/listen streams (on every replica, with a
// distributed Bus) that asked for the task's notifications/tasks that the
// task changed.
func (ts *taskState) changed(id string) {
	if ts.s.listen.enabled() {
		ts.s.bus.Publish(Change{Kind: TaskChanged, TaskID: id})
	}
}

// listenTasks checks the taskIds of a subscriptions/listen request: asking
// needs the tasks extension (-32021), and the ids honoured are those of
// tasks that exist and that the caller may see. It returns nil when the
// server has no tasks.
func (x *exchange) listenTasks(ctx context.Context, ids []string) ([]string, error) {
	if !x.s.tasks.enabled.Load() {
		return nil, nil
	}
	exts, _ := jsonscan.Lookup(x.meta.caps, "extensions")
	if _, ok := jsonscan.Lookup(exts, TasksExtension); !ok || !jsonscan.IsObject(exts) {
		return nil, missingTasksExtension()
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if _, err := x.getTask(ctx, id); err == nil {
			out = append(out, id)
		}
	}
	return out, nil
}

// appendTaskNotification appends the members of a notifications/tasks
// params object after the subscription tag in params: the task as tasks/get
// reports it now (several changes in a row may show the same state). It
// reports false when the task is gone, or when the stream was already sent
// this very state (sent holds the last state sent per task).
func (x *exchange) appendTaskNotification(ctx context.Context, params []byte, id string, sent map[string][]byte) ([]byte, bool) {
	t, err := x.getTask(ctx, id)
	if err != nil {
		return params, false
	}
	task := appendTask(nil, t, true)
	if string(sent[id]) == string(task) {
		return params, false
	}
	sent[id] = task
	params = append(params, ',')
	return append(params, objectInner(task)...), true
}
