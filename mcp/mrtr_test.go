package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Helpers of the MRTR tests: requests go through Server.Handle, the seam
// every transport uses.

// allCaps declares every kind of input.
const allCaps = `{"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{}}`

// mrtrReq is one tools/call request of a test.
type mrtrReq struct {
	tool      string
	args      string // JSON object, or "" for none
	caps      string // clientCapabilities, default allCaps
	responses string // inputResponses JSON value, or "" for none
	state     string // requestState, or "" for none
}

func (r mrtrReq) params() string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"name":%q`, r.tool)
	if r.args != "" {
		b.WriteString(`,"arguments":` + r.args)
	}
	if r.responses != "" {
		b.WriteString(`,"inputResponses":` + r.responses)
	}
	if r.state != "" {
		fmt.Fprintf(&b, `,"requestState":%q`, r.state)
	}
	caps := r.caps
	if caps == "" {
		caps = allCaps
	}
	b.WriteString("}")
	return mcpwire.Request{Params: b.String(), Caps: caps}.ParamsJSON()
}

// mrtrReply is a decoded response.
type mrtrReply struct {
	status int
	result map[string]any
	err    *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
}

// state returns the result's requestState ("" when none).
func (r mrtrReply) state() string {
	s, _ := r.result["requestState"].(string)
	return s
}

// inputKeys returns the keys of the result's inputRequests in order of
// appearance, with their methods.
func (r mrtrReply) inputs() map[string]string {
	out := map[string]string{}
	reqs, _ := r.result["inputRequests"].(map[string]any)
	for k, v := range reqs {
		out[k], _ = v.(map[string]any)["method"].(string)
	}
	return out
}

// text returns the first text content of a complete result.
func (r mrtrReply) text() string {
	content, _ := r.result["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	t, _ := content[0].(map[string]any)["text"].(string)
	return t
}

func (r mrtrReply) String() string {
	if r.err != nil {
		return fmt.Sprintf("error %d %q (HTTP %d)", r.err.Code, r.err.Message, r.status)
	}
	b, _ := json.Marshal(r.result)
	return string(b)
}

// mrtrSend sends a request through Handle.
func mrtrSend(t testing.TB, s *Server, method, params string) mrtrReply {
	t.Helper()
	return mrtrSendAs(t, s, nil, method, params)
}

// mrtrSendAs sends a request through Handle as the transport does after
// authenticating p (nil: no authentication).
func mrtrSendAs(t testing.TB, s *Server, p *Principal, method, params string) mrtrReply {
	t.Helper()
	// params carry their own _meta (or, in the tests of its absence, none).
	body := mcpwire.Request{ID: "7", Method: method, Params: params, NoMeta: true}.Bytes()
	msg, derr := jsonrpc.Decode(body)
	if derr != nil {
		t.Fatalf("decoding request %s: %v", body, derr)
	}
	out, status := s.Handle(context.Background(), nil, &Incoming{Message: &msg, Principal: p}, nil)
	var resp struct {
		ID     json.RawMessage `json:"id"`
		Result map[string]any  `json:"result"`
		Error  *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("response is not JSON: %s", out)
	}
	if string(resp.ID) != "7" {
		t.Fatalf("response id %s, want 7: %s", resp.ID, out)
	}
	return mrtrReply{status: status, result: resp.Result, err: resp.Error}
}

func mrtrCall(t testing.TB, s *Server, r mrtrReq) mrtrReply {
	t.Helper()
	return mrtrSend(t, s, "tools/call", r.params())
}

// isIRR reports whether the reply is an input_required result.
func (r mrtrReply) isIRR() bool {
	return r.err == nil && r.result["resultType"] == "input_required"
}

func (r mrtrReply) isComplete() bool {
	return r.err == nil && r.result["resultType"] == "complete"
}

var nameSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)

// mrtrServer returns a server with tools that ask for input, and a counter
// of handler runs.
func mrtrServer(opts *ServerOptions) (*Server, *atomic.Int64) {
	if opts == nil {
		opts = &ServerOptions{}
	}
	o := *opts
	if o.Info.Name == "" {
		o.Info.Name, o.Info.Version = "mrtr", "1.0.0"
	}
	if len(o.State.Keys) == 0 {
		o.State.Keys = [][]byte{[]byte("0123456789abcdef0123456789abcdef")}
	}
	s := NewServer(&o)
	runs := new(atomic.Int64)
	type greetIn struct {
		Greeting string `json:"greeting,omitempty"`
	}
	AddTool(s, &Tool{Name: "greet", Description: "Asks for a name."},
		func(ctx context.Context, req *ToolRequest, in greetIn) (string, error) {
			runs.Add(1)
			r, err := req.Elicit("user_name", &ElicitParams{Message: "What is your name?", RequestedSchema: nameSchema})
			if err != nil {
				return "", err
			}
			if !r.Accepted() {
				return "no name: " + string(r.Action), nil
			}
			var v struct{ Name string }
			if err := r.Decode(&v); err != nil {
				return "", err
			}
			g := in.Greeting
			if g == "" {
				g = "Hello"
			}
			return g + ", " + v.Name + "!", nil
		})
	AddTool(s, &Tool{Name: "steps", Description: "Asks two questions in two rounds, and keeps a counter in its state."},
		func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
			var st struct{ Runs int }
			if _, err := req.LoadState(&st); err != nil {
				return "", err
			}
			st.Runs++
			if err := req.SaveState(st); err != nil {
				return "", err
			}
			a, err := req.Elicit("step1", &ElicitParams{Message: "Name?", RequestedSchema: nameSchema})
			if err != nil {
				return "", err
			}
			b, err := req.Elicit("step2", &ElicitParams{Message: "Color?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}}}`)})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%v likes %v (run %d)", a.Content["name"], b.Content["color"], st.Runs), nil
		})
	AddTool(s, &Tool{Name: "batch", Description: "Asks for three inputs in one round."},
		func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
			name, err1 := req.Elicit("user_name", &ElicitParams{Message: "Name?", RequestedSchema: nameSchema})
			greeting, err2 := req.Sample("greeting", &CreateMessageParams{
				Messages:  []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "Generate a greeting"}}}},
				MaxTokens: 50,
			})
			roots, err3 := req.ListRoots("client_roots")
			if err := errors.Join(err1, err2, err3); err != nil {
				return "", err
			}
			return fmt.Sprintf("%s %v, %d roots", greeting.Text(), name.Content["name"], len(roots.Roots)), nil
		})
	type askIn struct {
		Kind           string `json:"kind"`
		IncludeContext string `json:"includeContext,omitempty"`
	}
	AddTool(s, &Tool{Name: "ask", Description: "Asks for one kind of input."},
		func(ctx context.Context, req *ToolRequest, in askIn) (string, error) {
			switch in.Kind {
			case "form":
				r, err := req.Elicit("k", &ElicitParams{Message: "Sure?"})
				if err != nil {
					return "", err
				}
				return "form " + string(r.Action), nil
			case "url":
				r, err := req.Elicit("k", &ElicitParams{Mode: ElicitModeURL, Message: "Sign in", URL: "https://example.com/connect?id=1"})
				if err != nil {
					return "", err
				}
				return "url " + string(r.Action), nil
			case "sample":
				r, err := req.Sample("k", &CreateMessageParams{
					Messages:       []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "Hi"}}}},
					MaxTokens:      10,
					IncludeContext: in.IncludeContext,
				})
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("sample %s %q %s", r.Role, r.Text(), r.Model), nil
			case "roots":
				r, err := req.ListRoots("k")
				if err != nil {
					return "", err
				}
				b, _ := json.Marshal(r.Roots)
				return "roots " + string(b), nil
			case "empty-key":
				_, err := req.ListRoots("")
				return "", err
			case "bad-schema":
				_, err := req.Elicit("k", &ElicitParams{Message: "x", RequestedSchema: map[string]any{"type": "string"}})
				return "", err
			case "key-clash":
				_, err1 := req.ListRoots("k")
				_, err2 := req.Elicit("k", &ElicitParams{Message: "x"})
				return "", errors.Join(err1, err2)
			case "state-only":
				if err := req.SaveState("waiting"); err != nil {
					return "", err
				}
				var st string
				if ok, _ := req.LoadState(&st); ok && st == "waiting" {
					if _, err := req.LoadState(new(int)); err == nil {
						return "", errors.New("decoding a string state into an int succeeded")
					}
				}
				return "", &InputRequired{}
			}
			return "", fmt.Errorf("unknown kind %q", in.Kind)
		})
	s.AddPrompt(&Prompt{Name: "briefing", Description: "Asks what the briefing is about.", Arguments: []PromptArgument{{Name: "tone"}}},
		func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) {
			runs.Add(1)
			r, err := req.Elicit("topic", &ElicitParams{Message: "Topic?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}`)})
			if err != nil {
				return nil, err
			}
			return &GetPromptResult{Messages: []PromptMessage{{Role: RoleUser, Content: &TextContent{Text: fmt.Sprintf("%s briefing on %v", req.Arguments["tone"], r.Content["topic"])}}}}, nil
		})
	s.AddResourceTemplate(&ResourceTemplate{URITemplate: "notes://{id}", Name: "note"},
		func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
			runs.Add(1)
			roots, err := req.ListRoots("roots")
			if err != nil {
				return nil, err
			}
			return &ReadResourceResult{Contents: []*ResourceContents{{Text: fmt.Sprintf("note %s, %d roots", req.Params["id"], len(roots.Roots))}}}, nil
		})
	return s, runs
}

