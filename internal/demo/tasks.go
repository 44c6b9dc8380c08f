package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/mcp"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The fixtures of the tasks extension (io.modelcontextprotocol/tasks) that
// the conformance suite's tasks-* scenarios call.

// GreetIn is the input of greet.
type GreetIn struct {
	Name string `json:"name" jsonschema:"whom to greet"`
}

// SlowComputeIn is the input of slow_compute.
type SlowComputeIn struct {
	Seconds float64 `json:"seconds" jsonschema:"how long the computation takes, in seconds"`
	Label   string  `json:"label,omitempty" jsonschema:"a label echoed in the result"`
}

// AddTaskTools registers the tasks fixtures on s: greet (never a task),
// slow_compute (a task when the client supports tasks), failing_job and
// protocol_error_job (always tasks), and the fixtures that ask for input
// (see addTaskInputTools).
func AddTaskTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone by name, at once (never a task)."},
		func(ctx context.Context, req *mcp.ToolRequest, in GreetIn) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "slow_compute",
		Description: "Computes for the given number of seconds, reporting progress every second; a task when the client supports tasks.",
		TaskSupport: mcp.TaskOptional,
	}, func(ctx context.Context, req *mcp.ToolRequest, in SlowComputeIn) (string, error) {
		if in.Seconds < 0 || in.Seconds > 3600 {
			return "", fmt.Errorf("seconds must be between 0 and 3600, not %g", in.Seconds)
		}
		d := time.Duration(in.Seconds * float64(time.Second))
		if err := work(ctx, d, func(done time.Duration) {
			req.Progress(done.Seconds(), in.Seconds, fmt.Sprintf("computed for %.0f of %g seconds", done.Seconds(), in.Seconds))
		}); err != nil {
			return "", err
		}
		label := in.Label
		if label == "" {
			label = "slow_compute"
		}
		return fmt.Sprintf("Computed %s in %g seconds.", label, in.Seconds), nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "failing_job",
		Description: "Works for a second, then fails with a tool error; always a task.",
		TaskSupport: mcp.TaskRequired,
	}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		if err := work(ctx, time.Second, nil); err != nil {
			return "", err
		}
		return "", errorString("failing_job failed, as it always does")
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "protocol_error_job",
		Description: "Fails with a JSON-RPC internal error instead of a result; always a task.",
		TaskSupport: mcp.TaskRequired,
	}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return "", &mcp.Error{Code: jsonrpc.CodeInternalError, Message: "protocol_error_job failed at the protocol level, as it always does"}
	})
	addTaskInputTools(s)
}

// work waits for d or until ctx ends, calling tick (when not nil) after
// every whole second.
func work(ctx context.Context, d time.Duration, tick func(done time.Duration)) error {
	start := time.Now()
	t := time.NewTimer(min(d, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		done := time.Since(start)
		if done >= d {
			return nil
		}
		if tick != nil {
			tick(done.Truncate(time.Second))
		}
		t.Reset(min(d-done, time.Second))
	}
}
