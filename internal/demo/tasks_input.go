package demo

import "github.com/mcpkit/mcpkit/mcp"

// addTaskInputTools registers the tasks fixtures that ask the client for
// input: confirm_delete, multi_input and test_tool_with_task.
func addTaskInputTools(s *mcp.Server) {}
