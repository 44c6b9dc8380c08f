package client_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestTaskProgress: once a call becomes a task, each change of the task's statusMessage reaches
// WithProgress as Progress{Message}, and WithTaskStatus sees the states, through CallTool and
// through Task.Wait. It runs in a synctest bubble: the handler's pauses and the polls are on the
// fake clock.
func TestTaskProgress(t *testing.T) {
	t.Run("CallTool", func(t *testing.T) { synctest.Test(t, func(t *testing.T) { testTaskProgress(t, false) }) })
	t.Run("Wait", func(t *testing.T) { synctest.Test(t, func(t *testing.T) { testTaskProgress(t, true) }) })
}

func testTaskProgress(t *testing.T, wait bool) {
	{
		s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "progress"}, State: stateKeys})
		mcp.AddTool(s, &mcp.Tool{Name: "steps", Description: "Three steps.", TaskSupport: mcp.TaskOptional}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.StartTask()
			for i, step := range []string{"fetching", "fetching", "parsing", "writing"} {
				req.Progress(float64(i+1), 4, step)
				time.Sleep(2 * time.Second) // several polls see each message
			}
			return "done", nil
		})
		defer s.Shutdown(context.Background())
		ctx := context.Background()
		c, err := client.Connect(ctx, &client.MemoryTransport{Server: s}, &client.Options{Tasks: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		want := []client.Progress{{Message: "fetching"}, {Message: "parsing"}, {Message: "writing"}}

		if !wait {
			var got []client.Progress
			var statuses []mcp.TaskStatus
			res, err := c.CallTool(ctx, "steps", nil,
				client.WithProgress(func(p client.Progress) { got = append(got, p) }),
				client.WithTaskStatus(func(st client.TaskState) { statuses = append(statuses, st.Status) }))
			if got := textOf(t, res, err); got != "done" {
				t.Errorf("CallTool = %q", got)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("progress while CallTool polled (-want +got):\n%s", diff)
			}
			if len(statuses) < 2 || statuses[0] != mcp.TaskWorking || statuses[len(statuses)-1] != mcp.TaskCompleted {
				t.Errorf("WithTaskStatus saw %q, want working first and completed last", statuses)
			}
			return
		}
		{
			_, task, err := c.StartTool(ctx, "steps", nil)
			if err != nil || task == nil {
				t.Fatalf("StartTool = %v, %v; want a task", task, err)
			}
			var got []client.Progress
			res, err := c.Task(task.ID).Wait(ctx, client.WithProgress(func(p client.Progress) { got = append(got, p) }))
			if got := textOf(t, res, err); got != "done" {
				t.Errorf("Wait = %q", got)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("progress while Wait polled (-want +got):\n%s", diff)
			}
		}
	}
}
