package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// A tools/call of a task-capable tool from a client that declared the
// tasks extension runs its handler in a goroutine of its own, with a
// context detached from the request (taskRun.ctx). The call first waits
// for the handler for up to TaskOptions.SyncWait (the sync phase): a
// handler that answers by then is answered directly. Otherwise, or when
// the handler calls StartTask, the task record is created in the store and
// the client gets the task handle (the task phase): the handler's outcome
// then goes to the record. Which phase the handler's outcome belongs to is
// decided under taskRun.mu: the handler returning and the switch to the
// task phase race, and exactly one of them wins.
//
// A task whose handler asked for input is parked in input_required with no
// goroutine; tasks/update, on whichever server it arrives, stores the
// answers and, once every outstanding request is answered, runs the
// handler again from the start on that server, with the answers (handlers
// are written for re-runs: see Elicit).

// taskRun is one run of a handler that may be, or is, a task.
type taskRun struct {
	ts     *taskState
	t      *toolEntry
	x      *exchange // what the handler sees: owns a copy of the params
	id     string
	client string // whose MaxTasksPerClient quota the run counts against; "" for none
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	detached bool // the task phase began
	finished bool // the handler returned in the sync phase
	res      *CallToolResult
	err      error
	settled  bool // the outcome went to the record (task phase)

	startCh   chan struct{} // closed when StartTask ends the sync phase
	doneCh    chan struct{} // closed when the handler returned in the sync phase
	created   chan struct{} // closed once the record exists, or creating it failed
	createErr error         // set before created is closed

	beat *time.Timer // heartbeat (task phase)

	// Progress coalescing: at most one status message write per
	// progressGap; the latest message wins.
	msg      string
	msgTimer *time.Timer
	msgLast  time.Time
}

// progressGap is the least time between two status message writes.
var progressGap = 200 * time.Millisecond

// errTaskCancelled is the cause with which tasks/cancel cancels a handler.
var errTaskCancelled = errors.New("mcp: task cancelled by the client")

// newRun returns the run of task id. Its context keeps the values of
// parent, the context of the request that started or resumed the task
// (trace spans, loggers, whatever middleware put there), but not its
// cancellation: the task outlives the request.
func (ts *taskState) newRun(parent context.Context, t *toolEntry, x *exchange, id string) *taskRun {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	r := &taskRun{
		ts: ts, t: t, x: x, id: id, ctx: ctx, cancel: cancel,
		startCh: make(chan struct{}), doneCh: make(chan struct{}), created: make(chan struct{}),
	}
	x.task = r
	return r
}

// taskExchange returns the exchange a task-capable handler runs with: like
// x, but owning params (a copy), so that it outlives the request.
func (x *exchange) taskExchange(params []byte) *exchange {
	tx := &exchange{
		s: x.s, snap: x.snap, id: x.id, method: x.method, params: params,
		info: x.info, infoDone: true, notifier: x.notifier,
	}
	tx.meta, _ = scanMeta(params)
	if len(x.token) > 0 {
		tx.token = bytes.Clone(x.token)
	}
	return tx
}

// toolRequest returns the request the handler of tool name receives.
func (x *exchange) toolRequest(name string) *ToolRequest {
	args, ok := x.param("arguments")
	if !ok || jsonscan.Kind(args) == 'n' {
		args = []byte("{}")
	}
	return &ToolRequest{requestBase: requestBase{x: x}, Info: &x.info, Name: name, Arguments: json.RawMessage(args)}
}

