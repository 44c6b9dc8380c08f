package apps

import (
	"fmt"
	"maps"
	"strings"

	"github.com/mcpkit/mcpkit/mcp"
)

// ToolUI links a tool to a view.
type ToolUI struct {
	// View is the URI AddView returned.
	View string
	// Visibility says who may see and call the tool: a non-empty list of
	// Model and App without duplicates; nil means both (the
	// specification's default, which is then not written).
	Visibility []Visibility
}

// LinkTool returns a copy of t whose _meta links it to ui's view: ui as
// _meta.ui (resourceUri and visibility) and the deprecated flat
// _meta["ui/resourceUri"], which hosts still read. t's other _meta members
// are kept. Use it with Server.AddRawTool; AddTool calls it. It panics,
// naming the tool and the rule, when the view was not added to s with
// AddView, or the visibility is empty, has a duplicate or a value other
// than Model and App.
func LinkTool(s *mcp.Server, t *mcp.Tool, ui ToolUI) *mcp.Tool {
	what := fmt.Sprintf("apps.AddTool %q", t.Name)
	fail := func(rule Rule, detail string) {
		panic(fmt.Sprintf("%s: %s (%s: %s)", what, detail, rule.ID, rule.Summary))
	}
	if !strings.HasPrefix(ui.View, Scheme) {
		fail(RuleScheme, fmt.Sprintf("view %q does not start with ui://", ui.View))
	}
	r := viewsOf(s)
	r.mu.Lock()
	ok := r.views[ui.View]
	r.mu.Unlock()
	if !ok {
		fail(RuleExists, fmt.Sprintf("view %q was not added to this server with apps.AddView (add views before the tools that link them)", ui.View))
	}
	if ui.Visibility != nil {
		if err := checkVisibility(ui.Visibility); err != "" {
			fail(RuleVisibility, err)
		}
	}
	tt := *t
	tt.Meta = maps.Clone(t.Meta)
	if tt.Meta == nil {
		tt.Meta = mcp.Meta{}
	}
	m := map[string]any{"resourceUri": ui.View}
	if ui.Visibility != nil {
		m["visibility"] = ui.Visibility
	}
	tt.Meta["ui"] = m
	tt.Meta[FlatResourceURIKey] = ui.View
	return &tt
}

// checkVisibility returns what is wrong with vis, or "".
func checkVisibility(vis []Visibility) string {
	if len(vis) == 0 {
		return "visibility is empty"
	}
	seen := map[Visibility]bool{}
	for _, v := range vis {
		if v != Model && v != App {
			return fmt.Sprintf("visibility %q is neither model nor app", v)
		}
		if seen[v] {
			return fmt.Sprintf("visibility %q appears twice", v)
		}
		seen[v] = true
	}
	return ""
}

// AddTool registers a tool linked to a view (see LinkTool, which checks
// the link) with mcp.AddTool. Its handler must still return meaningful
// content: hosts without MCP Apps show only that, and the model reads it.
func AddTool[In, Out any](s *mcp.Server, t *mcp.Tool, ui ToolUI, h mcp.ToolHandler[In, Out]) {
	mcp.AddTool(s, LinkTool(s, t, ui), h)
}
