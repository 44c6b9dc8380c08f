package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func promptServer() *Server {
	s := NewServer(nil)
	s.AddPrompt(&Prompt{
		Name:        "greet",
		Title:       "Greeting",
		Description: "Greets someone.",
		Arguments: []PromptArgument{
			{Name: "name", Description: "Who to greet", Required: true},
			{Name: "mood"},
		},
	}, func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) {
		text := "Say hello to " + req.Arguments["name"]
		if m, ok := req.Arguments["mood"]; ok {
			text += " in a " + m + " way"
		}
		return &GetPromptResult{Description: "A greeting", Messages: []PromptMessage{
			{Role: RoleUser, Content: &TextContent{Text: text}},
			{Role: RoleAssistant, Content: &ImageContent{Data: []byte("img"), MIMEType: "image/png"}},
			{Role: RoleUser, Content: &EmbeddedResource{Resource: &ResourceContents{URI: "test://r", MIMEType: "text/plain", Text: "r"}}},
		}, Meta: Meta{"k": "v"}}, nil
	})
	s.AddPrompt(&Prompt{Name: "nil-result", Description: "Returns nothing."},
		func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) { return nil, nil })
	s.AddPrompt(&Prompt{Name: "no-content", Description: "Forgets the content."},
		func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) {
			return &GetPromptResult{Messages: []PromptMessage{{Role: RoleUser}}}, nil
		})
	s.AddPrompt(&Prompt{Name: "bad-role", Description: "Uses a bad role."},
		func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) {
			return &GetPromptResult{Messages: []PromptMessage{{Role: "system", Content: &TextContent{Text: "x"}}}}, nil
		})
	s.AddPrompt(&Prompt{Name: "fails", Description: "Fails."},
		func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) {
			return nil, errors.New("boom")
		})
	s.AddPrompt(&Prompt{Name: "refuses", Description: "Refuses with a protocol error."},
		func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) {
			return nil, InvalidParams("Invalid params: not today")
		})
	return s
}

