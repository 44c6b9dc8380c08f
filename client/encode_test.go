package client

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	iclient "github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/internal/protocol"
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

// generalRequest builds the request the slow, obvious way: params with
// _meta from metaFor, encoded by encoding/json, and the headers from
// iclient.ModernHeaders and iclient.ParamHeaders.
func generalRequest(t *testing.T, c *Client, method string, params map[string]any, st *callState) (*iclient.Request, error) {
	t.Helper()
	obj := map[string]any{}
	for k, v := range params {
		obj[k] = v
	}
	if meta := c.metaFor(st); len(meta) > 0 || c.sess.Era() == protocol.EraModern {
		obj["_meta"] = meta
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	req := &iclient.Request{Method: method, Params: body}
	if !c.http || c.sess.Era() != protocol.EraModern {
		return req, nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		t.Fatal(err)
	}
	req.Header = iclient.ModernHeaders(c.sess.Version(), method, members)
	if method == "tools/call" {
		var name string
		json.Unmarshal(members["name"], &name)
		if schema := c.headerTools[name]; schema != nil {
			ph, err := iclient.ParamHeaders(schema, members["arguments"])
			if err != nil {
				return nil, err
			}
			for k, v := range ph {
				req.Header[k] = v
			}
		}
	}
	return req, nil
}

// TestRequestMatchesGeneral checks that the one-pass encoder sends the
// same params and headers as the general path, for the shapes the client
// sends.
func TestRequestMatchesGeneral(t *testing.T) {
	tests := []struct {
		method string
		params map[string]any
		cfg    callConfig
		token  string
	}{
		{method: "tools/call", params: map[string]any{"name": "echo", "arguments": json.RawMessage(`{"text": "hi <b>&"}`)}, token: "p1"},
		{method: "tools/call", params: map[string]any{"name": "where", "arguments": json.RawMessage(`{"region":"Zürich"}`)}},
		{method: "tools/call", params: map[string]any{"name": "héllo wörld"}, cfg: callConfig{level: "debug"}},
		{method: "prompts/get", params: map[string]any{"name": "greet", "arguments": map[string]string{"who": "Ada"}}},
		{method: "resources/read", params: map[string]any{"uri": json.RawMessage(`"test://a b"`)}},
		{method: "tasks/get", params: map[string]any{"taskId": "t-1"}, cfg: callConfig{meta: map[string]any{"com.example/x": 1.5, "flag": true, "nothing": nil}}},
		{method: "tools/list", params: map[string]any{"cursor": "c2", "a": []int{1, 2}, "z": map[string]any{"k": "v"}}, cfg: callConfig{icMeta: map[string]any{"k": "ic", "j": "ic"}, meta: map[string]any{"k": "caller"}}},
		{method: "server/discover", params: map[string]any{}},
		{method: "tools/call", params: map[string]any{"name": "x"}, cfg: callConfig{meta: map[string]any{protocol.MetaProtocolVersion: "override"}}},
	}
	c := fuzzClient(nil, nil)
	c.http = true
	c.headerTools["where"] = json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)
	for _, tt := range tests {
		st := &callState{cfg: &tt.cfg, token: tt.token}
		fast, ferr := c.request(tt.method, tt.params, st)
		slow, serr := generalRequest(t, c, tt.method, tt.params, st)
		if ferr != nil || serr != nil {
			t.Fatalf("%s: errors %v and %v", tt.method, ferr, serr)
		}
		if diff := cmp.Diff(decodeJSON(t, slow.Params), decodeJSON(t, fast.Params)); diff != "" {
			t.Errorf("%s params (-general +one pass):\n%s\n%s", tt.method, diff, fast.Params)
		}
		if diff := cmp.Diff(slow.Header, fast.Header); diff != "" {
			t.Errorf("%s headers (-general +one pass):\n%s", tt.method, diff)
		}
	}
	if _, err := c.request("tools/call", map[string]any{"name": "where", "arguments": json.RawMessage(`{"region":["not","a","string"]}`)}, &callState{cfg: &callConfig{}}); err == nil {
		t.Errorf("a header parameter that is not a string: no error")
	}
}

// FuzzRequestParams feeds arbitrary tool names and argument JSON through
// the one-pass encoder and the general path: where the arguments are
// valid JSON and the name valid UTF-8, both send the same params and
// headers.
func FuzzRequestParams(f *testing.F) {
	for _, s := range []string{`{"text":"hi"}`, `{"a": [1, {"b": "\" \\"}]}`, `"str"`, `{"region":"\u2028<>"}`, `{"region":"a\r\nb"}`} {
		f.Add("where", s, "")
		f.Add("echo", s, "tok")
	}
	f.Add("ech\xffo", `{}`, "")
	f.Fuzz(func(t *testing.T, name, args, token string) {
		if !json.Valid([]byte(args)) {
			t.Skip()
		}
		c := fuzzClient(nil, nil)
		c.http = true
		c.headerTools["where"] = json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)
		params := map[string]any{"name": name, "arguments": json.RawMessage(args)}
		st := &callState{cfg: &callConfig{}, token: token}
		if !utf8.ValidString(name) {
			// The body would carry U+FFFD and the Mcp-Name header the
			// bytes as given: the client refuses the name instead.
			if _, err := c.request("tools/call", params, st); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
				t.Fatalf("name %q: error %v, want one saying it is not valid UTF-8", name, err)
			}
			return
		}
		fast, ferr := c.request("tools/call", params, st)
		slow, serr := generalRequest(t, c, "tools/call", params, st)
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("errors %v and %v", ferr, serr)
		}
		if ferr != nil {
			return
		}
		if !cmp.Equal(decodeJSON(t, slow.Params), decodeJSON(t, fast.Params)) {
			t.Errorf("params differ:\n%s\n%s", slow.Params, fast.Params)
		}
		if diff := cmp.Diff(slow.Header, fast.Header); diff != "" {
			t.Errorf("headers differ:\n%s", diff)
		}
	})
}