func TestInputRequiredResultShape(t *testing.T) {
	s, _ := mrtrServer(nil)
	r := mrtrCall(t, s, mrtrReq{tool: "greet"})
	if !r.isIRR() {
		t.Fatalf("round 1: %v, want input_required", r)
	}
	st := r.state()
	if st == "" {
		t.Fatalf("round 1 has no requestState: %v", r)
	}
	want := map[string]any{
		"resultType": "input_required",
		"inputRequests": map[string]any{
			"user_name": map[string]any{
				"method": "elicitation/create",
				"params": map[string]any{
					"mode":            "form",
					"message":         "What is your name?",
					"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"}},
				},
			},
		},
		"requestState": st,
		"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "mrtr", "version": "1.0.0"}},
	}
	if diff := cmp.Diff(want, r.result); diff != "" {
		t.Errorf("input_required result (-want +got):\n%s", diff)
	}

	r2 := mrtrCall(t, s, mrtrReq{tool: "greet", state: st, responses: `{"user_name":{"action":"accept","content":{"name":"Alice"}}}`})
	if !r2.isComplete() || r2.text() != "Hello, Alice!" {
		t.Fatalf("round 2: %v, want complete Hello, Alice!", r2)
	}
	if _, ok := r2.result["requestState"]; ok {
		t.Errorf("a complete result carries requestState: %v", r2)
	}
}

