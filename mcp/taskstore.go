package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// TaskStatus is the state of a task.
type TaskStatus string

// The task statuses. Completed, failed and cancelled are terminal: a task
// in one of them never changes again.
const (
	// TaskWorking: the tool's handler is running.
	TaskWorking TaskStatus = "working"
	// TaskInputRequired: the handler asked the client for input; the
	// task waits for tasks/update to deliver the answers.
	TaskInputRequired TaskStatus = "input_required"
	// TaskCompleted: the handler returned a result (also one with
	// isError set: a tool error is a completed task).
	TaskCompleted TaskStatus = "completed"
	// TaskFailed: the call ended with a JSON-RPC error.
	TaskFailed TaskStatus = "failed"
	// TaskCancelled: the client cancelled the task with tasks/cancel.
	TaskCancelled TaskStatus = "cancelled"
)

// Terminal reports whether st is completed, failed or cancelled.
func (st TaskStatus) Terminal() bool {
	return st == TaskCompleted || st == TaskFailed || st == TaskCancelled
}

// taskTransitions is the one table of task status changes. Every writer of
// TaskRecord.Status in this package goes through it (moveTask); a task is
// created working (or, for a TaskRequired tool whose handler returned at
// once, moved on from working before it is first stored):
//
//	           ┌─── tasks/update delivered every answer ───┐
//	           ▼                                           │
//	create ─▶ working ─── the handler asked for input ──▶ input_required
//	           │                                           │
//	           ├──▶ completed  (a result, isError too)     │
//	           ├──▶ failed     ◀───────────────────────────┤  (an error, lease lost, shutdown)
//	           └──▶ cancelled  ◀───────────────────────────┘  (tasks/cancel)
//
// Completed, failed and cancelled are terminal: no edge leaves them. Any
// change not in the table is refused, counted in refusedTaskTransitions
// and logged by the writer, and leaves the record as it was.
var taskTransitions = map[TaskStatus][]TaskStatus{
	TaskWorking:       {TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled},
	TaskInputRequired: {TaskWorking, TaskFailed, TaskCancelled},
}

// refusedTaskTransitions counts the changes moveTask refused, process-wide.
var refusedTaskTransitions atomic.Int64

// errTaskTransition is the error of a refused status change.
var errTaskTransition = errors.New("mcp: task status change not allowed")

// moveTask sets t.Status to to when taskTransitions has that edge from the
// current status; otherwise it counts the refusal, leaves t unchanged and
// returns an error naming both statuses. The caller holds t (a record
// inside TaskStore.Update, or one not stored yet).
func moveTask(t *TaskRecord, to TaskStatus) error {
	if slices.Contains(taskTransitions[t.Status], to) {
		t.Status = to
		return nil
	}
	refusedTaskTransitions.Add(1)
	return fmt.Errorf("%w: task %s from %q to %q", errTaskTransition, t.ID, t.Status, to)
}

