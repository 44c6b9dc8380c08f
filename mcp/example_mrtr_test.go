package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/mcp"
)

// A tool that asks the user for confirmation before it does anything. The
// handler reads like ordinary Go: Elicit returns the answer once the client
// has sent it, and until then an *mcp.InputRequired error that the handler
// returns. The server turns that into an input_required result; the client
// asks the user and retries with inputResponses and the sealed
// requestState, and the handler runs again from the top.
func ExampleToolRequest_Elicit() {
	s := mcp.NewServer(&mcp.ServerOptions{
		Info: mcp.Implementation{Name: "files", Version: "1.0.0"},
		// Replicas share their keys; see docs/mrtr.md.
		State: mcp.StateOptions{Keys: [][]byte{[]byte("an example key of 32 bytes or more!")}},
	})
	type In struct {
		Path string `json:"path"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "delete", Description: "Deletes a file after the user confirms."},
		func(ctx context.Context, req *mcp.ToolRequest, in In) (string, error) {
			r, err := req.Elicit("confirm", &mcp.ElicitParams{
				Message:         "Delete " + in.Path + "?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"sure":{"type":"boolean"}},"required":["sure"]}`),
			})
			if err != nil {
				return "", err // *mcp.InputRequired: ask the client, then come back
			}
			var v struct{ Sure bool }
			if !r.Accepted() || r.Decode(&v) != nil || !v.Sure {
				return "Kept " + in.Path + ".", nil
			}
			return "Deleted " + in.Path + ".", nil
		})

	// Round 1: the call as the client first sends it.
	res := mrtrPost(s, `{"name":"delete","arguments":{"path":"notes.txt"}}`, `{"elicitation":{}}`)
	fmt.Println(res["resultType"])
	reqs, _ := json.Marshal(res["inputRequests"])
	fmt.Println(string(reqs))

	// Round 2: the same call with the user's answer and the echoed state.
	state, _ := json.Marshal(res["requestState"])
	res = mrtrPost(s, `{"name":"delete","arguments":{"path":"notes.txt"},
		"inputResponses":{"confirm":{"action":"accept","content":{"sure":true}}},
		"requestState":`+string(state)+`}`, `{"elicitation":{}}`)
	fmt.Println(res["resultType"], res["content"])
	// Output:
	// input_required
	// {"confirm":{"method":"elicitation/create","params":{"message":"Delete notes.txt?","mode":"form","requestedSchema":{"properties":{"sure":{"type":"boolean"}},"required":["sure"],"type":"object"}}}}
	// complete [map[text:Deleted notes.txt. type:text]]
}

// mrtrPost sends a tools/call with params (a JSON object without _meta) to s
// over Streamable HTTP, declaring the client capabilities caps, and returns
// the result object.
func mrtrPost(s *mcp.Server, params, caps string) map[string]any {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	var p struct{ Name string }
	json.Unmarshal([]byte(params), &p)
	name := p.Name
	params = strings.TrimSpace(params)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params[:len(params)-1] + "," + meta + "}}"
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", name)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	var resp struct {
		Result map[string]any
		Error  any
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.Error != nil {
		return map[string]any{"error": w.Body.String()}
	}
	return resp.Result
}

// ElicitForm infers the form from a struct and returns the answer as one.
func ExampleElicitForm() {
	s := mcp.NewServer(&mcp.ServerOptions{State: mcp.StateOptions{Keys: [][]byte{[]byte("an example key of 32 bytes or more!")}}})
	type RSVP struct {
		Name   string `json:"name" jsonschema:"Your name"`
		Guests int    `json:"guests,omitempty" jsonschema:"How many people you bring"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "rsvp", Description: "Answers an invitation."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			v, action, err := mcp.ElicitForm[RSVP](req, "rsvp", "Are you coming?")
			if err != nil {
				return "", err
			}
			if action != mcp.ElicitAccept {
				return "Maybe next time.", nil
			}
			return fmt.Sprintf("See you, %s (+%d)!", v.Name, v.Guests), nil
		})

	res := mrtrPost(s, `{"name":"rsvp"}`, `{"elicitation":{}}`)
	form, _ := json.Marshal(res["inputRequests"].(map[string]any)["rsvp"].(map[string]any)["params"].(map[string]any)["requestedSchema"])
	fmt.Println(string(form))
	state, _ := json.Marshal(res["requestState"])
	res = mrtrPost(s, `{"name":"rsvp","inputResponses":{"rsvp":{"action":"accept","content":{"name":"Ada","guests":2}}},"requestState":`+string(state)+`}`, `{"elicitation":{}}`)
	fmt.Println(res["content"])
	// Output:
	// {"properties":{"guests":{"description":"How many people you bring","type":"integer"},"name":{"description":"Your name","type":"string"}},"required":["name"],"type":"object"}
	// [map[text:See you, Ada (+2)! type:text]]
}

// Sample asks the client's model; a request that does not declare sampling
// gets a -32021 error naming the capability.
func ExampleToolRequest_Sample() {
	s := mcp.NewServer(&mcp.ServerOptions{State: mcp.StateOptions{Keys: [][]byte{[]byte("an example key of 32 bytes or more!")}}})
	mcp.AddTool(s, &mcp.Tool{Name: "haiku", Description: "Writes a haiku with the client's model."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			r, err := req.Sample("poem", &mcp.CreateMessageParams{
				Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser,
					Content: []mcp.Content{&mcp.TextContent{Text: "A haiku about Go"}}}},
				MaxTokens: 60,
			})
			if err != nil {
				return "", err
			}
			return r.Text(), nil
		})

	fmt.Println(mrtrPost(s, `{"name":"haiku"}`, `{}`)["error"])
	res := mrtrPost(s, `{"name":"haiku"}`, `{"sampling":{}}`)
	reqs, _ := json.Marshal(res["inputRequests"])
	fmt.Println(string(reqs))
	// Output:
	// {"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"Missing required client capability: sampling (declare it in the request's clientCapabilities)","data":{"requiredCapabilities":{"sampling":{}}}}}
	// {"poem":{"method":"sampling/createMessage","params":{"maxTokens":60,"messages":[{"content":{"text":"A haiku about Go","type":"text"},"role":"user"}]}}}
}

// ParseStateKeys reads keys as MCPKIT_STATE_KEYS and key files hold them.
func ExampleParseStateKeys() {
	keys, err := mcp.ParseStateKeys(`
# new key first; the old one opens state sealed before the rotation
dGhpcyBpcyB0aGUgbmV3IGtleSwgMzIgYnl0ZXMgbG9uZyE=
dGhpcyBpcyB0aGUgb2xkIGtleSwgMzIgYnl0ZXMgbG9uZyE=
`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, k := range keys {
		fmt.Println(string(k))
	}
	_, err = mcp.ParseStateKeys("c2hvcnQ=")
	fmt.Println(err)
	// Output:
	// this is the new key, 32 bytes long!
	// this is the old key, 32 bytes long!
	// state key 1: 5 bytes; a state key needs at least 32
}
