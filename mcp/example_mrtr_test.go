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
		Name: "files", Version: "1.0.0",
		// Replicas share their keys; see docs/mrtr.md.
		StateKeys: [][]byte{[]byte("an example key of 32 bytes or more!")},
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
	res := mrtrPost(s, `{"name":"delete","arguments":{"path":"notes.txt"}}`)
	fmt.Println(res["resultType"])
	reqs, _ := json.Marshal(res["inputRequests"])
	fmt.Println(string(reqs))

	// Round 2: the same call with the user's answer and the echoed state.
	state, _ := json.Marshal(res["requestState"])
	res = mrtrPost(s, `{"name":"delete","arguments":{"path":"notes.txt"},
		"inputResponses":{"confirm":{"action":"accept","content":{"sure":true}}},
		"requestState":`+string(state)+`}`)
	fmt.Println(res["resultType"], res["content"])
	// Output:
	// input_required
	// {"confirm":{"method":"elicitation/create","params":{"message":"Delete notes.txt?","mode":"form","requestedSchema":{"properties":{"sure":{"type":"boolean"}},"required":["sure"],"type":"object"}}}}
	// complete [map[text:Deleted notes.txt. type:text]]
}

// mrtrPost sends a tools/call with params (a JSON object without _meta) to s
// over Streamable HTTP and returns the result object.
func mrtrPost(s *mcp.Server, params string) map[string]any {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	params = strings.TrimSpace(params)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params[:len(params)-1] + "," + meta + "}}"
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", "delete")
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
