package gateway

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/mcp"
)

// This file runs backends' tool calls as tasks of the gateway's front
// (Backend.Tasks, TaskTools). The front's task machinery runs a call that
// becomes a task in the background through Gateway.Provide, so the
// routing, the policy and the backend's bridge are those of any call: the
// bridge starts the task when a tool's input starts it, and holds the
// backend call of a task waiting for input until tasks/update answers it
// (Provide runs again, routes the same name to the same backend, and the
// bridge takes the held call). The backends know nothing of the tasks.

// hasTasks reports whether the backend has task support.
func (b *Backend) hasTasks() bool { return b.Tasks != mcp.TaskNone || len(b.TaskTools) > 0 }

// checkTasks refuses task support values out of range.
func (b *Backend) checkTasks() error {
	if b.Tasks > mcp.TaskRequired {
		return fmt.Errorf("gateway: backend %q: Tasks: invalid TaskSupport %d", b.Name, b.Tasks)
	}
	for name, t := range b.TaskTools {
		if t.Support > mcp.TaskRequired {
			return fmt.Errorf("gateway: backend %q: TaskTools[%q]: invalid TaskSupport %d", b.Name, name, t.Support)
		}
	}
	return nil
}

// taskSupport is the task support of the backend's tool name (its own
// name).
func (b *backend) taskSupport(name string) mcp.TaskSupport {
	if t, ok := b.taskTools[name]; ok {
		return t.Support
	}
	return b.tasks
}

// routeTool returns the backend that serves the tool of the public name
// and the backend's name of it, when a tools/call of it would be routed
// there: the name is one the gateway lists, the policy lets the tool
// through, and the backend runs and has tools.
func (g *router) routeTool(name string) (*backend, string, bool) {
	b, inner, ok := g.route(name)
	if !ok || len(name) > MaxNameLen || !nameChars.MatchString(name) || !b.toolAllowed(inner) || b.bridge() == nil || !b.has("tools/call") {
		return nil, "", false
	}
	return b, inner, true
}

// taskGateway is the front's provider when a backend has task support:
// the Gateway, plus the task support of each tool (mcp.TaskProvider), the
// scope check before a call may become a task (mcp.TaskAdmitter), and the
// cancellation of a task waiting for input (mcp.TaskCanceller).
type taskGateway struct{ *Gateway }

// ToolTaskSupport implements mcp.TaskProvider: the task support the
// backend's configuration gives the tool of the public name; TaskNone for
// a name no call would be routed with (unknown, denied, over the name
// limits, of a backend that is down), whose call then gets its usual
// error.
func (t taskGateway) ToolTaskSupport(name string) mcp.TaskSupport {
	b, inner, ok := t.cur.Load().routeTool(name)
	if !ok {
		return mcp.TaskNone
	}
	return b.taskSupport(inner)
}

// AdmitTask implements mcp.TaskAdmitter: a caller without the scopes the
// tool needs gets 403 insufficient_scope before any task is made, as a
// call that does not become a task does. The rate limit is applied by
// each run of the call (Backend.RateLimit).
func (t taskGateway) AdmitTask(ctx context.Context, info *mcp.RequestInfo, name string) error {
	r := t.cur.Load()
	b, inner, ok := r.routeTool(name)
	if !ok {
		return nil // the call gets its usual error
	}
	mcp.Annotate(ctx, BackendAttribute, b.name)
	return r.checkScopes(&mcp.MethodRequest{Info: info, Method: "tools/call"}, b, inner)
}

// CancelTask implements mcp.TaskCanceller: a task cancelled while it
// waited for input lets go of the backend call its bridge holds for it
// (bridge.Bridge.CancelTask); the bridges that hold nothing for it ignore
// it.
func (t taskGateway) CancelTask(id string) {
	for _, b := range t.cur.Load().backends {
		if br := b.bridge(); br != nil {
			br.CancelTask(id)
		}
	}
}
