package demo_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/demo"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// TestDemoApp: the demo's App passes every rule, its view is the embedded
// document that calls shout, and shout_app answers in text too.
func TestDemoApp(t *testing.T) {
	s := demo.NewPlain(nil)
	if fs := apps.Validate(s); len(fs) > 0 {
		t.Fatalf("Validate = %v", fs)
	}
	c := mcptest.NewClient(t, s, mcptest.ClientOptions(func(o *client.Options) {
		o.Extensions = map[string]json.RawMessage{apps.ExtensionID: apps.ClientExtension()}
	}))
	d, err := c.Discover()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Capabilities.Extensions[apps.ExtensionID]; !ok {
		t.Errorf("server/discover does not advertise %s: %v", apps.ExtensionID, d.Capabilities.Extensions)
	}
	tools, err := c.ListTools()
	if err != nil {
		t.Fatal(err)
	}
	var uri string
	for _, tl := range tools {
		if u, _, ok := apps.ToolView(&tl); ok {
			if tl.Name != "shout_app" || uri != "" {
				t.Errorf("tool %s links %s", tl.Name, u)
			}
			uri = u
		}
	}
	if !strings.HasPrefix(uri, strings.TrimSuffix(demo.ShoutViewURI, ".html")+"-") {
		t.Fatalf("shout_app's view = %q", uri)
	}
	res, err := c.Client().ReadResource(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	html := res.Contents[0].Text
	for _, want := range []string{`"ui/initialize"`, `"ui/notifications/initialized"`, `"tools/call"`, `name: "shout"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the view does not contain %s", want)
		}
	}
	out, err := c.Client().CallTool(context.Background(), "shout_app", map[string]any{"text": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Content[0].(*mcp.TextContent).Text; !strings.Contains(got, "HI") {
		t.Errorf("shout_app = %q", got)
	}
}
