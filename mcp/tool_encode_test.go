package mcp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAppendCallToolResult checks the direct encoder against
// encoding/json's encoding of the same result: the same JSON value, on one
// line.
func TestAppendCallToolResult(t *testing.T) {
	prio := 1.0
	tests := []struct {
		name string
		r    *CallToolResult
	}{
		{"empty", &CallToolResult{}},
		{"text", &CallToolResult{Content: []Content{&TextContent{Text: "hello"}}}},
		{"escapes", &CallToolResult{Content: []Content{&TextContent{Text: "<a href=\"x\">&</a>\n\t\u2028 é \x00"}}}},
		{"invalid utf-8", &CallToolResult{Content: []Content{&TextContent{Text: "bad \xff byte"}}}},
		{"annotated text", &CallToolResult{Content: []Content{&TextContent{Text: "x", Annotations: &Annotations{Priority: &prio}, Meta: Meta{"m": 1}}}}},
		{"mixed", &CallToolResult{Content: []Content{
			&TextContent{Text: "a"}, &ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"},
			&AudioContent{Data: []byte{3}, MIMEType: "audio/wav"}, &ResourceLink{URI: "a://b", Name: "b"},
			&EmbeddedResource{Resource: &ResourceContents{URI: "a://c", Blob: []byte("c")}},
		}}},
		{"structured raw", &CallToolResult{StructuredContent: json.RawMessage(`{"a":1}`), Content: []Content{&TextContent{Text: `{"a":1}`}}}},
		{"structured raw with spaces", &CallToolResult{StructuredContent: json.RawMessage("{\n  \"a\": [1, 2]\n}")}},
		{"structured map", &CallToolResult{StructuredContent: map[string]any{"b": []int{1}}}},
		{"error", &CallToolResult{Content: []Content{&TextContent{Text: "failed"}}, IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendCallToolResult(nil, tt.r)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.ContainsAny(got, "\n\r") {
				t.Errorf("encoding spans lines: %s", got)
			}
			content := tt.r.Content
			if content == nil {
				content = []Content{}
			}
			want, err := json.Marshal(struct {
				Content           []Content `json:"content"`
				StructuredContent any       `json:"structuredContent,omitempty"`
				IsError           bool      `json:"isError,omitempty"`
			}{content, tt.r.StructuredContent, tt.r.IsError})
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			mustUnmarshal(t, got, &g)
			mustUnmarshal(t, want, &w)
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("(-encoding/json +direct):\n%s", diff)
			}
		})
	}
}

func TestAppendCallToolResultRejectsBadRaw(t *testing.T) {
	if _, err := appendCallToolResult(nil, &CallToolResult{StructuredContent: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("malformed raw structuredContent encoded without error")
	}
}

// TestToolsCallAllocs pins the allocations of a validated echo call over
// in-process HTTP (see BenchmarkToolsCall).
func TestToolsCallAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts need a quiet run")
	}
	p := newInProcessHTTP(t, echoServer(), "tools/call", "echo", echoCallBody)
	n := testing.AllocsPerRun(200, p.do)
	if p.w.status != 200 || !bytes.Contains(p.w.body, []byte(`"content":[{"type":"text","text":"hello"}]`)) {
		t.Fatalf("status %d: %s", p.w.status, p.w.body)
	}
	if n > 20 {
		t.Errorf("tools/call allocates %v times per request, want at most 20 (the issue's ceiling is 30)", n)
	}
}