// TaskRecord is the stored state of one task: what tasks/get reports, and
// what a server needs to run the task's handler again when tasks/update
// delivers the input it asked for. A TaskStore keeps records; servers
// sharing a store share their tasks. Records are plain data that encode to
// JSON and back without loss.
type TaskRecord struct {
	// ID is the task id: unguessable, it is the only handle to the task.
	ID string `json:"id"`
	// Owner is Principal.ID() of the caller that created the task, or ""
	// when the call had no Principal. A task with an Owner is visible to
	// that principal only.
	Owner string `json:"owner,omitempty"`
	// Tool is the name of the tool the task runs.
	Tool   string     `json:"tool"`
	Status TaskStatus `json:"status"`
	// StatusMessage is an optional human-readable note on the status: the
	// handler's latest progress message while it works, the error message
	// of a failed task.
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt and UpdatedAt are when the task was created and when its
	// status, message, input requests, result or error last changed.
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// TTL is how long after CreatedAt the task may be discarded; zero
	// means never. Servers extend it while a task runs or waits, so that a
	// task outlives its last change by at least the server's
	// TaskOptions.TTL. Stores delete a record once CreatedAt+TTL passed
	// (see Expiry).
	TTL time.Duration `json:"ttl,omitempty"`
	// PollInterval is the polling interval suggested to clients.
	PollInterval time.Duration `json:"pollInterval,omitempty"`

	// InputRequests holds the outstanding input requests of a task in
	// input_required, by key: each value is an encoded
	// {"method":...,"params":...} object.
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// Result is the encoded result object of a completed task: what the
	// tools/call would have returned.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the encoded JSON-RPC error object of a failed task.
	Error json.RawMessage `json:"error,omitempty"`

	// Params are the params of the tools/call request that created the
	// task (arguments and _meta), kept to run the handler again.
	Params json.RawMessage `json:"params,omitempty"`
	// Answers are the client's answers to input requests so far, by key:
	// a handler that runs again gets them back from Elicit and friends.
	Answers map[string]json.RawMessage `json:"answers,omitempty"`
	// State is the handler's own state (ToolRequest.SaveState), when it
	// saved any.
	State json.RawMessage `json:"state,omitempty"`
	// Runner identifies the server process running the handler while the
	// task is working, and LeaseUntil is when that claim lapses unless the
	// runner renews it. A working task whose lease lapsed has lost its
	// runner (the process died) and is reported failed.
	Runner     string    `json:"runner,omitempty"`
	LeaseUntil time.Time `json:"leaseUntil,omitzero"`
}

// Expiry returns when the record may be deleted: CreatedAt+TTL, or the
// zero time when it never expires.
func (t *TaskRecord) Expiry() time.Time {
	if t.TTL <= 0 {
		return time.Time{}
	}
	return t.CreatedAt.Add(t.TTL)
}

// Clone returns a deep copy of t.
func (t *TaskRecord) Clone() *TaskRecord {
	c := *t
	c.InputRequests = cloneRawMap(t.InputRequests)
	c.Answers = cloneRawMap(t.Answers)
	c.Result = cloneRaw(t.Result)
	c.Error = cloneRaw(t.Error)
	c.Params = cloneRaw(t.Params)
	c.State = cloneRaw(t.State)
	return &c
}

func cloneRaw(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

func cloneRawMap(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	c := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		c[k] = cloneRaw(v)
	}
	return c
}

// Errors a TaskStore returns.
var (
	// ErrTaskNotFound: no task has the id (or it expired).
	ErrTaskNotFound = errors.New("mcp: task not found")
	// ErrTaskExists: Create was given an id that is taken.
	ErrTaskExists = errors.New("mcp: task id already exists")
	// ErrTaskStoreFull: the store holds as many tasks as it may.
	ErrTaskStoreFull = errors.New("mcp: task store full")
)

// TaskStore keeps task records where every server that shares the store
// can reach them, and carries signals about tasks between those servers.
// The default is a MemoryTaskStore private to one Server; the module
// github.com/mcpkit/mcpkit/redis has one on Redis, for replicas.
//
// Records passed in and returned are copies: the store never keeps a
// caller's record, and callers may modify what it returns.
// Implementations must be safe for concurrent use.
type TaskStore interface {
	// Create stores a new record. It returns ErrTaskExists when the id is
	// taken and ErrTaskStoreFull when the store holds its maximum of
	// unexpired tasks. Once Create returned, Get finds the record from
	// every server sharing the store.
	Create(ctx context.Context, t *TaskRecord) error
	// Get returns the record with the id, or ErrTaskNotFound.
	Get(ctx context.Context, id string) (*TaskRecord, error)
	// Update changes a record atomically: it calls fn with the current
	// record and, when fn reports a change, stores the record as fn left
	// it, unless another update came first, in which case it calls fn
	// again with the newer record. It returns the record as stored
	// (unchanged when fn reported no change), ErrTaskNotFound, or fn's
	// error.
	Update(ctx context.Context, id string, fn func(t *TaskRecord) (changed bool, err error)) (*TaskRecord, error)
	// Publish tells every server sharing the store, this one included,
	// that the task with the id changed in a way its runner must hear of
	// (it was cancelled). It does not wait for delivery.
	Publish(ctx context.Context, id string) error
	// Subscribe calls fn with the id of every task published from now on,
	// until the returned function is called. fn must return quickly.
	Subscribe(fn func(id string)) (unsubscribe func())
}

