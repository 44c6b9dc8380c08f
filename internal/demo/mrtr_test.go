package demo_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/demo"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
)

// harnessCaps is what the conformance harness declares by default.
const harnessCaps = `{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}`

// The answers the conformance harness sends, by method.
var harnessAnswers = map[string]string{
	"elicitation/create":     `{"action":"accept","content":{"name":"Alice"}}`,
	"sampling/createMessage": `{"role":"assistant","content":{"type":"text","text":"Hello there!"},"model":"test-model","stopReason":"endTurn"}`,
	"roots/list":             `{"roots":[{"uri":"file:///test/root","name":"Test Root"}]}`,
}

type reply struct {
	status int
	body   string
	result map[string]any
	err    map[string]any
}

// callTool posts a tools/call over Streamable HTTP, as the harness does.
func callTool(t *testing.T, s *mcp.Server, name, caps, extra string) reply {
	t.Helper()
	return post(t, s, "tools/call", name, caps, extra)
}

// post posts a request of method for the tool or prompt name, with the
// client capabilities caps and extra params members (each after a comma).
func post(t *testing.T, s *mcp.Server, method, name, caps, extra string) reply {
	t.Helper()
	w := mcpwire.Serve(t, s, mcpwire.Request{Method: method, Name: name, Params: `{"name":` + strconv.Quote(name) + extra + `}`, Caps: caps})
	var resp struct {
		Result map[string]any
		Error  map[string]any
	}
	if err := json.Unmarshal(w.Raw, &resp); err != nil {
		t.Fatalf("%s: response is not one JSON object: %s", name, w.Raw)
	}
	return reply{status: w.Status, body: string(w.Raw), result: resp.Result, err: resp.Error}
}

func (r reply) resultType() string { s, _ := r.result["resultType"].(string); return s }

// requests returns the methods of the input requests by key, and the keys
// in wire order.
func (r reply) requests() (map[string]string, []string) {
	m := map[string]string{}
	reqs, _ := r.result["inputRequests"].(map[string]any)
	for k, v := range reqs {
		m[k], _ = v.(map[string]any)["method"].(string)
	}
	var order []string
	for k := range m {
		order = append(order, k)
	}
	// Wire order: by position in the body.
	for i := range order {
		for j := i + 1; j < len(order); j++ {
			if strings.Index(r.body, `"`+order[j]+`":{"method"`) < strings.Index(r.body, `"`+order[i]+`":{"method"`) {
				order[i], order[j] = order[j], order[i]
			}
		}
	}
	return m, order
}

// answerAll answers every input request of r as the harness does; content
// overrides the elicitation content.
func answerAll(r reply, content string) string {
	m, order := r.requests()
	var parts []string
	for _, k := range order {
		a := harnessAnswers[m[k]]
		if m[k] == "elicitation/create" && content != "" {
			a = `{"action":"accept","content":` + content + `}`
		}
		parts = append(parts, fmt.Sprintf("%q:%s", k, a))
	}
	s := `,"inputResponses":{` + strings.Join(parts, ",") + `}`
	if st, ok := r.result["requestState"].(string); ok {
		s += fmt.Sprintf(`,"requestState":%q`, st)
	}
	return s
}

func (r reply) text() string {
	c, _ := r.result["content"].([]any)
	if len(c) == 0 {
		return ""
	}
	s, _ := c[0].(map[string]any)["text"].(string)
	return s
}

