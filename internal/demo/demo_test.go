package demo

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpclient "github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// client calls the demo server over loopback HTTP through the public
// client, declaring sampling as the conformance harness does.
type client struct {
	t *testing.T
	c *mcpclient.Client
}

func newClient(t *testing.T) *client {
	srv := httptest.NewServer(New(nil))
	t.Cleanup(srv.Close)
	return connect(t, srv.URL)
}

// connect connects a client to the demo server at url.
func connect(t *testing.T, url string) *client {
	c, err := mcpclient.Connect(context.Background(), &mcpclient.HTTPTransport{URL: url}, &mcpclient.Options{
		NoCache: true,
		Sample: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			t.Errorf("unexpected sampling request: %+v", p)
			return nil, errors.New("no sampling in these tests")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// A client lists the tools before it calls them: that is how it learns
	// which arguments go into Mcp-Param-* headers.
	for _, err := range c.ListTools(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
	}
	return &client{t: t, c: c}
}

type response struct {
	Result map[string]any
	Error  *mcp.Error
}

// call sends method with params (without _meta) and returns the result or
// the JSON-RPC error.
func (c *client) call(method string, params map[string]any) response {
	c.t.Helper()
	raw, err := c.c.Call(context.Background(), method, params)
	if err != nil {
		var e *mcp.Error
		if !errors.As(err, &e) {
			c.t.Fatalf("%s: %v", method, err)
		}
		return response{Error: e}
	}
	var out response
	if err := json.Unmarshal(raw, &out.Result); err != nil {
		c.t.Fatalf("%s: decoding the result: %v", method, err)
	}
	return out
}

func (c *client) result(method string, params map[string]any) map[string]any {
	c.t.Helper()
	r := c.call(method, params)
	if r.Error != nil {
		c.t.Fatalf("%s %v: error %d %s", method, params, r.Error.Code, r.Error.Message)
	}
	return r.Result
}

// list returns every item of a list method, across pages.
func (c *client) list(method, field string) []map[string]any {
	var out []map[string]any
	params := map[string]any{}
	for {
		res := c.result(method, params)
		for _, it := range res[field].([]any) {
			out = append(out, it.(map[string]any))
		}
		next, _ := res["nextCursor"].(string)
		if next == "" {
			return out
		}
		params = map[string]any{"cursor": next}
	}
}

func field(items []map[string]any, key string) []string {
	var out []string
	for _, it := range items {
		out = append(out, it[key].(string))
	}
	return out
}

func TestFixturesPresent(t *testing.T) {
	c := newClient(t)
	tools := c.list("tools/list", "tools")
	wantTools := []string{
		"echo", "test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_error_handling", "test_tool_with_progress", "json_schema_2020_12_tool",
		"test_x_mcp_header", "test_missing_capability", "test_streaming_elicitation", "test_logging_tool",
	}
	names := field(tools, "name")
	for _, w := range wantTools {
		if !slices.Contains(names, w) {
			t.Errorf("tools/list lacks %s", w)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("tools are not sorted by name: %v", names)
	}
	for _, tool := range tools {
		if d, _ := tool["description"].(string); d == "" {
			t.Errorf("tool %v has no description", tool["name"])
		}
	}
	prompts := c.list("prompts/list", "prompts")
	for _, w := range []string{"test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_prompt_with_image"} {
		if !slices.Contains(field(prompts, "name"), w) {
			t.Errorf("prompts/list lacks %s", w)
		}
	}
	for _, p := range prompts {
		if d, _ := p["description"].(string); d == "" {
			t.Errorf("prompt %v has no description", p["name"])
		}
	}
	resources := field(c.list("resources/list", "resources"), "uri")
	for _, w := range []string{"test://static-text", "test://static-binary", "test://watched-resource"} {
		if !slices.Contains(resources, w) {
			t.Errorf("resources/list lacks %s", w)
		}
	}
	templates := field(c.list("resources/templates/list", "resourceTemplates"), "uriTemplate")
	if !slices.Contains(templates, "test://template/{id}/data") {
		t.Errorf("resources/templates/list lacks test://template/{id}/data: %v", templates)
	}
	caps := c.result("server/discover", nil)["capabilities"].(map[string]any)
	for _, k := range []string{"tools", "prompts", "resources", "completions"} {
		if _, ok := caps[k]; !ok {
			t.Errorf("capabilities lack %s: %v", k, caps)
		}
	}
}

// TestFirstToolSucceedsWithEmptyArguments: http-header-validation calls the
// first listed tool with {}.
func TestFirstToolSucceedsWithEmptyArguments(t *testing.T) {
	c := newClient(t)
	first := c.list("tools/list", "tools")[0]["name"].(string)
	res := c.result("tools/call", map[string]any{"name": first, "arguments": map[string]any{}})
	if res["isError"] == true {
		t.Errorf("first tool %s fails with {}: %v", first, res)
	}
}

func TestFirstResourceReadable(t *testing.T) {
	c := newClient(t)
	first := c.list("resources/list", "resources")[0]["uri"].(string)
	res := c.result("resources/read", map[string]any{"uri": first})
	if _, ok := res["ttlMs"]; !ok {
		t.Errorf("resources/read of %s has no ttlMs: %v", first, res)
	}
}

func TestJSONSchema2020ToolVerbatim(t *testing.T) {
	c := newClient(t)
	var schema any
	for _, tool := range c.list("tools/list", "tools") {
		if tool["name"] == "json_schema_2020_12_tool" {
			schema = tool["inputSchema"]
		}
	}
	var want any
	if err := json.Unmarshal([]byte(jsonSchema2020), &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, schema); diff != "" {
		t.Errorf("inputSchema (-want +got):\n%s", diff)
	}
}

func text(res map[string]any) string {
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	s, _ := content[0].(map[string]any)["text"].(string)
	return s
}

func TestToolOutputs(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		tool    string
		args    map[string]any
		want    string
		isError bool
	}{
		{"echo", map[string]any{"text": "hi"}, "hi", false},
		{"echo", map[string]any{}, `Invalid arguments for tool echo: required: missing properties: ["text"]`, true},
		{"shout", map[string]any{"text": "hi"}, "HI", false},
		{"test_simple_text", nil, "This is a simple text response for testing.", false},
		{"test_error_handling", nil, "This tool intentionally returns an error for testing", true},
		{"test_x_mcp_header", map[string]any{"region": "eu-west"}, "region=eu-west", false},
		{"json_schema_2020_12_tool", map[string]any{"contactMethod": "phone", "phone": "1"}, `JSON Schema 2020-12 tool called with: {"contactMethod":"phone","phone":"1"}`, false},
		{"evaluate", map[string]any{"expression": "(2 + 3) * sqrt(16) - 2 % 3"}, "18", false},
		{"evaluate", map[string]any{"expression": "pow(2, 10) / 4"}, "256", false},
		{"evaluate", map[string]any{"expression": "1 / 0"}, "division by zero", true},
		{"evaluate", map[string]any{"expression": "os.Exit(1)"}, "unsupported function call", true},
		{"evaluate", map[string]any{"expression": "\"x\""}, `"x" is not a number`, true},
		{"word_count", map[string]any{"text": "one two\nthree"}, `{"words":3,"characters":13,"lines":2}`, false},
		{"dice_roll", map[string]any{"count": 3, "sides": 1}, "count must be 1 to 100 and sides 2 to 1000, got count 3 and sides 1", true},
		{"time_now", map[string]any{"timezone": "Mars/Olympus"}, `unknown time zone "Mars/Olympus"; use an IANA name such as Europe/Paris`, true},
		{"countdown", map[string]any{"seconds": 0}, "seconds must be 1 to 60, got 0", true},
	}
	for _, tt := range tests {
		params := map[string]any{"name": tt.tool}
		if tt.args != nil {
			params["arguments"] = tt.args
		}
		res := c.result("tools/call", params)
		if got := text(res); got != tt.want || (res["isError"] == true) != tt.isError {
			t.Errorf("%s %v: got %q (isError %v), want %q (isError %v)", tt.tool, tt.args, got, res["isError"], tt.want, tt.isError)
		}
	}
}

func TestDiceRoll(t *testing.T) {
	c := newClient(t)
	for range 20 {
		res := c.result("tools/call", map[string]any{"name": "dice_roll", "arguments": map[string]any{"count": 4, "sides": 3}})
		sc := res["structuredContent"].(map[string]any)
		rolls, total := sc["rolls"].([]any), 0.0
		if len(rolls) != 4 {
			t.Fatalf("%d rolls, want 4", len(rolls))
		}
		for _, r := range rolls {
			if v := r.(float64); v < 1 || v > 3 {
				t.Fatalf("roll %v outside 1..3", v)
			}
			total += r.(float64)
		}
		if sc["total"] != total {
			t.Fatalf("total %v, want %v", sc["total"], total)
		}
	}
}

func TestResourcesAndPrompts(t *testing.T) {
	c := newClient(t)
	read := func(uri string) map[string]any {
		return c.result("resources/read", map[string]any{"uri": uri})["contents"].([]any)[0].(map[string]any)
	}
	if got := read("test://template/123/data")["text"].(string); !strings.Contains(got, "123") {
		t.Errorf("template read %q lacks 123", got)
	}
	if got := read("test://static-binary"); got["blob"] == "" || got["mimeType"] != "image/png" {
		t.Errorf("static-binary = %v", got)
	}
	if got := read("demo://times-table/7")["text"].(string); !strings.Contains(got, "10 x 7 = 70") {
		t.Errorf("times table: %q", got)
	}
	if e := c.call("resources/read", map[string]any{"uri": "demo://times-table/0"}).Error; e == nil || e.Code != -32602 {
		t.Errorf("times-table/0: %+v, want -32602", e)
	}
	e := c.call("resources/read", map[string]any{"uri": "test://nonexistent-resource-for-conformance-testing"}).Error
	var data []byte
	if e != nil {
		data, _ = json.Marshal(e.Data)
	}
	if e == nil || e.Code != -32602 || string(data) != `{"uri":"test://nonexistent-resource-for-conformance-testing"}` {
		t.Errorf("unknown resource: %+v", e)
	}
	msgs := c.result("prompts/get", map[string]any{"name": "test_prompt_with_arguments", "arguments": map[string]any{"arg1": "testValue1", "arg2": "testValue2"}})["messages"]
	if b, _ := json.Marshal(msgs); !strings.Contains(string(b), "testValue1") || !strings.Contains(string(b), "testValue2") {
		t.Errorf("prompt messages %s lack the arguments", b)
	}
	comp := c.result("completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": map[string]any{"name": "arg1", "value": "test"},
	})["completion"].(map[string]any)
	if diff := cmp.Diff([]any{"testValue1", "test-alpha", "test-beta"}, comp["values"]); diff != "" {
		t.Errorf("completion (-want +got):\n%s", diff)
	}
	comp = c.result("completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/resource", "uri": "demo://times-table/{n}"}, "argument": map[string]any{"name": "n", "value": "9"},
	})["completion"].(map[string]any)
	if diff := cmp.Diff([]any{"9", "90", "91", "92", "93", "94", "95", "96", "97", "98", "99"}, comp["values"]); diff != "" {
		t.Errorf("template completion (-want +got):\n%s", diff)
	}
}

