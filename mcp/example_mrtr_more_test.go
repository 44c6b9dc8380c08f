package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpkit/mcpkit/mcp"
)

// ListRoots asks the client for its roots (the directories it shares).
func ExampleToolRequest_ListRoots() {
	s := mcp.NewServer(&mcp.ServerOptions{State: mcp.StateOptions{Keys: [][]byte{[]byte("an example key of 32 bytes or more!")}}})
	mcp.AddTool(s, &mcp.Tool{Name: "count_roots", Description: "Counts the client's roots."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			r, err := req.ListRoots("roots")
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d root(s), the first %s", len(r.Roots), r.Roots[0].URI), nil
		})
	res := mrtrPost(s, `{"name":"count_roots"}`, `{"roots":{}}`)
	reqs, _ := json.Marshal(res["inputRequests"])
	fmt.Println(res["resultType"], string(reqs))
	state, _ := json.Marshal(res["requestState"])
	res = mrtrPost(s, `{"name":"count_roots","inputResponses":{"roots":{"roots":[{"uri":"file:///work","name":"work"}]}},"requestState":`+string(state)+`}`, `{"roots":{}}`)
	fmt.Println(res["resultType"], res["content"])
	// Output:
	// input_required {"roots":{"method":"roots/list","params":{}}}
	// complete [map[text:1 root(s), the first file:///work type:text]]
}

// SaveState keeps handler state across rounds inside the sealed
// requestState; LoadState reads it back in the next round.
func ExampleToolRequest_SaveState() {
	s := mcp.NewServer(&mcp.ServerOptions{State: mcp.StateOptions{Keys: [][]byte{[]byte("an example key of 32 bytes or more!")}}})
	type progress struct{ Step int }
	mcp.AddTool(s, &mcp.Tool{Name: "wizard", Description: "Walks through two steps."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			var st progress
			if ok, err := req.LoadState(&st); err != nil {
				return "", err
			} else if !ok {
				st.Step = 1
			}
			if st.Step == 1 {
				st.Step = 2
				if err := req.SaveState(st); err != nil {
					return "", err
				}
				// Returning the InputRequired of an unanswered question ends
				// this round; the saved state comes back with the retry.
				_, err := req.Elicit("go_on", &mcp.ElicitParams{Message: "Continue?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
				return "", err
			}
			return fmt.Sprintf("finished at step %d", st.Step), nil
		})
	res := mrtrPost(s, `{"name":"wizard"}`, `{"elicitation":{}}`)
	fmt.Println(res["resultType"])
	state, _ := json.Marshal(res["requestState"])
	res = mrtrPost(s, `{"name":"wizard","inputResponses":{"go_on":{"action":"accept","content":{}}},"requestState":`+string(state)+`}`, `{"elicitation":{}}`)
	fmt.Println(res["resultType"], res["content"])
	// Output:
	// input_required
	// complete [map[text:finished at step 2 type:text]]
}

// CanElicit lets a handler fall back when the client cannot ask its user.
func ExampleClientCapabilities_CanElicit() {
	var none, form mcp.ClientCapabilities
	json.Unmarshal([]byte(`{}`), &none)
	json.Unmarshal([]byte(`{"elicitation":{}}`), &form)
	fmt.Println(none.CanElicit(mcp.ElicitModeForm), form.CanElicit(mcp.ElicitModeForm), form.CanElicit(mcp.ElicitModeURL))
	// Output:
	// false true false
}
