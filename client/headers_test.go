package client_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/client"
)

// fakeServer answers server/discover, tools/list with the given tools,
// and tools/call, recording the headers of each tools/call.
type fakeServer struct {
	tools string
	mu    sync.Mutex
	calls []http.Header
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(body, &req)
	w.Header().Set("Content-Type", "application/json")
	result := `{}`
	switch req.Method {
	case "server/discover":
		result = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`
	case "tools/list":
		result = `{"tools":` + f.tools + `}`
	case "tools/call":
		f.mu.Lock()
		f.calls = append(f.calls, r.Header.Clone())
		f.mu.Unlock()
		result = `{"content":[{"type":"text","text":"ok"}]}`
	}
	w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`))
}

func TestParamHeaders(t *testing.T) {
	f := &fakeServer{tools: `[
		{"name":"good","inputSchema":{"type":"object","properties":{
			"region":{"type":"string","x-mcp-header":"Region"},
			"n":{"type":"integer","x-mcp-header":"N"},
			"flag":{"type":"boolean","x-mcp-header":"Flag"},
			"text":{"type":"string","x-mcp-header":"Text"},
			"plain":{"type":"string"}}}},
		{"name":"empty","inputSchema":{"type":"object","properties":{"v":{"type":"string","x-mcp-header":""}}}},
		{"name":"number","inputSchema":{"type":"object","properties":{"v":{"type":"number","x-mcp-header":"V"}}}},
		{"name":"object","inputSchema":{"type":"object","properties":{"v":{"type":"object","x-mcp-header":"V"}}}},
		{"name":"dup","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}},
		{"name":"space","inputSchema":{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"A B"}}}},
		{"name":"items","inputSchema":{"type":"object","properties":{"v":{"type":"array","items":{"type":"string","x-mcp-header":"V"}}}}}
	]`}
	hs := httptest.NewServer(f)
	defer hs.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var names []string
	for tool, err := range c.ListTools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if diff := cmp.Diff([]string{"good"}, names); diff != "" {
		t.Errorf("listed tools (-want +got):\n%s", diff)
	}
	if _, err := c.CallTool(ctx, "good", map[string]any{"region": "eu-west", "n": 42, "flag": true, "text": " café ", "plain": "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "good", map[string]any{"region": nil}); err != nil {
		t.Fatal(err)
	}
	// Call with a params struct gets the same headers.
	type callParams struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	if _, err := c.Call(ctx, "tools/call", callParams{Name: "good", Arguments: map[string]any{"region": "eu-west"}}); err != nil {
		t.Fatal(err)
	}
	if got := f.calls[2].Get("Mcp-Name"); got != "good" {
		t.Errorf("Call: Mcp-Name = %q, want good", got)
	}
	if got := f.calls[2].Get("Mcp-Param-Region"); got != "eu-west" {
		t.Errorf("Call: Mcp-Param-Region = %q, want eu-west", got)
	}
	h := f.calls[0]
	want := map[string]string{
		"Mcp-Param-Region":     "eu-west",
		"Mcp-Param-N":          "42",
		"Mcp-Param-Flag":       "true",
		"Mcp-Param-Text":       "=?base64?IGNhZsOpIA==?=",
		"Mcp-Method":           "tools/call",
		"Mcp-Name":             "good",
		"Mcp-Protocol-Version": "2026-07-28",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if h.Get("Mcp-Param-Plain") != "" {
		t.Errorf("an unannotated argument was mirrored")
	}
	var params []string
	for k := range f.calls[1] {
		if len(k) > 10 && k[:10] == "Mcp-Param-" {
			params = append(params, k)
		}
	}
	if len(params) > 0 {
		slices.Sort(params)
		t.Errorf("a null argument was mirrored: %v", params)
	}
}

// Call keeps the params' own _meta keys next to the required ones.
func TestCallKeepsMeta(t *testing.T) {
	var seen json.RawMessage
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json")
		result := `{}`
		if req.Method == "server/discover" {
			result = `{"supportedVersions":["2026-07-28"],"capabilities":{}}`
		} else {
			seen = req.Params.Meta
		}
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`))
	}))
	defer hs.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Call(ctx, "x/custom", map[string]any{"_meta": map[string]any{"trace": "t1", "both": "params"}}, client.WithMeta(map[string]any{"both": "option"})); err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	json.Unmarshal(seen, &meta)
	if meta["trace"] != "t1" || meta["both"] != "option" || meta["io.modelcontextprotocol/protocolVersion"] != "2026-07-28" {
		t.Errorf("_meta sent = %s", seen)
	}
}