func TestPromptsGet(t *testing.T) {
	s := promptServer()
	tests := []struct {
		name   string
		params string
		want   map[string]any
		err    *rpcError
	}{
		{name: "all content types", params: `{"name":"greet","arguments":{"name":"Ada"}}`, want: map[string]any{
			"resultType": "complete", "description": "A greeting",
			"messages": []any{
				map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Say hello to Ada"}},
				map[string]any{"role": "assistant", "content": map[string]any{"type": "image", "data": "aW1n", "mimeType": "image/png"}},
				map[string]any{"role": "user", "content": map[string]any{"type": "resource", "resource": map[string]any{"uri": "test://r", "mimeType": "text/plain", "text": "r"}}},
			},
		}},
		{name: "optional argument", params: `{"name":"greet","arguments":{"name":"Ada","mood":"cheerful"}}`, want: map[string]any{
			"resultType": "complete", "description": "A greeting",
			"messages": []any{
				map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Say hello to Ada in a cheerful way"}},
				map[string]any{"role": "assistant", "content": map[string]any{"type": "image", "data": "aW1n", "mimeType": "image/png"}},
				map[string]any{"role": "user", "content": map[string]any{"type": "resource", "resource": map[string]any{"uri": "test://r", "mimeType": "text/plain", "text": "r"}}},
			},
		}},
		{name: "nil result", params: `{"name":"nil-result"}`, want: map[string]any{"resultType": "complete", "messages": []any{}}},
		{name: "null arguments", params: `{"name":"nil-result","arguments":null}`, want: map[string]any{"resultType": "complete", "messages": []any{}}},
		{name: "missing required", params: `{"name":"greet","arguments":{"mood":"x"}}`, err: &rpcError{Code: -32602, Message: "Invalid params: prompt greet needs argument(s) name"}},
		{name: "no arguments at all", params: `{"name":"greet"}`, err: &rpcError{Code: -32602, Message: "Invalid params: prompt greet needs argument(s) name"}},
		{name: "unknown argument", params: `{"name":"greet","arguments":{"name":"a","colour":"red"}}`, err: &rpcError{Code: -32602, Message: "Invalid params: prompt greet has no argument colour; its arguments are name, mood"}},
		{name: "unknown argument, none declared", params: `{"name":"nil-result","arguments":{"x":"y"}}`, err: &rpcError{Code: -32602, Message: "Invalid params: prompt nil-result has no argument x; it takes no arguments"}},
		{name: "non-string argument", params: `{"name":"greet","arguments":{"name":42}}`, err: &rpcError{Code: -32602, Message: "Invalid params: arguments name must be a string"}},
		{name: "arguments not an object", params: `{"name":"greet","arguments":["name"]}`, err: &rpcError{Code: -32602, Message: "Invalid params: arguments must be an object of strings"}},
		{name: "unknown prompt", params: `{"name":"nope"}`, err: &rpcError{Code: -32602, Message: "Unknown prompt: nope"}},
		{name: "no name", params: `{}`, err: &rpcError{Code: -32602, Message: "Invalid params: prompts/get needs a string name"}},
		{name: "no content", params: `{"name":"no-content"}`, err: &rpcError{Code: -32603, Message: "Internal error"}},
		{name: "bad role", params: `{"name":"bad-role"}`, err: &rpcError{Code: -32603, Message: "Internal error"}},
		{name: "handler error", params: `{"name":"fails"}`, err: &rpcError{Code: -32603, Message: "Internal error"}},
		{name: "handler protocol error", params: `{"name":"refuses"}`, err: &rpcError{Code: -32602, Message: "Invalid params: not today"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, s, "prompts/get", tt.params)
			if tt.err != nil {
				if diff := cmp.Diff(tt.err, r.Error); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if r.Error != nil {
				t.Fatalf("error %+v", r.Error)
			}
			delete(r.Result, "_meta")
			if diff := cmp.Diff(tt.want, r.Result); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPromptsGetMetaAndNoCacheHints(t *testing.T) {
	r := call(t, promptServer(), "prompts/get", `{"name":"greet","arguments":{"name":"Ada"}}`)
	if got := r.Result["_meta"].(map[string]any)["k"]; got != "v" {
		t.Errorf("_meta.k = %v, want v", got)
	}
	if _, ok := r.Result["ttlMs"]; ok {
		t.Errorf("prompts/get result has ttlMs; only lists and resources/read are cacheable")
	}
}

func TestPromptsList(t *testing.T) {
	s := promptServer()
	res := mustResult(t, s, "prompts/list", `{}`)
	if diff := cmp.Diff([]string{"bad-role", "fails", "greet", "nil-result", "no-content", "refuses"}, names(res, "prompts", "name")); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	greet := res["prompts"].([]any)[2]
	want := map[string]any{"name": "greet", "title": "Greeting", "description": "Greets someone.", "arguments": []any{
		map[string]any{"name": "name", "description": "Who to greet", "required": true},
		map[string]any{"name": "mood"},
	}}
	if diff := cmp.Diff(want, greet); diff != "" {
		t.Errorf("greet (-want +got):\n%s", diff)
	}
	if res["ttlMs"] != 3600000.0 || res["cacheScope"] != "public" {
		t.Errorf("cache hints %v %v", res["ttlMs"], res["cacheScope"])
	}
	caps := mustResult(t, s, "server/discover", `{}`)["capabilities"].(map[string]any)
	if _, ok := caps["prompts"]; !ok {
		t.Errorf("capabilities %v lack prompts", caps)
	}
	s.RemovePrompts("greet", "fails", "unknown")
	if diff := cmp.Diff([]string{"bad-role", "nil-result", "no-content", "refuses"}, names(mustResult(t, s, "prompts/list", `{}`), "prompts", "name")); diff != "" {
		t.Errorf("after RemovePrompts (-want +got):\n%s", diff)
	}
}

func TestPromptsNotRegistered(t *testing.T) {
	s := NewServer(nil)
	for _, m := range []string{"prompts/list", "prompts/get"} {
		if e := mustError(t, s, m, `{"name":"x"}`); e.Code != -32601 {
			t.Errorf("%s: code %d, want -32601", m, e.Code)
		}
	}
}

func TestAddPromptPanics(t *testing.T) {
	h := func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) { return nil, nil }
	tests := []struct {
		p    *Prompt
		h    PromptHandler
		want string
	}{
		{&Prompt{Description: "d"}, h, `AddPrompt "": missing name`},
		{&Prompt{Name: "p"}, h, `AddPrompt "p": missing description`},
		{&Prompt{Name: "p", Description: "d"}, nil, `AddPrompt "p": missing handler`},
		{&Prompt{Name: "p", Description: "d", Arguments: []PromptArgument{{}}}, h, `AddPrompt "p": an argument has no name`},
		{&Prompt{Name: "p", Description: "d", Arguments: []PromptArgument{{Name: "a"}, {Name: "a"}}}, h, `AddPrompt "p": argument a is declared twice`},
	}
	for _, tt := range tests {
		got := panicMessage(func() { NewServer(nil).AddPrompt(tt.p, tt.h) })
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("panic %q, want %q", got, tt.want)
		}
	}
}
