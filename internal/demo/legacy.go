package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// Forms of the legacy elicitation fixtures, as the conformance suite
// checks them (FIXTURES.md section 7).
var (
	userInfoForm = json.RawMessage(`{"type":"object","properties":{` +
		`"username":{"type":"string","description":"User's response"},` +
		`"email":{"type":"string","description":"User's email address"}},` +
		`"required":["username","email"]}`)
	defaultsForm = json.RawMessage(`{"type":"object","properties":{` +
		`"name":{"type":"string","description":"User name","default":"John Doe"},` +
		`"age":{"type":"integer","description":"User age","default":30},` +
		`"score":{"type":"number","description":"User score","default":95.5},` +
		`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},` +
		`"verified":{"type":"boolean","description":"Verification status","default":true}}}`)
	enumsForm = json.RawMessage(`{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","title":"Untitled single select","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","title":"Titled single select","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","title":"Legacy titled enum","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","title":"Untitled multi select","items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","title":"Titled multi select","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`)
)

// AddLegacyFixtures registers the fixtures of the legacy (2025-11-25)
// conformance scenarios. They are written once against the input API: a
// legacy client gets real elicitation and sampling requests, a modern one
// an input_required result.
func AddLegacyFixtures(s *mcp.Server) {
	type promptIn struct {
		Prompt string `json:"prompt" jsonschema:"the prompt to send to the client's model"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "test_sampling", Description: "Asks the client's model to answer the prompt (sampling/createMessage, maxTokens 100)."},
		func(ctx context.Context, req *mcp.ToolRequest, in promptIn) (string, error) {
			r, err := req.Sample("llm", &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{userText(in.Prompt)}, MaxTokens: 100})
			if err != nil {
				return "", err
			}
			return "LLM response: " + r.Text(), nil
		})

	type messageIn struct {
		Message string `json:"message" jsonschema:"the message to show the user"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "test_elicitation", Description: "Asks the user for a username and an email address (elicitation/create)."},
		func(ctx context.Context, req *mcp.ToolRequest, in messageIn) (string, error) {
			return elicitReport(req, "user_info", in.Message, userInfoForm, "User response")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_elicitation_sep1034_defaults", Description: "Elicits a form whose fields have default values (SEP-1034)."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return elicitReport(req, "defaults", "Please review and update the form fields with defaults", defaultsForm, "Elicitation completed")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_elicitation_sep1330_enums", Description: "Elicits a form with every kind of enum field (SEP-1330)."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return elicitReport(req, "enums", "Please choose from the options", enumsForm, "Elicitation completed")
		})

	mcp.AddTool(s, &mcp.Tool{Name: "test_reconnection", Description: "Closes the SSE stream of a 2025-11-25 client mid-call, so that the client polls for the result with Last-Event-ID."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			req.Legacy().CloseSSEStream()
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return "", err
			}
			return "Reconnection test completed successfully", nil
		})
}

// elicitReport elicits form under key and reports what the user did.
func elicitReport(req *mcp.ToolRequest, key, message string, form json.RawMessage, label string) (string, error) {
	r, err := req.Elicit(key, &mcp.ElicitParams{Message: message, RequestedSchema: form})
	if err != nil {
		return "", err
	}
	content, _ := json.Marshal(r.Content)
	return fmt.Sprintf("%s: action=%s, content=%s", label, r.Action, content), nil
}