// TestInputResponses covers what a retry may carry: the right answer, no
// answer, a wrong one, extra ones, malformed ones.
func TestInputResponses(t *testing.T) {
	s, _ := mrtrServer(nil)
	tests := []struct {
		name      string
		responses string
		want      string // "complete:TEXT", "irr" (asks user_name again), or "error:CODE"
	}{
		{"answered", `{"user_name":{"action":"accept","content":{"name":"Alice"}}}`, "complete:Hello, Alice!"},
		{"extra keys ignored", `{"user_name":{"action":"accept","content":{"name":"Alice"}},"unknown_extra_key":{"x":1},"another_unexpected":5}`, "complete:Hello, Alice!"},
		{"declined", `{"user_name":{"action":"decline"}}`, "complete:no name: decline"},
		{"cancelled", `{"user_name":{"action":"cancel"}}`, "complete:no name: cancel"},
		{"no responses", ``, "irr"},
		{"empty responses", `{}`, "irr"},
		{"null responses", `null`, "irr"},
		{"wrong key", `{"wrong_key":{"action":"accept","content":{"data":"wrong"}}}`, "irr"},
		{"answer is a number", `{"user_name":12345}`, "irr"},
		{"answer is null", `{"user_name":null}`, "irr"},
		{"unknown action", `{"user_name":{"action":"maybe"}}`, "irr"},
		{"content not matching the form", `{"user_name":{"action":"accept","content":{"name":5}}}`, "irr"},
		{"required field missing", `{"user_name":{"action":"accept","content":{}}}`, "irr"},
		{"content not an object", `{"user_name":{"action":"accept","content":"Alice"}}`, "irr"},
		{"a sampling result instead", `{"user_name":{"role":"assistant","content":{"type":"text","text":"Alice"},"model":"m"}}`, "irr"},
		{"responses not an object", `"Alice"`, "error:-32602"},
		{"responses an array", `[1]`, "error:-32602"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mrtrCall(t, s, mrtrReq{tool: "greet", responses: tt.responses})
			switch kind, arg, _ := strings.Cut(tt.want, ":"); kind {
			case "complete":
				if !r.isComplete() || r.text() != arg {
					t.Fatalf("got %v, want complete %q", r, arg)
				}
			case "irr":
				if diff := cmp.Diff(map[string]string{"user_name": "elicitation/create"}, r.inputs()); !r.isIRR() || diff != "" {
					t.Fatalf("got %v, want input_required asking user_name again", r)
				}
			case "error":
				if r.err == nil || fmt.Sprint(r.err.Code) != arg || r.status != http.StatusBadRequest {
					t.Fatalf("got %v, want error %s with HTTP 400", r, arg)
				}
			}
		})
	}
}

