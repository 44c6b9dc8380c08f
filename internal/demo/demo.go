// Package demo builds the demo server behind `mcpkit serve`: the fixtures
// the MCP conformance suite expects, plus a few tools a person would enjoy
// trying from an MCP client.
package demo

import (
	"context"
	"encoding/base64"
	"maps"
	"strings"

	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/mcp"
)

// Name and Version identify the demo server.
const (
	Name    = "mcpkit-demo"
	Version = "0.1.0"
)

// redPNG is a 1x1 red PNG.
var redPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")

// EchoIn is the input of the echo tool.
type EchoIn struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

// New returns the demo server. opts may be nil.
func New(opts *mcp.ServerOptions) *mcp.Server {
	o := mcp.ServerOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Info.Name == "" {
		o.Info.Name, o.Info.Version = Name, Version
	}
	if o.Instructions == "" {
		o.Instructions = "A demo of mcpkit. Try echo, dice_roll, evaluate or countdown, read demo://about, or use the test_* fixtures of the MCP conformance suite."
	}
	// The demo advertises MCP Apps (its shout_app tool has a view).
	ext := maps.Clone(o.Extensions)
	if ext == nil {
		ext = map[string]any{}
	}
	if _, ok := ext[apps.ExtensionID]; !ok {
		ext[apps.ExtensionID] = apps.Extension()
	}
	o.Extensions = ext
	s := mcp.NewServer(&o)
	AddTools(s)
	AddFixtureTools(s)
	AddFixtureResources(s)
	AddFixturePrompts(s)
	AddTriggers(s)
	AddFun(s)
	AddApps(s)
	addWhoami(s)
	AddLegacyFixtures(s)
	AddTaskTools(s)
	AddSkills(s)
	return s
}

// AddTools registers the demo tools on s.
func AddTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the given text back as one text content item."},
		func(ctx context.Context, req *mcp.ToolRequest, in EchoIn) (string, error) {
			return in.Text, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "shout", Description: "Returns the given text in upper case."},
		func(ctx context.Context, req *mcp.ToolRequest, in EchoIn) (string, error) {
			return strings.ToUpper(in.Text), nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_simple_text", Description: "Returns a simple text response."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return "This is a simple text response for testing.", nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_image_content", Description: "Returns an image (a 1x1 red PNG)."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: redPNG, MIMEType: "image/png"}}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_error_handling", Description: "Always fails, to show how tool errors look."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return "", errorString("This tool intentionally returns an error for testing")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_missing_capability", Description: "Needs the client's sampling capability; fails with -32021 without it."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			if req.Info.ClientCapabilities.Sampling == nil {
				return "", mcp.MissingCapability(mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}})
			}
			return "The client declared sampling.", nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_streaming_elicitation", Description: "Answers quickly without sending any request to the client."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.Progress(1, 1, "done")
			return "No elicitation needed.", nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_logging_tool", Description: "Logs at info level, only when the request asked for logs."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.Log(mcp.LevelInfo, "demo", "test_logging_tool ran")
			return "Logged (if the request asked for logs).", nil
		})
	addInputTools(s)
}

type errorString string

func (e errorString) Error() string { return string(e) }
