package demo

import (
	"context"
	"embed"
	"strings"

	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/mcp"
)

// appView holds the demo's MCP Apps view: hand-written HTML that speaks
// JSON-RPC over postMessage with the host, no SDK.
//
//go:embed appview/shout.html
var appView embed.FS

// ShoutAppIn is the input of shout_app.
type ShoutAppIn struct {
	Text string `json:"text,omitempty" jsonschema:"text to shout right away (optional)"`
}

// ShoutViewURI is the URI of the demo's view, without its content hash.
const ShoutViewURI = "ui://mcpkit-demo/shout.html"

// AddApps registers the demo's one App: the view, and shout_app, the tool
// that opens it. The view's button calls shout through the host. It
// returns the URI the view is served at (with its content hash).
func AddApps(s *mcp.Server) string {
	uri := apps.AddView(s, &apps.View{
		URI: ShoutViewURI, Name: "shout_view", Title: "Shout",
		Description: "A text box and a button that calls the shout tool through the host.",
		FS:          appView, Path: "appview/shout.html", HashURI: true,
		PrefersBorder: new(true),
	})
	apps.AddTool(s, &mcp.Tool{Name: "shout_app", Description: "Opens a small interactive view (MCP Apps) whose button shouts text through the shout tool; hosts without MCP Apps get this text instead."},
		apps.ToolUI{View: uri},
		func(ctx context.Context, req *mcp.ToolRequest, in ShoutAppIn) (string, error) {
			if in.Text == "" {
				return "The shout view is open: type some text and press Shout.", nil
			}
			return "The shout view is open. Shouted: " + strings.ToUpper(in.Text), nil
		})
	return uri
}
