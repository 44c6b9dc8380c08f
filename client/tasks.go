package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/mcp"
)

// ErrTaskCancelled is returned by Task.Wait for a task that ended
// cancelled.
var ErrTaskCancelled = errors.New("client: the task was cancelled")

// Poll interval bounds: a server's pollIntervalMs is honoured within them.
const (
	minPollInterval     = 10 * time.Millisecond
	maxPollInterval     = time.Minute
	defaultPollInterval = 500 * time.Millisecond
)

// Task is a handle on a task of the tasks extension: a tool call the
// server runs on its own. Its ID is durable: Client.Task resumes it from
// another client.
type Task struct {
	c *Client
	// ID is the server's task id.
	ID string
	// State is the last state seen (from the CreateTaskResult or the last
	// tasks/get).
	State TaskState

	cfg *callConfig // the progress and status callbacks of the call that made it
}

// TaskState is the state of a task as tasks/get (or the CreateTaskResult)
// reports it. Times and durations the server left out are zero.
type TaskState struct {
	// TaskID is the server's task id.
	TaskID string
	// Status is the task's status; Status.Terminal says whether it still
	// changes.
	Status mcp.TaskStatus
	// StatusMessage is the server's optional note on the status.
	StatusMessage string
	// CreatedAt and LastUpdatedAt are when the task was created and last
	// changed, as the server reports them.
	CreatedAt, LastUpdatedAt time.Time
	// TTL is how long after CreatedAt the server keeps the task (zero:
	// not said, or no limit); PollInterval how often it suggests polling
	// (zero: not said).
	TTL, PollInterval time.Duration
	// InputRequests are the requests of an input_required task, by key,
	// each an encoded {"method":...,"params":...} object.
	InputRequests map[string]json.RawMessage
	// Result is the encoded result of a completed task; Error the encoded
	// JSON-RPC error of a failed one.
	Result json.RawMessage
	Error  json.RawMessage
}

// taskWire is a task as the wire has it.
type taskWire struct {
	TaskID         string                     `json:"taskId"`
	Status         mcp.TaskStatus             `json:"status"`
	StatusMessage  string                     `json:"statusMessage,omitempty"`
	CreatedAt      string                     `json:"createdAt,omitempty"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt,omitempty"`
	TTLMs          *int64                     `json:"ttlMs,omitempty"`
	PollIntervalMs *int64                     `json:"pollIntervalMs,omitempty"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests,omitempty"`
	Result         json.RawMessage            `json:"result,omitempty"`
	Error          json.RawMessage            `json:"error,omitempty"`
}

// UnmarshalJSON decodes a task as the tasks extension sends it: ttlMs and
// pollIntervalMs in milliseconds, createdAt and lastUpdatedAt as RFC 3339
// times. A time that does not parse, or a negative duration, is an error.
func (s *TaskState) UnmarshalJSON(b []byte) error {
	var w taskWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	created, err := parseTaskTime("createdAt", w.CreatedAt)
	if err != nil {
		return err
	}
	updated, err := parseTaskTime("lastUpdatedAt", w.LastUpdatedAt)
	if err != nil {
		return err
	}
	ttl, err := taskMillis("ttlMs", w.TTLMs)
	if err != nil {
		return err
	}
	poll, err := taskMillis("pollIntervalMs", w.PollIntervalMs)
	if err != nil {
		return err
	}
	*s = TaskState{TaskID: w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage,
		CreatedAt: created, LastUpdatedAt: updated, TTL: ttl, PollInterval: poll,
		InputRequests: w.InputRequests, Result: w.Result, Error: w.Error}
	return nil
}

// MarshalJSON encodes s as the wire has it (the inverse of UnmarshalJSON).
func (s TaskState) MarshalJSON() ([]byte, error) {
	w := taskWire{TaskID: s.TaskID, Status: s.Status, StatusMessage: s.StatusMessage,
		InputRequests: s.InputRequests, Result: s.Result, Error: s.Error}
	if !s.CreatedAt.IsZero() {
		w.CreatedAt = s.CreatedAt.Format(time.RFC3339Nano)
	}
	if !s.LastUpdatedAt.IsZero() {
		w.LastUpdatedAt = s.LastUpdatedAt.Format(time.RFC3339Nano)
	}
	if s.TTL != 0 {
		ms := s.TTL.Milliseconds()
		w.TTLMs = &ms
	}
	if s.PollInterval != 0 {
		ms := s.PollInterval.Milliseconds()
		w.PollIntervalMs = &ms
	}
	return json.Marshal(&w)
}