// TestInputRequiredFixtures runs the conversations of the conformance
// suite's input-required-result scenarios (FIXTURES.md §5) against the
// demo fixtures.
func TestInputRequiredFixtures(t *testing.T) {
	s := demo.New(&mcp.ServerOptions{State: mcp.StateOptions{Keys: [][]byte{[]byte("demo-test-key-0123456789abcdef01")}}})
	tests := []struct {
		tool      string
		caps      string
		wantFirst map[string]string // methods of round 1's input requests by key
		firstKey  string            // the key that must come first, if any
		contents  []string          // elicitation contents of the later rounds
		wantText  string
	}{
		{"test_input_required_result_elicitation", harnessCaps, map[string]string{"user_name": "elicitation/create"}, "", []string{`{"name":"Alice"}`}, "Hello, Alice!"},
		{"test_input_required_result_sampling", harnessCaps, map[string]string{"capital_question": "sampling/createMessage"}, "capital_question", nil, "The model answered: Hello there!"},
		{"test_input_required_result_list_roots", harnessCaps, map[string]string{"client_roots": "roots/list"}, "client_roots", nil, "The client has 1 root(s): file:///test/root"},
		{"test_input_required_result_request_state", harnessCaps, map[string]string{"confirm": "elicitation/create"}, "", []string{`{"ok":true}`}, "state-ok: the state came back intact; confirmation: accept"},
		{"test_input_required_result_multiple_inputs", harnessCaps, map[string]string{"user_name": "elicitation/create", "greeting": "sampling/createMessage", "client_roots": "roots/list"}, "user_name", []string{`{"name":"Alice"}`}, "Hello there!, Alice! The client has 1 root(s)."},
		{"test_input_required_result_multi_round", harnessCaps, map[string]string{"step1": "elicitation/create"}, "", []string{`{"name":"Alice"}`, `{"color":"blue"}`}, "Multi-round complete for Alice who likes blue"},
		{"test_input_required_result_tampered_state", harnessCaps, map[string]string{"confirm": "elicitation/create"}, "", []string{`{"ok":true}`}, "confirmation: accept"},
		{"test_input_required_result_capabilities", `{"sampling":{}}`, map[string]string{"name_suggestion": "sampling/createMessage"}, "", nil, "Hello, Hello there!!"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			r := callTool(t, s, tt.tool, tt.caps, "")
			got, order := r.requests()
			if r.resultType() != "input_required" || r.result["requestState"] == "" {
				t.Fatalf("round 1: %s, want input_required with a requestState", r.body)
			}
			if diff := cmp.Diff(tt.wantFirst, got); diff != "" {
				t.Fatalf("round 1 input requests (-want +got):\n%s", diff)
			}
			if tt.firstKey != "" && order[0] != tt.firstKey {
				t.Errorf("first key %q, want %q", order[0], tt.firstKey)
			}
			if _, ok := r.result["ttlMs"]; ok {
				t.Errorf("input_required result has ttlMs: %s", r.body)
			}
			states := map[string]bool{r.result["requestState"].(string): true}
			for round := 0; ; round++ {
				content := ""
				if round < len(tt.contents) {
					content = tt.contents[round]
				}
				r = callTool(t, s, tt.tool, tt.caps, answerAll(r, content))
				if r.resultType() != "input_required" {
					break
				}
				st, _ := r.result["requestState"].(string)
				if states[st] {
					t.Fatalf("round %d repeats a requestState", round+2)
				}
				states[st] = true
				if round > 3 {
					t.Fatalf("no end after %d rounds: %s", round+2, r.body)
				}
			}
			if r.resultType() != "complete" || r.text() != tt.wantText {
				t.Fatalf("last round: %s, want complete %q", r.body, tt.wantText)
			}
			if tt.tool == "test_input_required_result_multi_round" && len(states) != 2 {
				t.Errorf("multi-round took %d input_required rounds, want 2", len(states))
			}
		})
	}
}

// TestInputRequiredPromptFixture: §5.9, input_required on prompts/get.
func TestInputRequiredPromptFixture(t *testing.T) {
	s := demo.New(nil)
	const name = "test_input_required_result_prompt"
	r := post(t, s, "prompts/get", name, harnessCaps, "")
	if got, _ := r.requests(); r.resultType() != "input_required" || got["user_context"] != "elicitation/create" {
		t.Fatalf("round 1: %s, want input_required asking user_context", r.body)
	}
	r = post(t, s, "prompts/get", name, harnessCaps, answerAll(r, `{"context":"test context"}`))
	msgs, _ := r.result["messages"].([]any)
	if r.resultType() != "complete" || len(msgs) == 0 || !strings.Contains(r.body, "test context") {
		t.Fatalf("round 2: %s, want complete messages using the context", r.body)
	}
}

