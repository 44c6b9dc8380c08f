package demo

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// Forms of the task input fixtures. The multi_input form accepts both
// fields on either question, as the conformance suite answers them.
var (
	deleteForm = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Delete the file?"}},"required":["confirm"]}`)
	multiForm  = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Name"},"confirm":{"type":"boolean","title":"Confirm"}}}`)
)

// FilenameIn is the input of confirm_delete.
type FilenameIn struct {
	Filename string `json:"filename" jsonschema:"the file to delete"`
}

// addTaskInputTools registers the tasks fixtures that ask the client for
// input: confirm_delete and multi_input ask once their task has started
// (the task waits in input_required), test_tool_with_task asks before its
// task starts (an input_required round of the tools/call itself).
func addTaskInputTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{
		Name:        "confirm_delete",
		Description: "Deletes a (pretend) file after the user confirms; a task that waits for the confirmation.",
		TaskSupport: mcp.TaskOptional,
	}, func(ctx context.Context, req *mcp.ToolRequest, in FilenameIn) (string, error) {
		req.StartTask()
		r, err := req.Elicit("confirm", &mcp.ElicitParams{Message: "Delete " + in.Filename + "?", RequestedSchema: deleteForm})
		if err != nil {
			return "", err
		}
		var v struct {
			Confirm bool `json:"confirm"`
		}
		if r.Accepted() {
			if err := r.Decode(&v); err != nil {
				return "", err
			}
		}
		if !v.Confirm {
			return "Kept " + in.Filename + ".", nil
		}
		return "Deleted " + in.Filename + ".", nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "multi_input",
		Description: "Asks two questions at once and answers when both are answered, in any order; a task that waits for them.",
		TaskSupport: mcp.TaskOptional,
	}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		req.StartTask()
		first, err1 := req.Elicit("first", &mcp.ElicitParams{Message: "First question: your name?", RequestedSchema: multiForm})
		second, err2 := req.Elicit("second", &mcp.ElicitParams{Message: "Second question: your name again?", RequestedSchema: multiForm})
		if err := errors.Join(err1, err2); err != nil {
			return "", err
		}
		return "Both answered: " + formName(first) + " and " + formName(second) + ".", nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "test_tool_with_task",
		Description: "Asks for your name before its task starts, then greets you from the task.",
		TaskSupport: mcp.TaskRequired,
	}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		name, err := askName(req, "user_name", "What is your name?")
		if err != nil {
			return "", err
		}
		req.StartTask()
		if err := work(ctx, 200*time.Millisecond, nil); err != nil {
			return "", err
		}
		return "Hello, " + name + "! (greeted from a task)", nil
	})
}

// formName returns the name field of an accepted multi_input answer.
func formName(r *mcp.ElicitResult) string {
	var v struct {
		Name string `json:"name"`
	}
	if r.Accepted() && r.Decode(&v) == nil && v.Name != "" {
		return v.Name
	}
	return "(no name)"
}
