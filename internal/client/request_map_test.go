package client

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodeJSON decodes b for a comparison by value (member order and
// insignificant whitespace aside).
func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	if b == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return v
}

type implWithTitle struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// TestRequestFromMapMatches checks that the map fast path sends the same
// params and headers as the general path, for the shapes the public
// client sends and a few it does not.
func TestRequestFromMapMatches(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)
	tests := []struct {
		method string
		params map[string]any
	}{
		{"tools/call", map[string]any{"name": "echo", "arguments": json.RawMessage(`{"text": "hi <b>&"}`), "_meta": map[string]any{
			MetaProtocolVersion: "2026-07-28", MetaClientCapabilities: json.RawMessage(`{"elicitation":{"form":{}}}`),
			MetaClientInfo: implWithTitle{Name: "x", Title: "X", Version: "1"}, "progressToken": "p1",
		}}},
		{"tools/call", map[string]any{"name": "where", "arguments": json.RawMessage(`{"region":"Zürich"}`)}},
		{"tools/call", map[string]any{"name": "héllo wörld"}},
		{"prompts/get", map[string]any{"name": "greet", "arguments": map[string]string{"who": "Ada"}}},
		{"resources/read", map[string]any{"uri": json.RawMessage(`"test://a b"`)}},
		{"tasks/get", map[string]any{"taskId": "t-1", "_meta": map[string]any{"com.example/x": 1.5, "flag": true, "nothing": nil}}},
		{"tools/list", map[string]any{"cursor": "c2", "a": []int{1, 2}, "z": map[string]any{"k": "v"}}},
		{"server/discover", map[string]any{}},
		{"tools/call", map[string]any{"name": "", "Zeta": "upper case sorts before _meta", "aa": "after"}},
	}
	for _, era := range []Era{EraModern, EraLegacy} {
		s := &Session{era: era, version: "2026-07-28", clientInfo: Implementation{Name: "c", Version: "2"}, caps: json.RawMessage(`{"roots":{}}`)}
		s.RememberTools([]json.RawMessage{json.RawMessage(`{"name":"where","inputSchema":` + string(schema) + `}`)})
		for _, tt := range tests {
			fast, ok, ferr := s.requestFromMap(tt.method, tt.params)
			if !ok {
				t.Errorf("%s %s %v: the fast path declined", era, tt.method, tt.params)
				continue
			}
			slow, serr := s.requestGeneral(tt.method, tt.params)
			if (ferr == nil) != (serr == nil) {
				t.Fatalf("%s %s: errors %v and %v", era, tt.method, ferr, serr)
			}
			if ferr != nil {
				continue
			}
			if diff := cmp.Diff(decodeJSON(t, slow.Params), decodeJSON(t, fast.Params)); diff != "" {
				t.Errorf("%s %s params (-general +fast):\n%s\n%s", era, tt.method, diff, fast.Params)
			}
			if diff := cmp.Diff(slow.Header, fast.Header, cmp.Transformer("nilIsEmpty", func(h http.Header) http.Header {
				if len(h) == 0 {
					return nil
				}
				return h
			})); diff != "" {
				t.Errorf("%s %s headers (-general +fast):\n%s", era, tt.method, diff)
			}
		}
	}
}

// TestRequestFromMapRefuses checks the errors and the shapes left to the
// general path.
func TestRequestFromMapRefuses(t *testing.T) {
	s := &Session{era: EraModern, version: "2026-07-28"}
	if _, ok, err := s.requestFromMap("tools/call", map[string]any{"name": "x", "arguments": json.RawMessage(`{"a":`)}); !ok || err == nil {
		t.Errorf("invalid RawMessage arguments: ok %v, err %v; want an error", ok, err)
	}
	if _, ok, _ := s.requestFromMap("x", map[string]any{"_meta": json.RawMessage(`{}`)}); ok {
		t.Errorf("_meta as RawMessage: the fast path took it")
	}
	big := map[string]any{}
	for i := range maxFastKeys + 1 {
		big[string(rune('a'+i))] = i
	}
	if _, ok, _ := s.requestFromMap("x", big); ok {
		t.Errorf("%d members: the fast path took them", len(big))
	}
}

// FuzzRequestFromMap feeds arbitrary argument JSON through both paths.
func FuzzRequestFromMap(f *testing.F) {
	for _, s := range []string{`{"text":"hi"}`, `{"a": [1, {"b": "\" \\"}]}`, `"str"`, `{`, ``, `{"x":"\u2028<>"}`} {
		f.Add("echo", s)
	}
	f.Fuzz(func(t *testing.T, name, args string) {
		s := &Session{era: EraModern, version: "2026-07-28", clientInfo: Implementation{Name: "c", Version: "2"}}
		m := map[string]any{"name": name, "arguments": json.RawMessage(args)}
		fast, ok, ferr := s.requestFromMap("tools/call", m)
		slow, serr := s.requestGeneral("tools/call", m)
		if !ok || (ferr == nil) != (serr == nil) {
			t.Fatalf("ok %v, errors %v and %v", ok, ferr, serr)
		}
		if ferr == nil && !cmp.Equal(decodeJSON(t, slow.Params), decodeJSON(t, fast.Params)) {
			t.Errorf("params differ:\n%s\n%s", slow.Params, fast.Params)
		}
	})
}

// TestRequestFromMapStdioNoHeaders checks that a stdio session builds no
// HTTP headers (they would go nowhere) but the same params.
func TestRequestFromMapStdioNoHeaders(t *testing.T) {
	r, w := io.Pipe()
	defer r.Close()
	conn := NewStreamConn(r, w)
	defer conn.Close()
	s := &Session{conn: conn, era: EraModern, version: "2026-07-28"}
	s.RememberTools([]json.RawMessage{json.RawMessage(`{"name":"where","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}`)})
	req, ok, err := s.requestFromMap("tools/call", map[string]any{"name": "where", "arguments": json.RawMessage(`{"region":"x"}`)})
	if !ok || err != nil || req.Header != nil {
		t.Fatalf("ok %v, err %v, header %v; want no headers", ok, err, req.Header)
	}
	slow, _ := s.requestGeneral("tools/call", map[string]any{"name": "where", "arguments": json.RawMessage(`{"region":"x"}`)})
	if !cmp.Equal(decodeJSON(t, slow.Params), decodeJSON(t, req.Params)) {
		t.Errorf("params %s, want %s", req.Params, slow.Params)
	}
}