// TestMultiRoundCarriesAnswers: a handler written as straight-line code
// asks step1, then step2; the third request carries only step2's answer,
// and step1's comes back from the sealed state, as does the handler's own
// state.
func TestMultiRoundCarriesAnswers(t *testing.T) {
	s, _ := mrtrServer(nil)
	r1 := mrtrCall(t, s, mrtrReq{tool: "steps"})
	if diff := cmp.Diff(map[string]string{"step1": "elicitation/create"}, r1.inputs()); !r1.isIRR() || diff != "" {
		t.Fatalf("round 1: %v", r1)
	}
	r2 := mrtrCall(t, s, mrtrReq{tool: "steps", state: r1.state(), responses: `{"step1":{"action":"accept","content":{"name":"Alice"}}}`})
	if diff := cmp.Diff(map[string]string{"step2": "elicitation/create"}, r2.inputs()); !r2.isIRR() || diff != "" {
		t.Fatalf("round 2: %v", r2)
	}
	if r2.state() == r1.state() {
		t.Errorf("round 2 repeats round 1's requestState")
	}
	r3 := mrtrCall(t, s, mrtrReq{tool: "steps", state: r2.state(), responses: `{"step2":{"action":"accept","content":{"color":"blue"}}}`})
	if want := "Alice likes blue (run 3)"; !r3.isComplete() || r3.text() != want {
		t.Fatalf("round 3: %v, want %q", r3, want)
	}
	// A fresh answer to step1 in round 3 does not override the sealed one.
	r3b := mrtrCall(t, s, mrtrReq{tool: "steps", state: r2.state(), responses: `{"step1":{"action":"accept","content":{"name":"Mallory"}},"step2":{"action":"accept","content":{"color":"red"}}}`})
	if want := "Alice likes red (run 3)"; r3b.text() != want {
		t.Fatalf("round 3 with a second step1 answer: %v, want %q", r3b, want)
	}
}

// TestBatchedInputs: every unanswered request of a run goes into one
// result, in call order; a partial answer asks only for what is missing.
func TestBatchedInputs(t *testing.T) {
	s, _ := mrtrServer(nil)
	r1 := mrtrCall(t, s, mrtrReq{tool: "batch"})
	want := map[string]string{"user_name": "elicitation/create", "greeting": "sampling/createMessage", "client_roots": "roots/list"}
	if diff := cmp.Diff(want, r1.inputs()); !r1.isIRR() || diff != "" {
		t.Fatalf("round 1: %v (-want +got):\n%s", r1, diff)
	}
	roots := `{"roots":[{"uri":"file:///test/root","name":"Test Root"}]}`
	r2 := mrtrCall(t, s, mrtrReq{tool: "batch", state: r1.state(), responses: `{"user_name":{"action":"accept","content":{"name":"Alice"}},"client_roots":` + roots + `}`})
	if diff := cmp.Diff(map[string]string{"greeting": "sampling/createMessage"}, r2.inputs()); !r2.isIRR() || diff != "" {
		t.Fatalf("round 2 (greeting missing): %v", r2)
	}
	r3 := mrtrCall(t, s, mrtrReq{tool: "batch", state: r2.state(), responses: `{"greeting":{"role":"assistant","content":{"type":"text","text":"Hello there!"},"model":"test-model","stopReason":"endTurn"}}`})
	if want := "Hello there! Alice, 1 roots"; !r3.isComplete() || r3.text() != want {
		t.Fatalf("round 3: %v, want %q", r3, want)
	}
}

