package demo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// The fixtures of the MCP conformance suite (FIXTURES.md §3), with the
// names, arguments and outputs it checks.

// wavSample is the reference audio fixture: a tiny WAV file.
var wavSample, _ = base64.StdEncoding.DecodeString("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")

// jsonSchema2020 is the input schema of json_schema_2020_12_tool, served
// verbatim: the suite checks that every keyword survives.
const jsonSchema2020 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": {
        "street": {"type": "string"},
        "city": {"type": "string"}
      }
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
}`

// xMCPHeaderSchema is the input schema of test_x_mcp_header: region travels
// in the Mcp-Param-Region header too.
const xMCPHeaderSchema = `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"level":{"type":"integer"}}}`

// AddFixtureTools registers the conformance fixture tools that AddTools
// does not: content types, progress, logging, JSON Schema 2020-12 and
// x-mcp-header.
func AddFixtureTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "test_audio_content", Description: "Returns a short WAV audio clip."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: wavSample, MIMEType: "audio/wav"}}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_embedded_resource", Description: "Returns a text resource embedded in the result."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content.",
			}}}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_multiple_content_types", Description: "Returns text, an image and an embedded resource in one result."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "Multiple content types test:"},
				&mcp.ImageContent{Data: redPNG, MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
					URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`,
				}},
			}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_tool_with_progress", Description: "Reports progress 0, 50 and 100 of 100, 50 ms apart, when the request carries a progress token."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					if err := sleep(ctx, 50*time.Millisecond); err != nil {
						return "", err
					}
				}
				req.Progress(p, 100, fmt.Sprintf("Step %d of 3", i+1))
			}
			return "Progress complete.", nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_tool_with_logging", Description: "Logs three info messages, 50 ms apart, when the request asks for logs."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					if err := sleep(ctx, 50*time.Millisecond); err != nil {
						return "", err
					}
				}
				req.Log(mcp.LevelInfo, "test_tool_with_logging", msg)
			}
			return "Logging complete.", nil
		})
	s.AddRawTool(&mcp.Tool{
		Name:        "json_schema_2020_12_tool",
		Description: "Takes arguments described by a JSON Schema 2020-12 schema with $defs, $anchor, allOf/anyOf and if/then/else, and echoes them.",
		InputSchema: json.RawMessage(jsonSchema2020),
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "JSON Schema 2020-12 tool called with: " + string(req.Arguments)}}}, nil
	})
	s.AddRawTool(&mcp.Tool{
		Name:        "test_x_mcp_header",
		Description: "Echoes its region argument, which also travels in the Mcp-Param-Region HTTP header.",
		InputSchema: json.RawMessage(xMCPHeaderSchema),
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Region string `json:"region"`
		}
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "region=" + in.Region}}}, nil
	})
}

// AddFixtureResources registers the conformance fixture resources and the
// resource template.
func AddFixtureResources(s *mcp.Server) {
	text := func(t string) mcp.ResourceHandler {
		return func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: t}}}, nil
		}
	}
	s.AddResource(&mcp.Resource{
		URI: "test://static-text", Name: "static-text", Title: "Static text",
		Description: "A static text resource.", MIMEType: "text/plain",
	}, text("This is the content of the static text resource."))
	s.AddResource(&mcp.Resource{
		URI: "test://static-binary", Name: "static-binary", Title: "Static binary",
		Description: "A static binary resource: a 1x1 red PNG.", MIMEType: "image/png",
	}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Blob: redPNG}}}, nil
	})
	s.AddResource(&mcp.Resource{
		URI: "test://watched-resource", Name: "watched-resource", Title: "Watched resource",
		Description: "A resource clients may watch for updates.", MIMEType: "text/plain",
	}, text("Watched resource content"))
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: "test://template/{id}/data", Name: "template-data", Title: "Data by ID",
		Description: "JSON data for any ID.", MIMEType: "application/json",
		Complete: mcp.CompleteFrom(map[string][]string{"id": {"123", "456", "789"}}),
	}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		id := req.Params["id"]
		b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: string(b)}}}, nil
	})
}

// AddFixturePrompts registers the conformance fixture prompts.
func AddFixturePrompts(s *mcp.Server) {
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments."},
		func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
				{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "This is a simple prompt for testing."}},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{
		Name:        "test_prompt_with_arguments",
		Description: "A prompt with two required arguments.",
		Arguments: []mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
		Complete: mcp.CompleteFrom(map[string][]string{
			"arg1": {"testValue1", "test-alpha", "test-beta"},
			"arg2": {"testValue2", "test-gamma"},
		}),
	}, func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{
			Role:    mcp.RoleUser,
			Content: &mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"])},
		}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{
		Name:        "test_prompt_with_embedded_resource",
		Description: "A prompt that embeds the resource named by its argument.",
		Arguments:   []mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
	}, func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
			{Role: mcp.RoleUser, Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: req.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing.",
			}}},
			{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Please process the embedded resource above."}},
		}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image."},
		func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
				{Role: mcp.RoleUser, Content: &mcp.ImageContent{Data: redPNG, MIMEType: "image/png"}},
				{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Please analyze the image above."}},
			}}, nil
		})
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
