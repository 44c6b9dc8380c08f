package mcp

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// The input path of tasks: how a handler's input requests (Elicit, Sample,
// ListRoots: see mrtr.go) become a task's inputRequests, and how the
// answers that tasks/update delivers reach the handler when it runs again.
//
// A handler asks for input the same way whether or not its call is a task.
// In the sync phase the call is answered input_required, as any multi
// round-trip request is (input before the task starts). In the task phase
// the task parks in input_required: the input requests, the answers the
// run used and the handler's saved state go into the record, and the
// handler's goroutine ends. Once tasks/update answered every outstanding
// request, the handler runs again from the start (on the server that got
// the update) with every answer so far, exactly as a multi round-trip
// request is retried.

// openRound prepares req to ask for input: from the request's own
// inputResponses and requestState when t is nil (the sync phase), or from
// the answers and state stored in the task t (a run after tasks/update).
func (r *taskRun) openRound(req *ToolRequest, t *TaskRecord) error {
	x := r.x
	if t == nil {
		return x.openRound(&req.rd, &x.info)
	}
	rd := &req.rd
	rd.x, rd.caps = x, &x.info.ClientCapabilities
	if len(t.Answers) > 0 {
		rd.responses = mustMarshal(t.Answers)
	}
	rd.user = t.State
	return nil
}

// isTaskInput reports whether a handler's error asks the client for input
// (and is not also a protocol error, which wins).
func isTaskInput(err error) bool {
	if _, ok := asError(err); ok {
		return false
	}
	return isInputRequired(err)
}

// errNoInputRequests fails a task whose handler returned InputRequired
// without asking anything: a task has no requestState to retry with.
var errNoInputRequests = errors.New("mcp: the handler of a task answered input required without an input request")

// park records in t the input requests of the handler's run, the answers
// it used (and those of earlier runs it did not reach), and its saved
// state, for the run after tasks/update.
//
// A request whose earlier answer did not fit (Elicit asks again) is asked
// under its key again, and the unfit answer is dropped.
func (r *taskRun) park(t *TaskRecord, req *ToolRequest) error {
	rd := &req.rd
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if len(rd.pending) == 0 {
		return errNoInputRequests
	}
	answers := make(map[string]json.RawMessage, len(t.Answers)+len(rd.used))
	for _, a := range rd.carry() {
		answers[a.key] = bytes.Clone(a.value)
	}
	// Answers delivered for keys this run did not reach stay for later runs.
	for k, v := range t.Answers {
		if _, ok := answers[k]; !ok {
			answers[k] = v
		}
	}
	reqs := make(map[string]json.RawMessage, len(rd.pending))
	for _, p := range rd.pending {
		delete(answers, p.key)
		b := []byte(`{"method":`)
		b = wire.AppendString(b, inputMethodName(p.method))
		b = append(b, `,"params":`...)
		b = append(b, p.params...)
		reqs[p.key] = append(b, '}')
	}
	t.InputRequests = reqs
	t.Answers = answers
	if len(answers) == 0 {
		t.Answers = nil
	}
	t.State = bytes.Clone(rd.user)
	return nil
}

// appendRoundInput appends the input_required result of a sync-phase run
// that asked for input.
func (x *exchange) appendRoundInput(dst []byte, req *ToolRequest) ([]byte, error) {
	return x.appendInputRequired(dst, &req.rd)
}