// TestInputRequestOrder checks the wire order of a batch, which a map
// decoding cannot show.
func TestInputRequestOrder(t *testing.T) {
	s, _ := mrtrServer(nil)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + mrtrReq{tool: "batch"}.params() + `}`)
	msg, _ := jsonrpc.Decode(body)
	out, _ := s.Handle(context.Background(), nil, &Incoming{Message: &msg}, nil)
	i, j, k := strings.Index(string(out), `"user_name"`), strings.Index(string(out), `"greeting"`), strings.Index(string(out), `"client_roots"`)
	if !(0 < i && i < j && j < k) {
		t.Errorf("input requests not in call order: %s", out)
	}
	if strings.Contains(string(out), "ttlMs") || strings.Contains(string(out), "cacheScope") {
		t.Errorf("input_required result has cache hints: %s", out)
	}
}

// TestInputCapabilities: nothing is asked that the request did not
// declare; the handler gets -32021 with the capability it needs.
func TestInputCapabilities(t *testing.T) {
	s, _ := mrtrServer(nil)
	tests := []struct {
		name, kind, includeContext, caps string
		wantNeed                         string // requiredCapabilities, or "" for an input_required result
	}{
		{"form declared as {}", "form", "", `{"elicitation":{}}`, ""},
		{"form declared", "form", "", `{"elicitation":{"form":{}}}`, ""},
		{"form, no elicitation", "form", "", `{"sampling":{}}`, `{"elicitation":{}}`},
		{"form, url only", "form", "", `{"elicitation":{"url":{}}}`, `{"elicitation":{"form":{}}}`},
		{"url declared", "url", "", `{"elicitation":{"url":{}}}`, ""},
		{"url, form only", "url", "", `{"elicitation":{}}`, `{"elicitation":{"url":{}}}`},
		{"sampling declared", "sample", "", `{"sampling":{}}`, ""},
		{"sampling missing", "sample", "", `{"elicitation":{},"roots":{}}`, `{"sampling":{}}`},
		{"sampling context missing", "sample", "thisServer", `{"sampling":{}}`, `{"sampling":{"context":{}}}`},
		{"sampling context declared", "sample", "allServers", `{"sampling":{"context":{}}}`, ""},
		{"roots declared", "roots", "", `{"roots":{"listChanged":true}}`, ""},
		{"roots missing", "roots", "", `{}`, `{"roots":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := fmt.Sprintf(`{"kind":%q,"includeContext":%q}`, tt.kind, tt.includeContext)
			r := mrtrCall(t, s, mrtrReq{tool: "ask", args: args, caps: tt.caps})
			if tt.wantNeed == "" {
				if !r.isIRR() || len(r.inputs()) != 1 {
					t.Fatalf("got %v, want input_required with one request", r)
				}
				return
			}
			if r.err == nil || r.err.Code != -32021 || r.status != http.StatusBadRequest {
				t.Fatalf("got %v, want -32021 with HTTP 400", r)
			}
			if diff := cmp.Diff(`{"requiredCapabilities":`+tt.wantNeed+`}`, string(r.err.Data)); diff != "" {
				t.Errorf("error data (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInputKinds runs one round trip of each kind of input and checks the
// request params and the decoded answer.
func TestInputKinds(t *testing.T) {
	s, _ := mrtrServer(nil)
	tests := []struct {
		kind       string
		wantParams string
		answer     string
		wantText   string
	}{
		{"form", `{"message":"Sure?","mode":"form","requestedSchema":{"properties":{},"type":"object"}}`, `{"action":"accept"}`, "form accept"},
		{"url", `{"message":"Sign in","mode":"url","url":"https://example.com/connect?id=1"}`, `{"action":"accept"}`, "url accept"},
		{"sample", `{"maxTokens":10,"messages":[{"content":{"text":"Hi","type":"text"},"role":"user"}]}`,
			`{"role":"assistant","content":[{"type":"text","text":"Hel"},{"type":"text","text":"lo"}],"model":"m1","stopReason":"endTurn"}`, "sample assistant \"Hel\\nlo\" m1"},
		{"roots", `{}`, `{"roots":[{"uri":"file:///a","name":"A"},{"uri":"file:///b"}]}`, `roots [{"uri":"file:///a","name":"A"},{"uri":"file:///b"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			args := fmt.Sprintf(`{"kind":%q}`, tt.kind)
			r1 := mrtrCall(t, s, mrtrReq{tool: "ask", args: args})
			reqs, _ := r1.result["inputRequests"].(map[string]any)
			k, _ := reqs["k"].(map[string]any)
			params, _ := json.Marshal(k["params"])
			if diff := cmp.Diff(tt.wantParams, string(params)); diff != "" {
				t.Fatalf("params of the input request (-want +got):\n%s\nreply: %v", diff, r1)
			}
			r2 := mrtrCall(t, s, mrtrReq{tool: "ask", args: args, state: r1.state(), responses: `{"k":` + tt.answer + `}`})
			if !r2.isComplete() || r2.text() != tt.wantText {
				t.Fatalf("round 2: %v, want %q", r2, tt.wantText)
			}
		})
	}
}

// TestInputProgrammingErrors: a handler that misuses the API gets an
// internal error (and a log line), never a panic or a malformed result.
func TestInputProgrammingErrors(t *testing.T) {
	s, _ := mrtrServer(nil)
	for _, kind := range []string{"empty-key", "bad-schema", "key-clash"} {
		t.Run(kind, func(t *testing.T) {
			r := mrtrCall(t, s, mrtrReq{tool: "ask", args: fmt.Sprintf(`{"kind":%q}`, kind)})
			if r.err == nil || r.err.Code != -32603 {
				t.Fatalf("got %v, want -32603", r)
			}
		})
	}
}

// TestInputRequiredStateOnly: a handler may answer input_required with its
// state alone; the result still has a requestState.
func TestInputRequiredStateOnly(t *testing.T) {
	s, _ := mrtrServer(nil)
	r := mrtrCall(t, s, mrtrReq{tool: "ask", args: `{"kind":"state-only"}`})
	if !r.isIRR() || r.state() == "" || r.result["inputRequests"] != nil {
		t.Fatalf("got %v, want input_required with only a requestState", r)
	}
}

func TestInputRequiredError(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&InputRequired{}, "mcp: input required"},
		{&InputRequired{Keys: []string{"a", "b"}}, "mcp: input required: a, b"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	joined := errors.Join(errors.New("x"), fmt.Errorf("wrapped: %w", &InputRequired{Keys: []string{"k"}}))
	if !isInputRequired(joined) {
		t.Errorf("isInputRequired(%v) = false", joined)
	}
}

type signUp struct {
	Name      string  `json:"name" jsonschema:"Your name"`
	Age       int     `json:"age,omitempty"`
	Subscribe bool    `json:"subscribe"`
	Score     float64 `json:"score,omitzero"`
	Skipped   string  `json:"-"`
	hidden    string  //lint:ignore U1000 an unexported field, which schema inference must leave out
}

// TestElicitForm: the form is inferred from a struct, and the answer comes
// back as that struct.
func TestElicitForm(t *testing.T) {
	s, _ := mrtrServer(nil)
	AddTool(s, &Tool{Name: "signup", Description: "Signs up."},
		func(ctx context.Context, req *ToolRequest, in struct{ Bad bool }) (string, error) {
			if in.Bad {
				_, _, err := ElicitForm[struct{ Tags []int }](req, "bad", "Tags?")
				return "", err
			}
			v, action, err := ElicitForm[signUp](req, "signup", "Sign up?")
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s %+v", action, v), nil
		})
	r1 := mrtrCall(t, s, mrtrReq{tool: "signup", args: `{"Bad":false}`})
	reqs, _ := r1.result["inputRequests"].(map[string]any)
	params, _ := json.Marshal(reqs["signup"].(map[string]any)["params"].(map[string]any)["requestedSchema"])
	want := `{"properties":{"age":{"type":"integer"},"name":{"description":"Your name","type":"string"},"score":{"type":"number"},"subscribe":{"type":"boolean"}},"required":["name","subscribe"],"type":"object"}`
	if diff := cmp.Diff(want, string(params)); diff != "" {
		t.Fatalf("inferred form (-want +got):\n%s", diff)
	}
	tests := []struct {
		answer, want string
	}{
		{`{"action":"accept","content":{"name":"Ada","age":36,"subscribe":true}}`, "accept {Name:Ada Age:36 Subscribe:true Score:0 Skipped: hidden:}"},
		{`{"action":"decline"}`, "decline {Name: Age:0 Subscribe:false Score:0 Skipped: hidden:}"},
	}
	for _, tt := range tests {
		r := mrtrCall(t, s, mrtrReq{tool: "signup", args: `{"Bad":false}`, state: r1.state(), responses: `{"signup":` + tt.answer + `}`})
		if r.text() != tt.want {
			t.Errorf("answer %s: got %v, want %q", tt.answer, r, tt.want)
		}
	}
	if r := mrtrCall(t, s, mrtrReq{tool: "signup", args: `{"Bad":true}`}); r.err == nil || r.err.Code != -32603 {
		t.Errorf("a form with a []int field: %v, want -32603", r)
	}
}

var testMeta = `"_meta":{` + mcpwire.Request{Caps: allCaps}.MetaMembers() + `}`

// TestInputRequiredPromptsAndResources: prompts/get and resources/read
// handlers ask for input as tool handlers do, and their state is bound to
// the prompt's arguments and the resource's URI.
func TestInputRequiredPromptsAndResources(t *testing.T) {
	s, runs := mrtrServer(nil)
	tests := []struct {
		name, method, params, key, answer, otherParams, want string
	}{
		{"prompts/get", "prompts/get", `"name":"briefing","arguments":{"tone":"calm"}`, "topic",
			`{"action":"accept","content":{"topic":"tides"}}`, `"name":"briefing","arguments":{"tone":"loud"}`, "calm briefing on tides"},
		{"resources/read", "resources/read", `"uri":"notes://7"`, "roots",
			`{"roots":[{"uri":"file:///r"}]}`, `"uri":"notes://8"`, "note 7, 1 roots"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r1 := mrtrSend(t, s, tt.method, "{"+tt.params+","+testMeta+"}")
			if !r1.isIRR() || len(r1.inputs()) != 1 || r1.inputs()[tt.key] == "" {
				t.Fatalf("round 1: %v, want input_required asking %q", r1, tt.key)
			}
			if _, ok := r1.result["ttlMs"]; ok {
				t.Errorf("input_required result has cache hints: %v", r1)
			}
			retry := func(params string) mrtrReply {
				return mrtrSend(t, s, tt.method, fmt.Sprintf(`{%s,"inputResponses":{%q:%s},"requestState":%q,%s}`, params, tt.key, tt.answer, r1.state(), testMeta))
			}
			r2 := retry(tt.params)
			if r2.err != nil || r2.result["resultType"] != "complete" || !strings.Contains(r2.String(), tt.want) {
				t.Fatalf("round 2: %v, want complete with %q", r2, tt.want)
			}
			before := runs.Load()
			if r := retry(tt.otherParams); r.err == nil || r.err.Code != -32602 || !strings.Contains(r.err.Message, "different request") {
				t.Errorf("state presented with other params: %v, want -32602", r)
			}
			if runs.Load() != before {
				t.Errorf("the handler ran with a mismatched state")
			}
		})
	}
	// Methods that cannot answer input_required never do.
	for _, m := range []string{"tools/list", "prompts/list", "resources/list"} {
		if r := mrtrSend(t, s, m, "{"+testMeta+"}"); r.isIRR() || r.err != nil {
			t.Errorf("%s: %v", m, r)
		}
	}
}

