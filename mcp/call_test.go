package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// TestPrimitiveCallSkeleton checks that tools, resources (and templates),
// prompts and custom methods answer each step of the one call skeleton the
// same way, the tool-error policy being the one difference: a hidden item
// is unknown, a missing scope is 403, a protocol error passes, a request
// for input answers input_required, a cancelled request is cancelled, and
// an ordinary error is an isError result for a tool and -32603 elsewhere.
func TestPrimitiveCallSkeleton(t *testing.T) {
	var behave func(ctx context.Context) error
	handler := func(ctx context.Context) error { return behave(ctx) }
	hidden := func(name string) bool { return name == "hidden" || name == "res://hidden" }
	s := NewServer(&ServerOptions{Logger: slog.New(slog.DiscardHandler), State: StateOptions{Keys: [][]byte{make([]byte, 32)}}, ListFilters: ListFilters{
		Tools:     func(_ context.Context, _ *RequestInfo, t *Tool) bool { return !hidden(t.Name) },
		Prompts:   func(_ context.Context, _ *RequestInfo, p *Prompt) bool { return !hidden(p.Name) },
		Resources: func(_ context.Context, _ *RequestInfo, r *Resource) bool { return !hidden(r.URI) },
	}})
	for _, name := range []string{"open", "hidden"} {
		s.AddRawTool(&Tool{Name: name, Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) {
			return textResult("ok"), handler(ctx)
		})
		s.AddPrompt(&Prompt{Name: name, Description: "d"}, func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) {
			return &GetPromptResult{Messages: []PromptMessage{{Role: RoleUser, Content: &TextContent{Text: "ok"}}}}, handler(ctx)
		})
		s.AddResource(&Resource{URI: "res://" + name, Name: name}, func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []*ResourceContents{{Text: "ok"}}}, handler(ctx)
		})
	}
	s.AddRawTool(&Tool{Name: "scoped", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`), Scopes: []string{"admin"}}, func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) {
		return textResult("ok"), handler(ctx)
	})
	s.AddPrompt(&Prompt{Name: "scoped", Description: "d", Scopes: []string{"admin"}}, func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) {
		return &GetPromptResult{}, handler(ctx)
	})
	s.AddResource(&Resource{URI: "res://scoped", Name: "scoped", Scopes: []string{"admin"}}, func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{Text: "ok"}}}, handler(ctx)
	})
	s.AddResourceTemplate(&ResourceTemplate{URITemplate: "tmpl://{id}", Name: "tmpl"}, func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{Text: "ok"}}}, handler(ctx)
	})
	s.AddMethod("example.com/do", func(ctx context.Context, req *MethodRequest) (any, error) {
		return map[string]string{"done": "yes"}, handler(ctx)
	}, nil)

	type kind struct {
		name           string
		method, params func(item string) string
		items          []string // open, hidden, scoped ("" when the kind has none)
	}
	kinds := []kind{
		{"tool", func(string) string { return "tools/call" }, func(i string) string { return `{"name":"` + i + `","arguments":{}}` }, []string{"open", "hidden", "scoped"}},
		{"prompt", func(string) string { return "prompts/get" }, func(i string) string { return `{"name":"` + i + `"}` }, []string{"open", "hidden", "scoped"}},
		{"resource", func(string) string { return "resources/read" }, func(i string) string { return `{"uri":"res://` + i + `"}` }, []string{"open", "hidden", "scoped"}},
		{"template", func(string) string { return "resources/read" }, func(i string) string { return `{"uri":"tmpl://` + i + `"}` }, []string{"open", "", ""}},
		{"method", func(string) string { return "example.com/do" }, func(string) string { return `{}` }, []string{"open", "", ""}},
	}
	// outcome is what a call answered, reduced to what the skeleton decides.
	type outcome struct {
		Status     int
		Code       int
		Message    string
		ResultType string
		IsError    bool
	}
	call := func(t *testing.T, method, params string, ctx context.Context, p *Principal) outcome {
		t.Helper()
		msg := decodeMsg(t, mcpwire.Request{ID: "7", Method: method, Params: params}.Bytes())
		out, status := s.Handle(ctx, nil, &Incoming{Message: &msg, Principal: p}, nil)
		var resp struct {
			Result struct {
				ResultType string `json:"resultType"`
				IsError    bool   `json:"isError"`
			} `json:"result"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("%s: %v: %s", method, err, out)
		}
		o := outcome{Status: status, ResultType: resp.Result.ResultType, IsError: resp.Result.IsError}
		if resp.Error != nil {
			o = outcome{Status: status, Code: resp.Error.Code, Message: resp.Error.Message}
		}
		return o
	}
	user := &Principal{Subject: "u", Scopes: []string{"mcp"}}
	cancelledCtx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			toolPolicy := k.name == "tool"
			cases := []struct {
				name   string
				item   string
				ctx    context.Context
				behave func(ctx context.Context) error
				want   outcome
			}{
				{"ok", k.items[0], context.Background(), func(context.Context) error { return nil }, outcome{Status: 200, ResultType: "complete"}},
				{"protocol error passes", k.items[0], context.Background(), func(context.Context) error { return InvalidParams("bad x") }, outcome{Status: 400, Code: -32602, Message: "bad x"}},
				{"input required", k.items[0], context.Background(), func(context.Context) error { return &InputRequired{} }, outcome{Status: 200, ResultType: "input_required"}},
				{"cancelled", k.items[0], cancelledCtx, func(ctx context.Context) error { return ctx.Err() }, outcome{Status: 500, Code: -32603, Message: "Request cancelled"}},
				{"ordinary error", k.items[0], context.Background(), func(context.Context) error { return errors.New("boom") },
					map[bool]outcome{true: {Status: 200, ResultType: "complete", IsError: true}, false: {Status: 500, Code: -32603, Message: "Internal error"}}[toolPolicy]},
			}
			if k.items[1] != "" {
				notFound := outcome{Status: 400, Code: -32602, Message: map[string]string{"tool": "Unknown tool: hidden", "prompt": "Unknown prompt: hidden", "resource": "Resource not found: res://hidden"}[k.name]}
				cases = append(cases, struct {
					name   string
					item   string
					ctx    context.Context
					behave func(ctx context.Context) error
					want   outcome
				}{"hidden is unknown", k.items[1], context.Background(), func(context.Context) error { t.Error("hidden item's handler ran"); return nil }, notFound})
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					behave = c.behave
					got := call(t, k.method(c.item), k.params(c.item), c.ctx, nil)
					if diff := cmp.Diff(c.want, got); diff != "" {
						t.Errorf("(-want +got):\n%s", diff)
					}
				})
			}
			if k.items[2] != "" {
				t.Run("missing scope", func(t *testing.T) {
					behave = func(context.Context) error { t.Error("handler ran without its scope"); return nil }
					got := call(t, k.method(k.items[2]), k.params(k.items[2]), context.Background(), user)
					if got.Status != http.StatusForbidden || got.Code != -32600 {
						t.Errorf("got %+v, want a 403 insufficient-scope error", got)
					}
				})
			}
		})
	}
}