// maxTaskMillis bounds a duration a server sends (a year), so that the
// conversion to time.Duration cannot overflow.
const maxTaskMillis = int64(365 * 24 * time.Hour / time.Millisecond)

func taskMillis(field string, ms *int64) (time.Duration, error) {
	if ms == nil {
		return 0, nil
	}
	if *ms < 0 {
		return 0, fmt.Errorf("%s is negative (%d)", field, *ms)
	}
	return time.Duration(min(*ms, maxTaskMillis)) * time.Millisecond, nil
}

func parseTaskTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s is not an RFC 3339 time: %q", field, v)
	}
	return t, nil
}

// Task returns a handle on the task with the given id, to poll, answer or
// cancel a task another client started.
func (c *Client) Task(id string) *Task {
	return &Task{c: c, ID: id, State: TaskState{TaskID: id}}
}

// StartTool calls a tool and returns either its result or, when the
// server runs the call as a task (Options.Tasks must be set for it to), a
// handle on the task. A result with isError set comes with a *ToolError.
func (c *Client) StartTool(ctx context.Context, name string, args any, opts ...CallOption) (*mcp.CallToolResult, *Task, error) {
	p := map[string]any{"name": name}
	if args != nil {
		raw, err := marshalArgs(args)
		if err != nil {
			return nil, nil, fmt.Errorf("client: tools/call %q: encoding the arguments: %w", name, err)
		}
		p["arguments"] = json.RawMessage(raw)
	}
	cfg := newConfig(opts)
	res, err := c.call(ctx, "tools/call", p, cfg)
	if err != nil {
		return nil, nil, err
	}
	if resultType(res) == "task" {
		var st TaskState
		if err := json.Unmarshal(res, &st); err != nil || st.TaskID == "" {
			return nil, nil, &ProtocolError{Method: "tools/call", Msg: "malformed CreateTaskResult"}
		}
		return nil, &Task{c: c, ID: st.TaskID, State: st, cfg: cfg}, nil
	}
	out, err := decodeToolResult(name, res)
	return out, nil, err
}

func decodeToolResult(name string, res json.RawMessage) (*mcp.CallToolResult, error) {
	out := new(mcp.CallToolResult)
	// UnmarshalJSON without json.Unmarshal's own pass over the result
	// (and its allocations); it needs valid JSON, which jsonscan checks
	// (the depth too).
	if !jsonscan.Valid(res) {
		return nil, &ProtocolError{Method: "tools/call", Msg: "malformed CallToolResult: not valid JSON (or nested deeper than " + strconv.Itoa(jsonscan.MaxDepth) + ")"}
	}
	if err := out.UnmarshalJSON(res); err != nil {
		return nil, &ProtocolError{Method: "tools/call", Msg: "malformed CallToolResult: " + err.Error()}
	}
	if out.IsError {
		return out, &ToolError{Name: name, Result: out}
	}
	return out, nil
}

// Get polls the task once with tasks/get.
func (t *Task) Get(ctx context.Context) (*TaskState, error) {
	res, err := t.c.call(ctx, "tasks/get", map[string]any{"taskId": t.ID}, newConfig(nil))
	if err != nil {
		return nil, err
	}
	var st TaskState
	if err := json.Unmarshal(res, &st); err != nil {
		return nil, &ProtocolError{Method: "tasks/get", Msg: "malformed task: " + err.Error()}
	}
	if st.TaskID != "" && st.TaskID != t.ID {
		return nil, &ProtocolError{Method: "tasks/get", Msg: fmt.Sprintf("asked for task %q, got %q", t.ID, st.TaskID)}
	}
	t.State = st
	return &st, nil
}

// Cancel asks the server to cancel the task (cancellation is cooperative:
// the task may still complete).
func (t *Task) Cancel(ctx context.Context) error {
	_, err := t.c.call(ctx, "tasks/cancel", map[string]any{"taskId": t.ID}, newConfig(nil))
	return err
}