// callTask serves a tools/call that may become a task.
func (x *exchange) callTask(ctx context.Context, t *toolEntry, name string, dst []byte) ([]byte, error) {
	ts := &x.s.tasks
	client := x.clientKey()
	if err := x.s.quota.take(quotaTasks, client); err != nil {
		return nil, err
	}
	if err := ts.reserve(); err != nil {
		x.s.quota.release(quotaTasks, client)
		return nil, err
	}
	tx := x.taskExchange(bytes.Clone(x.params))
	r := ts.newRun(ctx, t, tx, ts.newID())
	r.client = client
	req := tx.toolRequest(name)
	if err := r.openRound(req, nil); err != nil {
		r.cancel(nil)
		ts.release()
		x.s.quota.release(quotaTasks, client)
		return nil, err
	}
	if ts.syncWait < 0 {
		r.start()
	}
	go r.run(req)

	var timeout <-chan time.Time
	if ts.syncWait > 0 {
		timer := time.NewTimer(ts.syncWait)
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case <-r.doneCh:
	case <-r.startCh:
	case <-timeout:
	case <-ctx.Done():
		// The client left before it learnt of a task: drop the call.
		tx.finish()
		if r.detach() {
			r.abandon(ctx.Err())
		}
		r.cancel(context.Cause(ctx))
		return nil, requestCancelled(ctx)
	}
	detached := r.detach()
	tx.finish() // request-scoped notifications end with the sync phase
	if !detached {
		return r.answer(ctx, x, req, dst)
	}
	now := ts.now()
	rec := r.record(now, TaskWorking)
	ts.keep(rec, now)
	if err := ts.store.Create(ctx, rec); err != nil {
		r.abandon(err)
		r.cancel(err)
		return nil, ts.storeError(err, rec.ID)
	}
	r.registered()
	return x.appendResult(dst, resultTask, false, appendTask(make([]byte, 0, 256), rec, false), nil), nil
}

// resultTask is the resultType of CreateTaskResult.
const resultTask = "task"

// answer answers a call whose handler returned in the sync phase: directly,
// or, for a TaskRequired tool, with a task created finished.
func (r *taskRun) answer(ctx context.Context, x *exchange, req *ToolRequest, dst []byte) ([]byte, error) {
	ts := r.ts
	res, err := r.res, r.err
	if err != nil && isTaskInput(err) {
		// Input before the task started: a multi round-trip round.
		return r.x.appendRoundInput(dst, req)
	}
	if r.t.tool.TaskSupport != TaskRequired {
		if err != nil {
			return nil, err
		}
		return x.appendToolResult(dst, req.Name, res)
	}
	now := ts.now()
	rec := r.record(now, TaskWorking)
	if err := r.outcome(rec, req, res, err, now); err != nil {
		return nil, err
	}
	if err := ts.store.Create(ctx, rec); err != nil {
		return nil, ts.storeError(err, rec.ID)
	}
	return x.appendResult(dst, resultTask, false, appendTask(make([]byte, 0, 256), rec, false), nil), nil
}

// record returns the new record of the run's task.
func (r *taskRun) record(now time.Time, st TaskStatus) *TaskRecord {
	ts := r.ts
	t := &TaskRecord{
		ID: r.id, Owner: principalID(r.x.info.Principal), Tool: r.t.tool.Name, Status: st,
		CreatedAt: now, UpdatedAt: now, PollInterval: ts.pollInterval, Params: r.x.params,
	}
	if ts.ttl > 0 {
		t.TTL = ts.ttl
	}
	if st == TaskWorking {
		t.Runner, t.LeaseUntil = ts.runner, now.Add(ts.lease())
	}
	return t
}

// start begins the task phase at the handler's request (StartTask).
func (r *taskRun) start() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return false
	}
	if !r.detached {
		r.detached = true
		close(r.startCh)
	}
	return true
}

// detach begins the task phase unless the handler already returned in the
// sync phase; it reports whether the run is in the task phase.
func (r *taskRun) detach() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return false
	}
	r.detached = true
	return true
}

// abandon gives up a task phase whose record could not be created: the
// handler's outcome is dropped.
func (r *taskRun) abandon(err error) {
	r.createErr = err
	close(r.created)
}

// registered records that the run's task exists: the server now answers
// cancellation signals for it and renews its lease.
func (r *taskRun) registered() {
	ts := r.ts
	ts.mu.Lock()
	ts.runs[r.id] = r
	if ts.closed {
		// Shutdown began while the call waited: it stops this task too.
		r.cancel(errShutdown)
	}
	ts.mu.Unlock()
	r.mu.Lock()
	r.beat = time.AfterFunc(ts.heartbeat, r.renew)
	r.mu.Unlock()
	close(r.created)
}