func TestProgressFixture(t *testing.T) {
	s := New(nil)
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_tool_with_progress","_meta":{"progressToken":"progress-test-1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n"
	var out strings.Builder
	if err := s.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var progress []float64
	for _, l := range lines[:len(lines)-1] {
		var n struct {
			Method string
			Params struct {
				ProgressToken string
				Progress      float64
			}
		}
		if err := json.Unmarshal([]byte(l), &n); err != nil || n.Method != "notifications/progress" || n.Params.ProgressToken != "progress-test-1" {
			t.Fatalf("unexpected line %s", l)
		}
		progress = append(progress, n.Params.Progress)
	}
	if diff := cmp.Diff([]float64{0, 50, 100}, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

// TestXMcpHeaderCaseVariant checks that test_x_mcp_header cannot be made to
// act on another region than the one the Mcp-Param-Region header routed on.
func TestXMcpHeaderCaseVariant(t *testing.T) {
	c := newClient(t)
	r := c.result("tools/call", map[string]any{"name": "test_x_mcp_header", "arguments": map[string]any{"region": "us", "REGION": "eu"}})
	if r["isError"] != true {
		t.Fatalf("result %v, want an isError result", r)
	}
	b, _ := json.Marshal(r["content"])
	if !strings.Contains(string(b), `REGION`) {
		t.Errorf("content %s does not name the key REGION", b)
	}
}
