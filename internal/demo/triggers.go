package demo

import (
	"context"
	"sync"

	"github.com/mcpkit/mcpkit/mcp"
)

// The items the trigger fixtures add and remove.
const (
	TransientTool   = "test_transient_tool"
	TransientPrompt = "test_transient_prompt"
	// WatchedResource is the resource test_trigger_resource_update
	// reports as updated by default.
	WatchedResource = "test://watched-resource"
)

// AddTriggers registers the fixtures that change the server while it
// runs, so that subscriptions/listen streams get notifications:
// test_trigger_tool_change and test_trigger_prompt_change (used by the
// conformance suite) and test_trigger_resource_update. Each change is made
// on this server only; with several replicas sharing a distributed Bus the
// notification still reaches the listeners of every replica.
func AddTriggers(s *mcp.Server) {
	var tool, prompt toggle
	mcp.AddTool(s, &mcp.Tool{Name: "test_trigger_tool_change", Description: "Adds the tool " + TransientTool + ", or removes it if it is there, so that listeners that asked for toolsListChanged get notifications/tools/list_changed."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			added := tool.flip(func() {
				mcp.AddTool(s, &mcp.Tool{Name: TransientTool, Description: "A tool that test_trigger_tool_change adds and removes; it answers with a fixed text."},
					func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
						return "The transient tool is here.", nil
					})
			}, func() { s.RemoveTools(TransientTool) })
			if added {
				return "Added the tool " + TransientTool + ".", nil
			}
			return "Removed the tool " + TransientTool + ".", nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_trigger_prompt_change", Description: "Adds the prompt " + TransientPrompt + ", or removes it if it is there, so that listeners that asked for promptsListChanged get notifications/prompts/list_changed."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			added := prompt.flip(func() {
				s.AddPrompt(&mcp.Prompt{Name: TransientPrompt, Description: "A prompt that test_trigger_prompt_change adds and removes."},
					func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
						return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
							{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "The transient prompt is here."}},
						}}, nil
					})
			}, func() { s.RemovePrompts(TransientPrompt) })
			if added {
				return "Added the prompt " + TransientPrompt + ".", nil
			}
			return "Removed the prompt " + TransientPrompt + ".", nil
		})
	type updateIn struct {
		URI string `json:"uri,omitempty" jsonschema:"the URI of the updated resource (default test://watched-resource)"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "test_trigger_resource_update", Description: "Reports a resource as updated, so that listeners that listed its URI in resourceSubscriptions get notifications/resources/updated."},
		func(ctx context.Context, req *mcp.ToolRequest, in updateIn) (string, error) {
			if in.URI == "" {
				in.URI = WatchedResource
			}
			s.NotifyResourceUpdated(in.URI)
			return "Reported " + in.URI + " as updated.", nil
		})
}

// toggle is the state of one transient item on one server.
type toggle struct {
	mu sync.Mutex
	on bool
}

// flip calls add when the item is absent and remove when it is present,
// and reports whether it added it.
func (t *toggle) flip(add, remove func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.on {
		remove()
	} else {
		add()
	}
	t.on = !t.on
	return t.on
}