// MemoryTaskStore is a TaskStore in the memory of one process: it serves
// a single server (or several Servers in one process). Records are deleted
// once they expire. Use NewMemoryTaskStore; it is safe for concurrent use.
type MemoryTaskStore struct {
	max int

	mu        sync.Mutex
	tasks     map[string]*TaskRecord
	nextSweep time.Time
	subs      map[*taskSub]struct{}
	now       func() time.Time
}

type taskSub struct{ fn func(string) }

// DefaultMaxStoredTasks is the default bound of a MemoryTaskStore.
const DefaultMaxStoredTasks = 10000

// NewMemoryTaskStore returns an empty store that holds at most max
// unexpired tasks (DefaultMaxStoredTasks when max is zero; no bound when
// it is Off).
func NewMemoryTaskStore(max int) *MemoryTaskStore {
	switch {
	case max == 0:
		max = DefaultMaxStoredTasks
	case max < 0:
		max = math.MaxInt
	}
	return &MemoryTaskStore{max: max, tasks: make(map[string]*TaskRecord), subs: make(map[*taskSub]struct{}), now: time.Now}
}

// Len returns the number of unexpired tasks in the store.
func (m *MemoryTaskStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(m.now(), true)
	return len(m.tasks)
}

// sweep deletes expired records, at most once a second unless forced.
// Callers hold m.mu.
func (m *MemoryTaskStore) sweep(now time.Time, force bool) {
	if !force && now.Before(m.nextSweep) {
		return
	}
	m.nextSweep = now.Add(time.Second)
	for id, t := range m.tasks {
		if expired(t, now) {
			delete(m.tasks, id)
		}
	}
}

func expired(t *TaskRecord, now time.Time) bool {
	e := t.Expiry()
	return !e.IsZero() && !now.Before(e)
}

// Create implements TaskStore.
func (m *MemoryTaskStore) Create(ctx context.Context, t *TaskRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if old, ok := m.tasks[t.ID]; ok && !expired(old, now) {
		return ErrTaskExists
	}
	if len(m.tasks) >= m.max {
		m.sweep(now, true)
		if len(m.tasks) >= m.max {
			return ErrTaskStoreFull
		}
	} else {
		m.sweep(now, false)
	}
	m.tasks[t.ID] = t.Clone()
	return nil
}

// Get implements TaskStore.
func (m *MemoryTaskStore) Get(ctx context.Context, id string) (*TaskRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return nil, ErrTaskNotFound
	}
	if expired(t, m.now()) {
		delete(m.tasks, id)
		return nil, ErrTaskNotFound
	}
	return t.Clone(), nil
}

// Update implements TaskStore.
func (m *MemoryTaskStore) Update(ctx context.Context, id string, fn func(*TaskRecord) (bool, error)) (*TaskRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok || expired(t, m.now()) {
		delete(m.tasks, id)
		return nil, ErrTaskNotFound
	}
	c := t.Clone()
	changed, err := fn(c)
	if err != nil {
		return nil, err
	}
	if !changed {
		return t.Clone(), nil
	}
	c.ID = id
	m.tasks[id] = c
	return c.Clone(), nil
}

// Publish implements TaskStore: it calls the subscribers before it
// returns.
func (m *MemoryTaskStore) Publish(ctx context.Context, id string) error {
	m.mu.Lock()
	fns := make([]func(string), 0, len(m.subs))
	for s := range m.subs {
		fns = append(fns, s.fn)
	}
	m.mu.Unlock()
	for _, fn := range fns {
		fn(id)
	}
	return nil
}

// Subscribe implements TaskStore.
func (m *MemoryTaskStore) Subscribe(fn func(string)) func() {
	s := &taskSub{fn: fn}
	m.mu.Lock()
	m.subs[s] = struct{}{}
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		delete(m.subs, s)
		m.mu.Unlock()
	}
}
