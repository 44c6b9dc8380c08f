package mcp

import "errors"

// The input path of tasks: how a handler's input requests (multi
// round-trip requests, see Elicit) become a task's inputRequests, and how
// the answers that tasks/update delivers reach the handler when it runs
// again. It plugs into the MRTR machinery of mrtr.go.

// openRound prepares req to ask for input: from the request's own
// inputResponses and requestState when t is nil (the sync phase), or from
// the answers and state stored in the task t (a run after tasks/update).
func (r *taskRun) openRound(req *ToolRequest, t *TaskRecord) error { return nil }

// isTaskInput reports whether a handler's error asks the client for input.
func isTaskInput(err error) bool { return false }

// park records in t the input requests of the handler's run, the answers
// it used and its saved state, for the run after tasks/update.
func (r *taskRun) park(t *TaskRecord, req *ToolRequest) error {
	return errors.New("mcp: input requests are not supported yet")
}

// appendRoundInput appends the input_required result of a sync-phase run
// that asked for input.
func (x *exchange) appendRoundInput(dst []byte, req *ToolRequest) ([]byte, error) {
	return nil, errors.New("mcp: input requests are not supported yet")
}