// TestTamperedStateRejected: the state with "-TAMPERED" appended, as the
// harness sends it, gets a JSON-RPC error.
func TestTamperedStateRejected(t *testing.T) {
	s := demo.New(nil)
	r := callTool(t, s, "test_input_required_result_tampered_state", harnessCaps, "")
	st, _ := r.result["requestState"].(string)
	r = callTool(t, s, "test_input_required_result_tampered_state", harnessCaps,
		fmt.Sprintf(`,"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}},"requestState":%q`, st+"-TAMPERED"))
	if r.err == nil || r.err["code"] != float64(-32602) || r.status != 400 {
		t.Fatalf("got %d %s, want -32602 with HTTP 400", r.status, r.body)
	}
}

// TestClearNotesAsksFirst: the destructive tool deletes nothing until the
// user confirms, and nothing when the user declines.
func TestClearNotesAsksFirst(t *testing.T) {
	s := demo.New(nil)
	for _, n := range []string{"milk", "eggs"} {
		if r := callTool(t, s, "note", harnessCaps, `,"arguments":{"text":"`+n+`"}`); r.resultType() != "complete" {
			t.Fatalf("note: %s", r.body)
		}
	}
	r := callTool(t, s, "clear_notes", harnessCaps, "")
	if got, _ := r.requests(); got["confirm_delete"] != "elicitation/create" {
		t.Fatalf("clear_notes did not ask for confirmation: %s", r.body)
	}
	st, _ := r.result["requestState"].(string)
	retry := func(answer string) reply {
		return callTool(t, s, "clear_notes", harnessCaps, fmt.Sprintf(`,"inputResponses":{"confirm_delete":%s},"requestState":%q`, answer, st))
	}
	if r := retry(`{"action":"decline"}`); r.text() != "Kept the notes: the user did not confirm." {
		t.Fatalf("declined: %s", r.body)
	}
	if r := retry(`{"action":"accept","content":{"confirm":false}}`); r.text() != "Kept the notes: the user did not confirm." {
		t.Fatalf("accepted without confirming: %s", r.body)
	}
	if r := retry(`{"action":"accept","content":{"confirm":true}}`); r.text() != "Deleted 2 note(s)." {
		t.Fatalf("confirmed: %s", r.body)
	}
	if r := callTool(t, s, "clear_notes", harnessCaps, ""); r.text() != "There are no notes to delete." {
		t.Fatalf("after clearing: %s", r.body)
	}
}

// TestSummarizeNeedsSampling: without the sampling capability the tool
// fails with -32021 naming it; with it, the model's answer is the result.
func TestSummarizeNeedsSampling(t *testing.T) {
	s := demo.New(nil)
	args := `,"arguments":{"text":"A long story."}`
	r := callTool(t, s, "summarize", `{"elicitation":{}}`, args)
	data, _ := json.Marshal(r.err["data"])
	if r.err == nil || r.err["code"] != float64(-32021) || r.status != 400 || string(data) != `{"requiredCapabilities":{"sampling":{}}}` {
		t.Fatalf("without sampling: %d %s", r.status, r.body)
	}
	r = callTool(t, s, "summarize", harnessCaps, args)
	if got, _ := r.requests(); got["summary"] != "sampling/createMessage" {
		t.Fatalf("summarize did not sample: %s", r.body)
	}
	r = callTool(t, s, "summarize", harnessCaps, args+answerAll(r, ""))
	if r.text() != "Hello there!" {
		t.Fatalf("round 2: %s", r.body)
	}
}
