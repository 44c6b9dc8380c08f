package mcp

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func completeServer() *Server {
	s := NewServer(nil)
	noop := func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) { return nil, nil }
	s.AddPrompt(&Prompt{
		Name: "lang", Description: "d",
		Arguments: []PromptArgument{{Name: "language"}, {Name: "framework"}, {Name: "plain"}},
		Complete: func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error) {
			switch req.Argument {
			case "language":
				return CompleteFrom(map[string][]string{"language": {"Python", "Perl", "Go"}})(ctx, req)
			case "framework":
				// Depends on the already-resolved language.
				if req.Context["language"] == "Python" {
					return &CompleteResult{Values: []string{"flask", "django"}, Total: 2}, nil
				}
				return &CompleteResult{}, nil
			case "plain":
				return nil, errors.New("completion backend down")
			}
			return nil, nil
		},
	}, noop)
	s.AddPrompt(&Prompt{Name: "nocomplete", Description: "d", Arguments: []PromptArgument{{Name: "a"}}}, noop)
	s.AddResourceTemplate(&ResourceTemplate{
		URITemplate: "num://{n}/{m}", Name: "numbers",
		Complete: func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error) {
			var out []string
			for i := range 250 {
				out = append(out, req.Argument+strconv.Itoa(i))
			}
			return &CompleteResult{Values: out}, nil
		},
	}, textResource("n"))
	return s
}