// run runs the handler and hands its outcome to the phase it belongs to.
func (r *taskRun) run(req *ToolRequest) {
	defer r.ts.s.quota.release(quotaTasks, r.client)
	defer r.ts.release()
	defer r.cancel(nil)
	res, err := r.invoke(req)
	r.mu.Lock()
	if !r.detached {
		r.finished, r.res, r.err = true, res, err
		r.mu.Unlock()
		close(r.doneCh)
		return
	}
	r.mu.Unlock()
	<-r.created
	if r.createErr != nil {
		return
	}
	r.settle(req, res, err)
}

// invoke calls the handler, turning a panic into an internal error.
func (r *taskRun) invoke(req *ToolRequest) (res *CallToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.ts.s.log.Error("mcp: handler panicked", "method", "tools/call", "tool", req.Name, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
		}
	}()
	if s := r.ts.s; s.icpt != nil {
		return r.invokeIntercepted(req)
	}
	return r.x.invokeTool(r.ctx, r.t, req)
}

// invokeIntercepted is invoke inside the interceptors (PhaseTaskRun).
func (r *taskRun) invokeIntercepted(req *ToolRequest) (res *CallToolResult, err error) {
	x := r.x
	c := &Call{Method: x.method, Name: req.Name, ID: x.id, Info: &x.info, Params: x.params, Phase: PhaseTaskRun, TaskID: r.id, srv: x.s}
	var inner Outcome
	c.serve = func(ctx context.Context, c *Call) Outcome {
		res, err = x.invokeTool(ctx, r.t, req)
		switch {
		case err != nil:
			inner = errorOutcome(err)
			if isInputRequired(err) {
				inner = Outcome{ResultType: resultInputRequired, HTTPStatus: http.StatusOK}
			}
		default:
			inner = Outcome{ResultType: resultComplete, ToolError: res.IsError, HTTPStatus: http.StatusOK}
		}
		return inner
	}
	o, ran := x.s.intercept(r.ctx, c)
	if o.Err != nil && (!ran || o.Err != inner.Err) {
		return nil, o.Err
	}
	if !ran {
		return nil, &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
	}
	return res, err
}

// storeTimeout bounds the store operations of background work.
const storeTimeout = 10 * time.Second