// Wait polls the task until it ends, waiting the server's PollInterval
// between polls (500ms when it gives none, within 10ms and 1 minute), and
// answers its input requests with the client's handlers through
// tasks/update. It returns the tool's result (with a *ToolError when
// isError is set), the task's error as an *mcp.Error when it failed, or
// ErrTaskCancelled. Each poll is bounded by the client's timeout; Wait as a
// whole by ctx alone.
//
// While it polls, each change of the task's statusMessage goes to the
// WithProgress callback, and each changed state to the WithTaskStatus one:
// those of opts, or else those of the StartTool call that returned t.
func (t *Task) Wait(ctx context.Context, opts ...CallOption) (*mcp.CallToolResult, error) {
	answered := map[string]time.Time{} // input key -> lastUpdatedAt when answered
	cfg := t.cfg
	if len(opts) > 0 || cfg == nil {
		cfg = newConfig(opts)
	}
	var seen *TaskState // the last state reported
	st := &t.State
	for polls := 0; ; polls++ {
		seen = reportTask(cfg, seen, st)
		// A CreateTaskResult may already say completed without carrying
		// the result: tasks/get has it.
		if st.Status.Terminal() && (st.Status == mcp.TaskCancelled || len(st.Result) > 0 || len(st.Error) > 0 || polls > 0) {
			break
		}
		if st.Status.Terminal() {
			var err error
			if st, err = t.Get(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if st.Status == mcp.TaskInputRequired && len(st.InputRequests) > 0 {
			if err := t.answer(ctx, st, answered); err != nil {
				return nil, err
			}
		} else if err := sleep(ctx, pollInterval(st)); err != nil {
			return nil, err
		}
		var err error
		if st, err = t.Get(ctx); err != nil {
			return nil, err
		}
	}
	reportTask(cfg, seen, st)
	switch st.Status {
	case mcp.TaskCancelled:
		return nil, ErrTaskCancelled
	case mcp.TaskFailed:
		var e struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(st.Error, &e); err != nil {
			return nil, &ProtocolError{Method: "tasks/get", Msg: "a failed task without a readable error"}
		}
		me := &mcp.Error{Code: e.Code, Message: e.Message}
		if len(e.Data) > 0 {
			me.Data = e.Data
		}
		return nil, me
	}
	if len(st.Result) == 0 {
		return nil, &ProtocolError{Method: "tasks/get", Msg: "a completed task without a result"}
	}
	return decodeToolResult("task "+t.ID, st.Result)
}

// answer answers the input requests of an input_required task that were
// not answered yet in this state.
func (t *Task) answer(ctx context.Context, st *TaskState, answered map[string]time.Time) error {
	if len(st.InputRequests) > 64 {
		return &ProtocolError{Method: "tasks/get", Msg: fmt.Sprintf("%d input requests (at most 64 are answered)", len(st.InputRequests))}
	}
	responses := map[string]json.RawMessage{}
	for key, raw := range st.InputRequests {
		if at, ok := answered[key]; ok && at.Equal(st.LastUpdatedAt) {
			continue
		}
		var req struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(raw, &req); err != nil {
			return &ProtocolError{Method: "tasks/get", Msg: fmt.Sprintf("input request %q is malformed: %v", key, err)}
		}
		out, err := t.c.answerInput(ctx, req.Method, req.Params)
		if err != nil {
			return fmt.Errorf("client: task %s: answering input request %q (%s): %w", t.ID, key, req.Method, err)
		}
		responses[key] = out
		answered[key] = st.LastUpdatedAt
	}
	if len(responses) == 0 {
		// Everything asked was answered; the server has not moved on yet.
		return sleep(ctx, pollInterval(st))
	}
	_, err := t.c.call(ctx, "tasks/update", map[string]any{"taskId": t.ID, "inputResponses": responses}, newConfig(nil))
	return err
}

// reportTask passes st to cfg's callbacks when it differs from seen (the
// last state reported, nil for none) and returns what is now the last
// state reported.
func reportTask(cfg *callConfig, seen, st *TaskState) *TaskState {
	if seen != nil && seen.Status == st.Status && seen.StatusMessage == st.StatusMessage && seen.LastUpdatedAt.Equal(st.LastUpdatedAt) {
		return seen
	}
	if cfg.progress != nil && st.StatusMessage != "" && (seen == nil || seen.StatusMessage != st.StatusMessage) {
		cfg.progress(Progress{Message: st.StatusMessage})
	}
	if cfg.status != nil {
		cfg.status(*st)
	}
	cp := *st
	return &cp
}

func pollInterval(st *TaskState) time.Duration {
	if st.PollInterval == 0 {
		return defaultPollInterval
	}
	return max(min(st.PollInterval, maxPollInterval), minPollInterval)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