// TestStateBoundToPrincipal: a state sealed for one authenticated caller
// is refused for another, and for an unauthenticated request.
func TestStateBoundToPrincipal(t *testing.T) {
	s, runs := mrtrServer(nil)
	alice := &Principal{Issuer: "https://as.example", Subject: "alice"}
	bob := &Principal{Issuer: "https://as.example", Subject: "bob"}
	r1 := mrtrSendAs(t, s, alice, "tools/call", mrtrReq{tool: "greet"}.params())
	if !r1.isIRR() {
		t.Fatalf("round 1: %v", r1)
	}
	retry := mrtrReq{tool: "greet", state: r1.state(), responses: `{"user_name":{"action":"accept","content":{"name":"Alice"}}}`}.params()
	before := runs.Load()
	for _, p := range []*Principal{bob, nil} {
		if r := mrtrSendAs(t, s, p, "tools/call", retry); r.err == nil || r.err.Code != -32602 {
			t.Errorf("state of alice presented by %v: %v, want -32602", p, r)
		}
	}
	if runs.Load() != before {
		t.Errorf("the handler ran with another caller's state")
	}
	if r := mrtrSendAs(t, s, alice, "tools/call", retry); !r.isComplete() || r.text() != "Hello, Alice!" {
		t.Errorf("state of alice presented by alice: %v", r)
	}
}