// settle writes the handler's outcome into the task record, unless the
// task ended meanwhile (it was cancelled).
func (r *taskRun) settle(req *ToolRequest, res *CallToolResult, err error) {
	ts := r.ts
	defer ts.unregister(r)
	if errors.Is(context.Cause(r.ctx), errShutdown) {
		res, err = nil, &Error{Code: jsonrpc.CodeInternalError, Message: "Server shut down before the task finished"}
	}
	now := ts.now()
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	changed := false
	_, uerr := ts.store.Update(ctx, r.id, func(t *TaskRecord) (bool, error) {
		changed = false
		if t.Status.Terminal() {
			return false, nil
		}
		if err := r.outcome(t, req, res, err, now); err != nil {
			ts.fail(t, &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error", Err: err}, now)
		}
		changed = true
		return true, nil
	})
	if uerr != nil && !errors.Is(uerr, ErrTaskNotFound) {
		ts.s.log.Error("mcp: storing a task's outcome", "task", r.id, "err", uerr)
	}
	if uerr == nil && changed {
		ts.changed(r.id)
	}
}

// outcome sets t to the outcome of a handler's run: input_required with
// the handler's input requests, failed with a protocol error, or completed
// with the result.
func (r *taskRun) outcome(t *TaskRecord, req *ToolRequest, res *CallToolResult, err error, now time.Time) error {
	ts := r.ts
	switch {
	case err != nil && isTaskInput(err):
		if perr := r.park(t, req); perr != nil {
			return perr
		}
		if err := moveTask(t, TaskInputRequired); err != nil {
			return err
		}
		t.StatusMessage = "Waiting for input from the client"
		t.Runner, t.LeaseUntil = "", time.Time{}
	case err != nil:
		e, ok := asError(err)
		if !ok {
			ts.s.log.Error("mcp: task failed", "task", t.ID, "tool", req.Name, "err", err)
			e = &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
		}
		ts.fail(t, e, now)
		return nil
	default:
		body, meta, eerr := encodeToolResult(nil, res, req.Name)
		if eerr != nil {
			return eerr
		}
		if err := moveTask(t, TaskCompleted); err != nil {
			return err
		}
		t.StatusMessage = ""
		t.Result = ts.s.appendResultObject(nil, modernWire{}, resultComplete, false, body, meta) // tasks are modern only
		t.InputRequests, t.Runner, t.LeaseUntil = nil, "", time.Time{}
	}
	t.UpdatedAt = now
	ts.keep(t, now)
	return nil
}

// unregister ends the run's task phase on this server.
func (ts *taskState) unregister(r *taskRun) {
	ts.mu.Lock()
	if ts.runs[r.id] == r {
		delete(ts.runs, r.id)
	}
	ts.mu.Unlock()
	r.mu.Lock()
	r.settled = true
	if r.beat != nil {
		r.beat.Stop()
	}
	if r.msgTimer != nil {
		r.msgTimer.Stop()
	}
	r.mu.Unlock()
}

// renew is the heartbeat: it renews the runner's lease on the task (and
// the task's TTL), and stops the handler when the task was cancelled or
// is gone (a missed cancellation signal).
func (r *taskRun) renew() {
	ts := r.ts
	now := ts.now()
	ctx, cancel := context.WithTimeout(r.ctx, storeTimeout)
	defer cancel()
	t, err := ts.store.Update(ctx, r.id, func(t *TaskRecord) (bool, error) {
		if t.Status != TaskWorking || t.Runner != ts.runner {
			return false, nil
		}
		t.LeaseUntil = now.Add(ts.lease())
		ts.keep(t, now)
		return true, nil
	})
	switch {
	case errors.Is(err, ErrTaskNotFound):
		r.cancel(errTaskCancelled)
		return
	case err == nil && t.Status.Terminal():
		r.cancel(errTaskCancelled)
		return
	case err != nil && r.ctx.Err() == nil:
		ts.storeFailed("mcp: renewing a task's lease", r.id, err)
	case err == nil:
		ts.storeOK()
	}
	r.mu.Lock()
	if !r.settled {
		r.beat.Reset(ts.heartbeat)
	}
	r.mu.Unlock()
}

// checkCancelled stops the handler when its task was cancelled (the store
// published a change of the task).
func (r *taskRun) checkCancelled() {
	ctx, cancel := context.WithTimeout(r.ctx, storeTimeout)
	defer cancel()
	t, err := r.ts.store.Get(ctx, r.id)
	if errors.Is(err, ErrTaskNotFound) || (err == nil && t.Status.Terminal()) {
		r.cancel(errTaskCancelled)
	}
}

// progress turns a progress report of a task-phase handler into the task's
// status message; it reports false in the sync phase, where progress goes
// to the request's stream.
func (r *taskRun) progress(progress, total float64, message string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.detached {
		return false
	}
	if r.settled {
		return true
	}
	if message == "" {
		message = strconv.FormatFloat(progress, 'g', -1, 64)
		if total > 0 {
			message += "/" + strconv.FormatFloat(total, 'g', -1, 64)
		}
	}
	r.msg = message
	if r.msgTimer == nil {
		wait := max(0, progressGap-time.Since(r.msgLast))
		r.msgTimer = time.AfterFunc(wait, r.flushMessage)
	}
	return true
}

// flushMessage writes the latest progress message into the record.
func (r *taskRun) flushMessage() {
	<-r.created
	r.mu.Lock()
	msg := r.msg
	r.msgTimer, r.msgLast = nil, time.Now()
	done := r.settled || r.createErr != nil
	r.mu.Unlock()
	if done {
		return
	}
	ts := r.ts
	now := ts.now()
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	changed := false
	_, err := ts.store.Update(ctx, r.id, func(t *TaskRecord) (bool, error) {
		changed = t.Status == TaskWorking && t.StatusMessage != msg
		if !changed {
			return false, nil
		}
		t.StatusMessage, t.UpdatedAt = msg, now
		return true, nil
	})
	if err != nil && !errors.Is(err, ErrTaskNotFound) {
		ts.storeFailed("mcp: storing a task's progress", r.id, err)
	} else if err == nil {
		ts.storeOK()
	}
	if err == nil && changed {
		ts.changed(r.id)
	}
}

// deliver stores the answers of a tasks/update to a task in
// input_required and, once every outstanding input request is answered,
// runs the handler again on this server.
func (ts *taskState) deliver(ctx context.Context, x *exchange, t *TaskRecord, resp []byte) error {
	if err := ts.reserve(); err != nil {
		return err
	}
	id := t.ID
	resumed, changed := false, false
	now := ts.now()
	t, err := ts.store.Update(ctx, id, func(t *TaskRecord) (bool, error) {
		resumed, changed = false, false
		if t.Status != TaskInputRequired {
			return false, nil
		}
		for k := range t.InputRequests {
			v, ok := jsonscan.Lookup(resp, k)
			if !ok || jsonscan.Kind(v) != '{' {
				continue // unknown, already answered or malformed: ignored
			}
			if t.Answers == nil {
				t.Answers = make(map[string]json.RawMessage)
			}
			t.Answers[k] = bytes.Clone(v)
			delete(t.InputRequests, k)
			changed = true
		}
		if !changed {
			return false, nil
		}
		if len(t.InputRequests) == 0 {
			if err := moveTask(t, TaskWorking); err != nil {
				return false, err
			}
			t.StatusMessage, t.InputRequests = "", nil
			t.Runner, t.LeaseUntil = ts.runner, now.Add(ts.lease())
			resumed = true
		}
		t.UpdatedAt = now
		ts.keep(t, now)
		return true, nil
	})
	if err == nil && changed {
		ts.changed(id)
	}
	if err != nil || !resumed {
		ts.release()
		if err != nil {
			return ts.storeError(err, id)
		}
		return nil
	}
	ts.resume(ctx, t, x.info.Principal)
	return nil
}

// resume runs the handler of a task again, with the answers its record
// holds; the caller reserved the handler slot.
func (ts *taskState) resume(ctx context.Context, t *TaskRecord, p *Principal) {
	s := ts.s
	sn := s.snapshot()
	te := sn.tools[t.Tool]
	if tp, ok := s.opts.Provider.(TaskProvider); ok {
		te = providedTool(tp, t.Tool, TaskOptional) // the provider answers the tool's calls
	}
	x := &exchange{s: s, snap: sn, method: "tools/call", params: t.Params, info: RequestInfo{ProtocolVersion: LatestVersion}, infoDone: true}
	x.meta, _ = scanMeta(t.Params)
	if v, ok := jsonscan.StringBytes(x.meta.version); ok {
		if sv := s.supports(v); sv != "" {
			x.info.ProtocolVersion = sv
		}
	}
	ierr := x.meta.decodeInfoCached(&x.info, x.info.ProtocolVersion, &x.s.clientInfo)
	x.info.Principal = p
	x.finish() // no request stream: nothing to notify
	if te == nil || te.tool.TaskSupport == TaskNone {
		te = &toolEntry{tool: Tool{Name: t.Tool}}
	}
	r := ts.newRun(ctx, te, x, t.ID)
	r.detached = true
	r.registered()
	req := x.toolRequest(t.Tool)
	if err := r.openRound(req, t); err != nil || ierr != nil || te.handler == nil {
		go func() {
			defer ts.release()
			defer r.cancel(nil)
			e := &Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the task cannot resume"}
			if te.handler == nil {
				e.Message = "Tool " + t.Tool + " is no longer available: the task cannot resume"
			}
			r.settle(req, nil, e)
		}()
		return
	}
	go r.run(req)
}

// storeFailed logs a failed background write to the task store (a lease
// renewal, a progress message) once per outage: while the store is down,
// every running task would otherwise log one each heartbeat.
func (ts *taskState) storeFailed(msg, id string, err error) {
	if ts.storeDown.CompareAndSwap(false, true) {
		ts.s.log.Warn(msg+"; the task store is unavailable, further failures are not logged until it recovers", "task", id, "err", err)
	}
}

// storeOK notes a successful background write, logging the recovery from
// an outage storeFailed logged.
func (ts *taskState) storeOK() {
	if ts.storeDown.Load() && ts.storeDown.CompareAndSwap(true, false) {
		ts.s.log.Info("mcp: the task store is reachable again")
	}
}
