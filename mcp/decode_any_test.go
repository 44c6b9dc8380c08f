package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

func TestDecodeAny(t *testing.T) {
	tests := []struct {
		name, in string
		wantErr  bool
	}{
		{"object", `{"a":{"b":[1,2.5,"x",true,false,null]},"c":{}}`, false},
		{"escapes", `{"\u0061\n":"\ud83d\ude00 \"q\""}`, false},
		{"invalid UTF-8 is replaced", "{\"k\xff\":\"v\xfe\"}", false},
		{"repeated names: the last wins", `{"a":1,"a":2}`, false},
		{"empty array", `{"a":[]}`, false},
		{"number out of range", `{"a":1e400}`, true},
		{"too deep", strings.Repeat(`{"a":`, jsonscan.MaxDepth+1) + `1` + strings.Repeat(`}`, jsonscan.MaxDepth+1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeAny([]byte(tt.in), 0)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("decodeAny(%s) = %v, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeAny(%s): %v", tt.in, err)
			}
			var want any
			if err := json.Unmarshal([]byte(tt.in), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decodeAny(%s) (-encoding/json +got):\n%s", tt.in, diff)
			}
		})
	}
}

// FuzzDecodeAny checks decodeAny against encoding/json on any valid JSON.
func FuzzDecodeAny(f *testing.F) {
	f.Add(`{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}`)
	f.Add(`[1,-2.5e3,"\u00e9",true,null,{"a":[]}]`)
	f.Add("\"\xff\\n\"")
	f.Add(`1e400`)
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		if !jsonscan.Valid(b) {
			return
		}
		got, err := decodeAny(b, 0)
		var want any
		werr := json.Unmarshal(b, &want)
		if (err != nil) != (werr != nil) {
			t.Fatalf("decodeAny(%q) error %v, encoding/json's %v", s, err, werr)
		}
		if err != nil {
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("decodeAny(%q) (-encoding/json +got):\n%s", s, diff)
		}
	})
}

// refCallToolResult decodes a CallToolResult with encoding/json's
// reflection alone (each content item through DecodeContent's struct),
// the reference FuzzCallToolResultDecode compares the fast path with.
func refCallToolResult(b []byte) (*CallToolResult, error) {
	var w struct {
		Content           *[]json.RawMessage `json:"content"`
		StructuredContent json.RawMessage    `json:"structuredContent"`
		IsError           *bool              `json:"isError"`
		Meta              map[string]any     `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, err
	}
	r := &CallToolResult{Meta: w.Meta}
	if w.IsError != nil {
		r.IsError = *w.IsError
	}
	if len(w.StructuredContent) > 0 && string(w.StructuredContent) != "null" {
		r.StructuredContent = w.StructuredContent
	}
	if w.Content != nil {
		r.Content = []Content{}
		for _, raw := range *w.Content {
			c, err := DecodeContent(raw)
			if err != nil {
				return nil, err
			}
			r.Content = append(r.Content, c)
		}
	}
	return r, nil
}

// FuzzCallToolResultDecode checks that CallToolResult's in-place decoder
// agrees with encoding/json: the same result, or an error from both.
func FuzzCallToolResultDecode(f *testing.F) {
	f.Add(`{"resultType":"complete","content":[{"type":"text","text":"hi"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench","version":"0.0.0"}}}`)
	f.Add(`{"content":[{"type":"text","text":"a\u00e9\n","annotations":{"priority":1}},{"type":"image","data":"AA==","mimeType":"image/png"}],"isError":true}`)
	f.Add(`{"content":[{"type":"resource","resource":{"uri":"u","blob":"AA=="}}],"structuredContent":{"a":[1]}}`)
	f.Add(`{"content":null,"structuredContent":null,"isError":null,"_meta":null}`)
	f.Add("{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}")
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		if !jsonscan.Valid(b) || jsonscan.Kind(b) != '{' {
			return
		}
		// encoding/json matches member names case-insensitively; MCP's
		// are exact, and so is the decoder.
		it, _ := jsonscan.Object(b)
		var m jsonscan.Member
		for it.Next(&m) {
			for _, name := range [...]string{"content", "structuredContent", "isError", "_meta"} {
				if strings.EqualFold(string(m.Key), name) && string(m.Key) != name || m.Escaped {
					return
				}
			}
		}
		var got CallToolResult
		err := got.UnmarshalJSON(b)
		want, werr := refCallToolResult(b)
		if (err != nil) != (werr != nil) {
			t.Fatalf("UnmarshalJSON(%q) error %v, encoding/json's %v", s, err, werr)
		}
		if err != nil {
			return
		}
		norm := func(r *CallToolResult) *CallToolResult {
			if raw, ok := r.StructuredContent.(json.RawMessage); ok {
				r.StructuredContent = string(raw)
			}
			return r
		}
		if diff := cmp.Diff(norm(want), norm(&got)); diff != "" {
			t.Fatalf("UnmarshalJSON(%q) (-encoding/json +got):\n%s", s, diff)
		}
	})
}
