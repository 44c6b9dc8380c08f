package mcp

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestClientWireRoundTrip checks that what the server encodes, the client
// side decodes back.
func TestClientWireRoundTrip(t *testing.T) {
	size := int64(3)
	contents := []Content{
		&TextContent{Text: "hi", Meta: Meta{"k": "v"}},
		&ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"},
		&AudioContent{Data: []byte{3}, MIMEType: "audio/wav"},
		&ResourceLink{URI: "u", Name: "n", Size: &size},
		&EmbeddedResource{Resource: &ResourceContents{URI: "u", Blob: []byte{9}}},
		&EmbeddedResource{Resource: &ResourceContents{URI: "u", Text: "t"}},
	}
	for _, c := range contents {
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeContent(raw)
		if err != nil {
			t.Fatalf("DecodeContent(%s): %v", raw, err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("round trip of %s (-want +got):\n%s", raw, diff)
		}
	}
	prio := 0.5
	tool := &CallToolResult{
		Content:           append([]Content{&TextContent{Text: "plain \"quoted\" ✓"}, &TextContent{Text: "annotated", Annotations: &Annotations{Priority: &prio}}}, contents...),
		StructuredContent: json.RawMessage(`{"a":1}`),
		IsError:           true,
	}
	raw, err := json.Marshal(tool)
	if err != nil {
		t.Fatal(err)
	}
	var gotTool CallToolResult
	if err := json.Unmarshal(raw, &gotTool); err != nil {
		t.Fatalf("CallToolResult %s: %v", raw, err)
	}
	if diff := cmp.Diff(tool, &gotTool); diff != "" {
		t.Errorf("CallToolResult round trip of %s (-want +got):\n%s", raw, diff)
	}
	res := &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: []Content{&TextContent{Text: "x"}}}
	raw, _ = json.Marshal(res)
	back, err := decodeSamplingResult(raw)
	if err != nil || back.Text() != "x" || back.Model != "m" {
		t.Errorf("sampling result %s decoded to %+v, %v", raw, back, err)
	}
	er := &ElicitResult{Action: ElicitAccept, Content: map[string]any{"a": "b"}}
	raw, _ = json.Marshal(er)
	if string(raw) != `{"action":"accept","content":{"a":"b"}}` {
		t.Errorf("ElicitResult encodes as %s", raw)
	}
}

// FuzzClientWire checks that the client-side decoders take any input
// without a panic.
func FuzzClientWire(f *testing.F) {
	f.Add(`{"type":"text","text":"x"}`)
	f.Add(`{"content":[{"type":"resource","resource":{"uri":"u","blob":"AA=="}}],"structuredContent":{}}`)
	f.Add(`{"messages":[{"role":"user","content":{"type":"image","data":"AA==","mimeType":"i"}}]}`)
	f.Add(`{"contents":[{"uri":"u","text":"t"}],"ttlMs":99999999999999}`)
	f.Add(`{"mode":"url","url":"https://x","message":"m"}`)
	f.Add(`{"name":"t","inputSchema":{"type":"object"},"outputSchema":true}`)
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		DecodeContent(b)
		var r1 CallToolResult
		json.Unmarshal(b, &r1)
		var r2 GetPromptResult
		json.Unmarshal(b, &r2)
		var r3 ReadResourceResult
		if json.Unmarshal(b, &r3) == nil && r3.CacheTTL < 0 {
			t.Fatalf("negative CacheTTL from %s", s)
		}
		var r4 CompleteResult
		json.Unmarshal(b, &r4)
		var r5 ElicitParams
		json.Unmarshal(b, &r5)
		var r6 CreateMessageParams
		json.Unmarshal(b, &r6)
		var r7 Tool
		json.Unmarshal(b, &r7)
	})
}
