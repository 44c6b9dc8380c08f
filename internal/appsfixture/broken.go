// Package appsfixture holds a server that breaks the MCP Apps rules one
// by one, for the tests of package apps and of `mcpkit apps check`. It is
// built with mcp's plain API, as a server that does not use package apps
// would be.
package appsfixture

import (
	"context"

	"github.com/mcpkit/mcpkit/mcp"
)

// Broken returns a server on which each rule of apps.Rules fails at least
// once, each by a differently named object, and BrokenRules lists the rule
// ids Check reports for it (tool-content only when "empty" is called).
func Broken() *mcp.Server {
	s := mcp.NewServer(&mcp.ServerOptions{})
	read := func(c *mcp.ResourceContents) mcp.ResourceHandler {
		return func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
			cc := *c
			cc.URI = req.URI
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{&cc}}, nil
		}
	}
	const good = "<!doctype html><html><body>ok</body></html>"
	// view-scheme: an App document outside ui://.
	s.AddResource(&mcp.Resource{URI: "https://example.com/view.html", Name: "scheme", MIMEType: "text/html;profile=mcp-app"}, read(&mcp.ResourceContents{MIMEType: "text/html;profile=mcp-app", Text: good}))
	// view-mime and view-list-mime: plain text/html.
	s.AddResource(&mcp.Resource{URI: "ui://broken/mime.html", Name: "mime", MIMEType: "text/html"}, read(&mcp.ResourceContents{MIMEType: "text/html", Text: good}))
	// view-html: not a document.
	s.AddResource(&mcp.Resource{URI: "ui://broken/fragment.html", Name: "fragment", MIMEType: "text/html;profile=mcp-app"}, read(&mcp.ResourceContents{MIMEType: "text/html;profile=mcp-app", Text: "<div>just a fragment</div>"}))
	// view-content: empty text.
	s.AddResource(&mcp.Resource{URI: "ui://broken/empty.html", Name: "empty", MIMEType: "text/html;profile=mcp-app"}, read(&mcp.ResourceContents{MIMEType: "text/html;profile=mcp-app", Text: ""}))
	// meta-shape and csp-origin on a view.
	s.AddResource(&mcp.Resource{URI: "ui://broken/meta.html", Name: "meta", MIMEType: "text/html;profile=mcp-app",
		Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{"http://api.example.com", "https://example.com/path", "*"}, "resourceDomains": "https://cdn.example.com"}, "prefersBorder": "yes"}}},
		read(&mcp.ResourceContents{MIMEType: "text/html;profile=mcp-app", Text: good}))
	// A good view for the tools to link.
	s.AddResource(&mcp.Resource{URI: "ui://broken/good.html", Name: "good", MIMEType: "text/html;profile=mcp-app"}, read(&mcp.ResourceContents{MIMEType: "text/html;profile=mcp-app", Text: good}))

	tool := func(name string, meta mcp.Meta, text string) {
		s.AddRawTool(&mcp.Tool{Name: name, Description: name, InputSchema: `{"type":"object"}`, Meta: meta}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			res := &mcp.CallToolResult{}
			if text != "" {
				res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
			}
			return res, nil
		})
	}
	link := func(uri string) mcp.Meta {
		return mcp.Meta{"ui": map[string]any{"resourceUri": uri}, "ui/resourceUri": uri}
	}
	// view-exists: a link to a view the server does not have.
	tool("missing", link("ui://broken/missing.html"), "ok")
	// tool-meta-keys: only the nested key.
	tool("nested_only", mcp.Meta{"ui": map[string]any{"resourceUri": "ui://broken/good.html"}}, "ok")
	// tool-visibility: a duplicate and an unknown value.
	tool("visibility", mcp.Meta{"ui": map[string]any{"resourceUri": "ui://broken/good.html", "visibility": []any{"app", "app", "user"}}, "ui/resourceUri": "ui://broken/good.html"}, "ok")
	// view-scheme on a link.
	tool("https_link", link("https://example.com/view.html"), "ok")
	// tool-content: an empty result (checked only when called).
	tool("empty", link("ui://broken/good.html"), "")
	return s
}

// BrokenRules are the rule ids Check reports for Broken when "empty" is
// called, sorted.
var BrokenRules = []string{"csp-origin", "meta-shape", "tool-content", "tool-meta-keys", "tool-visibility", "view-content", "view-exists", "view-html", "view-list-mime", "view-mime", "view-scheme"}

// Plain returns a server with one tool and no MCP Apps.
func Plain() *mcp.Server {
	s := mcp.NewServer(&mcp.ServerOptions{})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo"}, func(ctx context.Context, req *mcp.ToolRequest, in struct{ Text string }) (string, error) {
		return in.Text, nil
	})
	return s
}
