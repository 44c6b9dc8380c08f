package bridge

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/mcp"
)

// This file makes bridged tool calls tasks of the front (Options.Tasks).
// The backend knows nothing of them: a call that becomes a task is the
// same backend call, run in the background by the front's task machinery
// (mcp.TaskProvider). Its progress becomes the task's status message;
// tasks/cancel cancels its context, and so the backend call (the client
// sends notifications/cancelled); a backend request for input during the
// task parks it in input_required with the request in inputRequests, and
// the held backend call goes on once tasks/update answered it, exactly as
// after a retry (Provide runs again with the answers and the saved
// heldState, and takes the held call).

// TaskTool is the task support of one bridged tool (Options.TaskTools).
type TaskTool struct {
	// Support is TaskNone, TaskOptional or TaskRequired, with the
	// meanings they have for mcp.Tool.TaskSupport.
	Support mcp.TaskSupport
	// InputStartsTask makes a backend request for input, arriving before
	// the call became a task (within the front's TaskOptions.SyncWait),
	// start the task: the caller gets the task handle, and the task waits
	// in input_required for tasks/update, as a handler that calls
	// StartTask before it asks does. Without it, such a request is an
	// input_required round of the tools/call itself, before any task.
	InputStartsTask bool
}

// taskToolSuffix marks InputStartsTask in the text form of a TaskTool.
const taskToolSuffix = ",input-starts-task"

// MarshalText encodes t as "MODE" or "MODE,input-starts-task", MODE
// being none, optional or required.
func (t TaskTool) MarshalText() ([]byte, error) {
	b, err := t.Support.MarshalText()
	if err != nil {
		return nil, err
	}
	if t.InputStartsTask {
		b = append(b, taskToolSuffix...)
	}
	return b, nil
}

// UnmarshalText reads the form MarshalText writes, as `mcpkit bridge
// --task-tool NAME=MODE[,input-starts-task]` and the gateway's
// task_tools take it.
func (t *TaskTool) UnmarshalText(text []byte) error {
	mode, starts := strings.CutSuffix(string(text), taskToolSuffix)
	var s mcp.TaskSupport
	if err := s.UnmarshalText([]byte(mode)); err != nil {
		return fmt.Errorf("%w (optionally followed by %s)", err, taskToolSuffix)
	}
	*t = TaskTool{Support: s, InputStartsTask: starts}
	return nil
}

// taskBridge is the front's provider when tasks are on: the Bridge, plus
// the task support of each tool.
type taskBridge struct{ *Bridge }

// ToolTaskSupport implements mcp.TaskProvider.
func (t taskBridge) ToolTaskSupport(name string) mcp.TaskSupport {
	if s, ok := t.opts.TaskTools[name]; ok {
		return s.Support
	}
	return t.opts.Tasks
}

// CancelTask lets go of the backend call held for the front task id (a
// task waiting for input, no run of it going on): it is cancelled at once
// (the backend gets notifications/cancelled), rather than after
// HoldTimeout. An id the bridge holds nothing for is ignored. It
// implements mcp.TaskCanceller for the bridge's own front; a gateway
// whose front runs the tasks calls it on each of its bridges. It is safe
// for concurrent use.
func (b *Bridge) CancelTask(id string) {
	if h := b.held.takeTask(id); h != nil {
		b.abandon(h)
	}
}

// beforeInput is called before a backend request for input is put to the
// caller of req: for a tool whose input starts its task, it starts the
// task (in a call that may not become one, or already is one, it does
// nothing).
func (b *Bridge) beforeInput(req *mcp.MethodRequest) {
	if req.Method != "tools/call" || len(b.opts.TaskTools) == 0 {
		return
	}
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return
	}
	if t, ok := b.opts.TaskTools[p.Name]; ok && t.InputStartsTask {
		req.StartTask()
	}
}