func TestComplete(t *testing.T) {
	s := completeServer()
	hundred := make([]any, 100)
	for i := range hundred {
		hundred[i] = "m" + strconv.Itoa(i)
	}
	tests := []struct {
		name   string
		params string
		want   map[string]any // completion
		err    *rpcError
	}{
		{name: "prompt prefix", params: `{"ref":{"type":"ref/prompt","name":"lang"},"argument":{"name":"language","value":"p"}}`,
			want: map[string]any{"values": []any{"Python", "Perl"}}},
		{name: "empty value", params: `{"ref":{"type":"ref/prompt","name":"lang"},"argument":{"name":"language","value":""}}`,
			want: map[string]any{"values": []any{"Python", "Perl", "Go"}}},
		{name: "no match", params: `{"ref":{"type":"ref/prompt","name":"lang"},"argument":{"name":"language","value":"x"}}`,
			want: map[string]any{"values": []any{}}},
		{name: "context", params: `{"ref":{"type":"ref/prompt","name":"lang"},"argument":{"name":"framework","value":""},"context":{"arguments":{"language":"Python"}}}`,
			want: map[string]any{"values": []any{"flask", "django"}, "total": 2.0}},
		{name: "prompt without Complete", params: `{"ref":{"type":"ref/prompt","name":"nocomplete"},"argument":{"name":"a","value":"x"}}`,
			want: map[string]any{"values": []any{}}},
		{name: "template capped at 100", params: `{"ref":{"type":"ref/resource","uri":"num://{n}/{m}"},"argument":{"name":"m","value":""}}`,
			want: map[string]any{"values": hundred, "total": 250.0, "hasMore": true}},
		{name: "unknown prompt", params: `{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"a","value":""}}`,
			err: &rpcError{Code: -32602, Message: "Unknown prompt: nope"}},
		{name: "unknown prompt argument", params: `{"ref":{"type":"ref/prompt","name":"lang"},"argument":{"name":"zzz","value":""}}`,
			err: &rpcError{Code: -32602, Message: "Invalid params: prompt lang has no argument zzz; its arguments are language, framework, plain"}},
		{name: "unknown template", params: `{"ref":{"type":"ref/resource","uri":"num://{x}"},"argument":{"name":"x","value":""}}`,
			err: &rpcError{Code: -32602, Message: "Invalid params: unknown resource template num://{x}"}},
		{name: "unknown variable", params: `{"ref":{"type":"ref/resource","uri":"num://{n}/{m}"},"argument":{"name":"q","value":""}}`,
			err: &rpcError{Code: -32602, Message: "Invalid params: resource template num://{n}/{m} has no variable q; its variables are n, m"}},
		{name: "bad ref type", params: `{"ref":{"type":"ref/tool","name":"x"},"argument":{"name":"a","value":""}}`,
			err: &rpcError{Code: -32602, Message: `Invalid params: ref.type must be "ref/prompt" or "ref/resource"`}},
		{name: "no ref", params: `{"argument":{"name":"a","value":""}}`,
			err: &rpcError{Code: -32602, Message: "Invalid params: completion/complete needs a ref object"}},
		{name: "no argument", params: `{"ref":{"type":"ref/prompt","name":"lang"}}`,
			err: &rpcError{Code: -32602, Message: "Invalid params: completion/complete needs an argument object with name and value"}},
		{name: "value not a string", params: `{"ref":{"type":"ref/prompt","name":"lang"},"argument":{"name":"language","value":1}}`,
			err: &rpcError{Code: -32602, Message: "Invalid params: argument.name and argument.value must be strings"}},
		{name: "context not an object", params: `{"ref":{"type":"ref/prompt","name":"lang"},"argument":{"name":"language","value":""},"context":"x"}`,
			err: &rpcError{Code: -32602, Message: "Invalid params: context must be an object"}},
		{name: "handler error", params: `{"ref":{"type":"ref/prompt","name":"lang"},"argument":{"name":"plain","value":""}}`,
			err: &rpcError{Code: -32603, Message: "Internal error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, s, "completion/complete", tt.params)
			if tt.err != nil {
				if diff := cmp.Diff(tt.err, r.Error); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if r.Error != nil {
				t.Fatalf("error %+v", r.Error)
			}
			if r.Result["resultType"] != "complete" {
				t.Errorf("resultType %v", r.Result["resultType"])
			}
			if diff := cmp.Diff(tt.want, r.Result["completion"]); diff != "" {
				t.Errorf("completion (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompletionsCapability(t *testing.T) {
	s := NewServer(nil)
	s.AddPrompt(&Prompt{Name: "p", Description: "d", Arguments: []PromptArgument{{Name: "a"}}},
		func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) { return nil, nil })
	caps := mustResult(t, s, "server/discover", `{}`)["capabilities"].(map[string]any)
	if _, ok := caps["completions"]; ok {
		t.Errorf("completions declared with nothing that completes: %v", caps)
	}
	params := `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}`
	if e := mustError(t, s, "completion/complete", params); e.Code != -32601 {
		t.Errorf("code %d, want -32601", e.Code)
	}
	s.AddPrompt(&Prompt{Name: "p", Description: "d", Arguments: []PromptArgument{{Name: "a"}}, Complete: CompleteFrom(map[string][]string{"a": {"x"}})},
		func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) { return nil, nil })
	caps = mustResult(t, s, "server/discover", `{}`)["capabilities"].(map[string]any)
	if diff := cmp.Diff(map[string]any{}, caps["completions"]); diff != "" {
		t.Errorf("completions capability (-want +got):\n%s", diff)
	}
	got := mustResult(t, s, "completion/complete", params)["completion"]
	if diff := cmp.Diff(map[string]any{"values": []any{"x"}}, got); diff != "" {
		t.Errorf("completion (-want +got):\n%s", diff)
	}
}

func TestCompleteFrom(t *testing.T) {
	h := CompleteFrom(map[string][]string{"city": {"Paris", "Palermo", "Berlin", "parma"}})
	tests := []struct {
		arg, value string
		want       []string
	}{
		{"city", "pa", []string{"Paris", "Palermo", "parma"}},
		{"city", "PAR", []string{"Paris", "parma"}},
		{"city", "", []string{"Paris", "Palermo", "Berlin", "parma"}},
		{"city", "x", nil},
		{"country", "", nil},
	}
	for _, tt := range tests {
		res, err := h(context.Background(), &CompleteRequest{Argument: tt.arg, Value: tt.value})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, res.Values); diff != "" {
			t.Errorf("%s=%q (-want +got):\n%s", tt.arg, tt.value, diff)
		}
	}
}
