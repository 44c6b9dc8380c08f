package interop

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// connectPeer connects the public client to a started peer.
func connectPeer(t *testing.T, ctx context.Context, p peer, tg target, opts *client.Options) *client.Client {
	t.Helper()
	var tr client.Transport
	if tg.url != "" {
		tr = &client.HTTPTransport{URL: tg.url}
	} else {
		tr = &client.CommandTransport{Command: tg.command[0], Args: tg.command[1:], Env: tg.env}
	}
	if opts == nil {
		opts = &client.Options{}
	}
	opts.ClientInfo = mcp.Implementation{Name: "interop", Version: "1"}
	opts.Version = p.version
	c, err := client.Connect(ctx, tr, opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestClientPeers runs the public client against every peer: the era and
// version it settles on, every list followed through its pages, a tool
// call, an unknown tool, a resource and a prompt.
func TestClientPeers(t *testing.T) {
	for _, p := range peers() {
		t.Run(p.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := connectPeer(t, ctx, p, p.start(t), nil)
			if c.Era().String() != p.era || c.ProtocolVersion() != p.protocol {
				t.Errorf("era %s at %s, want %s at %s", c.Era(), c.ProtocolVersion(), p.era, p.protocol)
			}
			if si := c.ServerInfo(); si == nil || si.Name != p.serverName {
				t.Errorf("ServerInfo = %+v, want name %s", si, p.serverName)
			}
			if c.Capabilities().Tools == nil {
				t.Errorf("no tools capability")
			}
			var names []string
			for tool, err := range c.ListTools(ctx) {
				if err != nil {
					t.Fatalf("ListTools: %v", err)
				}
				names = append(names, tool.Name)
			}
			if len(names) < p.tools || !contains(names, p.echoTool) {
				t.Errorf("ListTools = %v, want at least %d with %s", names, p.tools, p.echoTool)
			}
			res, err := c.CallTool(ctx, p.echoTool, jsonArgs(p.echoArgs))
			if err != nil {
				t.Fatalf("CallTool %s: %v", p.echoTool, err)
			}
			if got := textOf(res.Content); got != p.echoText {
				t.Errorf("CallTool %s = %q, want %q", p.echoTool, got, p.echoText)
			}
			_, err = c.CallTool(ctx, "no_such_tool", map[string]any{})
			var me *mcp.Error
			var te *client.ToolError
			if !errors.As(err, &me) && !errors.As(err, &te) {
				t.Errorf("CallTool no_such_tool: %v, want an *mcp.Error or a *client.ToolError", err)
			}
			rr, err := c.ReadResource(ctx, p.resourceURI)
			if err != nil || len(rr.Contents) == 0 || !strings.Contains(rr.Contents[0].Text, p.resourceText) || rr.Contents[0].Text == "" {
				t.Errorf("ReadResource %s = %+v, %v; want text with %q", p.resourceURI, rr, err, p.resourceText)
			}
			gp, err := c.GetPrompt(ctx, p.promptName, nil)
			if err != nil || len(gp.Messages) == 0 || !strings.Contains(textOf([]mcp.Content{gp.Messages[0].Content}), p.promptText) {
				t.Errorf("GetPrompt %s = %+v, %v; want %q", p.promptName, gp, err, p.promptText)
			}
			var nres, nprompts int
			for _, err := range c.ListResources(ctx) {
				if err != nil {
					t.Fatalf("ListResources: %v", err)
				}
				nres++
			}
			for _, err := range c.ListPrompts(ctx) {
				if err != nil {
					t.Fatalf("ListPrompts: %v", err)
				}
				nprompts++
			}
			if nres == 0 || nprompts == 0 {
				t.Errorf("%d resources, %d prompts; want some of each", nres, nprompts)
			}
		})
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// jsonArgs returns a tool's arguments given as JSON text.
func jsonArgs(s string) json.RawMessage { return json.RawMessage(s) }

// textOf joins the text of text content items.
func textOf(content []mcp.Content) string {
	var parts []string
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}
