package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// samplingToolsServer has a tool that samples with a weather tool offered
// to the model, and reports the tool use it got back.
func samplingToolsServer() *Server {
	s, _ := mrtrServer(&ServerOptions{})
	AddTool(s, &Tool{Name: "plan", Description: "Samples with tools."},
		func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
			r, err := req.Sample("s", &CreateMessageParams{
				Messages: []SamplingMessage{
					{Role: RoleUser, Content: []Content{&TextContent{Text: "Weather in Paris?"}}},
					{Role: RoleAssistant, Content: []Content{&ToolUseContent{ID: "u0", Name: "weather", Input: json.RawMessage(`{"city":"Lyon"}`)}}},
					{Role: RoleUser, Content: []Content{&ToolResultContent{ToolUseID: "u0", Content: []Content{&TextContent{Text: "sunny"}}}}},
				},
				MaxTokens:  100,
				Tools:      []*Tool{{Name: "weather", Description: "Gets the weather.", InputSchema: map[string]any{"type": "object"}}},
				ToolChoice: &ToolChoice{Mode: "auto"},
			})
			if err != nil {
				return "", err
			}
			var uses []string
			for _, c := range r.Content {
				if u, ok := c.(*ToolUseContent); ok {
					uses = append(uses, fmt.Sprintf("%s %s %s", u.ID, u.Name, u.Input))
				}
			}
			return r.StopReason + ": " + strings.Join(uses, "; "), nil
		})
	return s
}

// TestSampleWithTools checks the sampling request that offers tools (its
// tools, toolChoice and tool content on the wire), the capability it needs,
// and a result with a tool use.
func TestSampleWithTools(t *testing.T) {
	s := samplingToolsServer()
	withTools := `{"sampling":{"tools":{}}}`

	r1 := mrtrSend(t, s, "tools/call", mrtrReq{tool: "plan", caps: withTools}.params())
	reqs, _ := r1.result["inputRequests"].(map[string]any)
	sreq, _ := reqs["s"].(map[string]any)
	got, _ := json.Marshal(sreq["params"])
	want := `{"maxTokens":100,"messages":[` +
		`{"content":{"text":"Weather in Paris?","type":"text"},"role":"user"},` +
		`{"content":{"id":"u0","input":{"city":"Lyon"},"name":"weather","type":"tool_use"},"role":"assistant"},` +
		`{"content":{"content":[{"text":"sunny","type":"text"}],"toolUseId":"u0","type":"tool_result"},"role":"user"}],` +
		`"toolChoice":{"mode":"auto"},"tools":[{"description":"Gets the weather.","inputSchema":{"type":"object"},"name":"weather"}]}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Fatalf("sampling params (-want +got):\n%s", diff)
	}

	answer := `{"s":{"role":"assistant","model":"m","stopReason":"toolUse","content":[{"type":"tool_use","id":"u1","name":"weather","input":{"city":"Paris"}}]}}`
	r2 := mrtrSend(t, s, "tools/call", mrtrReq{tool: "plan", caps: withTools, responses: answer, state: r1.state()}.params())
	if r2.err != nil {
		t.Fatalf("retry: error %d %s", r2.err.Code, r2.err.Message)
	}
	content, _ := json.Marshal(r2.result["content"])
	if wantText := `toolUse: u1 weather {\"city\":\"Paris\"}`; !strings.Contains(string(content), wantText) {
		t.Errorf("result content %s, want it to contain %s", content, wantText)
	}

	// Without sampling.tools, offering tools is refused with -32021.
	r3 := mrtrSend(t, s, "tools/call", mrtrReq{tool: "plan", caps: `{"sampling":{}}`}.params())
	if r3.err == nil || r3.err.Code != CodeMissingCapability || !strings.Contains(string(r3.err.Data), `"tools":{}`) {
		t.Errorf("without sampling.tools: %+v, want -32021 naming sampling.tools", r3.err)
	}
}

// TestSamplingToolContentDecoding checks the tool content of a sampling
// result, valid and not.
func TestSamplingToolContentDecoding(t *testing.T) {
	tests := []struct {
		name, content, wantErr string
	}{
		{"tool use", `{"type":"tool_use","id":"u","name":"n","input":{}}`, ""},
		{"tool result", `{"type":"tool_result","toolUseId":"u","content":[{"type":"text","text":"x"}],"isError":true}`, ""},
		{"tool use without id", `{"type":"tool_use","name":"n","input":{}}`, "needs an id"},
		{"tool use input not an object", `{"type":"tool_use","id":"u","name":"n","input":[]}`, "input object"},
		{"tool result without id", `{"type":"tool_result","content":[]}`, "without toolUseId"},
		{"nested tool use", `{"type":"tool_result","toolUseId":"u","content":[{"type":"tool_use","id":"u","name":"n","input":{}}]}`, "holds a tool_use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeSamplingResult([]byte(`{"role":"assistant","model":"m","content":` + tt.content + `}`))
			if tt.wantErr == "" && err != nil {
				t.Fatalf("error %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestServerInfoDescription checks the serverInfo members that describe
// the server, in discover and in the legacy initialize result.
func TestServerInfoDescription(t *testing.T) {
	s := NewServer(&ServerOptions{Info: Implementation{Name: "w", Version: "1", Description: "Forecasts.", WebsiteURL: "https://example.com", Icons: []Icon{{Src: "https://example.com/i.png", MIMEType: "image/png"}}}})
	want := `{"name":"w","version":"1","description":"Forecasts.","icons":[{"src":"https://example.com/i.png","mimeType":"image/png"}],"websiteUrl":"https://example.com"}`
	if got := string(s.identity.Load().meta); !strings.HasSuffix(got, want) {
		t.Errorf("serverInfo %s, want it to end with %s", got, want)
	}
	b, _ := json.Marshal(s.implementation())
	if string(b) != want {
		t.Errorf("initialize serverInfo %s, want %s", b, want)
	}
}
