package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// TestHandlerJSONRPCError checks that a *jsonrpc.Error a handler returns,
// directly or wrapped, is answered with its own code, message and data,
// like an *Error, and not as an internal error or an isError result.
func TestHandlerJSONRPCError(t *testing.T) {
	wireErr := &jsonrpc.Error{Code: -32042, Message: "Quota exhausted", Data: json.RawMessage(`{"retryAfter":3}`)}
	for _, wrap := range []struct {
		name string
		err  error
	}{
		{"direct", wireErr},
		{"wrapped", fmt.Errorf("calling upstream: %w", wireErr)},
		{"mcp.Error", &Error{Code: -32042, Message: "Quota exhausted", Data: json.RawMessage(`{"retryAfter":3}`)}},
	} {
		s := NewServer(nil)
		AddTool(s, &Tool{Name: "t", Description: "Fails."},
			func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", wrap.err })
		s.AddResource(&Resource{URI: "test://r", Name: "r"},
			func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) { return nil, wrap.err })
		s.AddPrompt(&Prompt{Name: "p", Description: "Fails."},
			func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) { return nil, wrap.err })
		for _, req := range []struct{ method, params string }{
			{"tools/call", `{"name":"t","arguments":{}}`},
			{"resources/read", `{"uri":"test://r"}`},
			{"prompts/get", `{"name":"p"}`},
		} {
			t.Run(wrap.name+"/"+req.method, func(t *testing.T) {
				r := call(t, s, req.method, req.params)
				want := &rpcError{Code: -32042, Message: "Quota exhausted", Data: json.RawMessage(`{"retryAfter":3}`)}
				if diff := cmp.Diff(want, r.Error); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				if r.Status != http.StatusOK {
					t.Errorf("HTTP status %d, want 200 (an application code)", r.Status)
				}
			})
		}
	}
}

// TestErrorHTTPStatus pins the one status table.
func TestErrorHTTPStatus(t *testing.T) {
	tests := []struct {
		err  *Error
		want int
	}{
		{&Error{Code: jsonrpc.CodeParseError}, 400},
		{&Error{Code: jsonrpc.CodeInvalidRequest}, 400},
		{&Error{Code: jsonrpc.CodeMethodNotFound}, 404},
		{InvalidParams("x"), 400},
		{ResourceNotFound("test://x"), 400},
		{MissingCapability(ClientCapabilities{}), 400},
		{&Error{Code: CodeHeaderMismatch}, 400},
		{&Error{Code: CodeUnsupportedVersion}, 400},
		{&Error{Code: jsonrpc.CodeInternalError}, 500},
		{InsufficientScope("files:write"), 403},
		{&Error{Code: -32042}, 200},
		{errBodyTooLarge, 413},
	}
	for _, tt := range tests {
		if got := tt.err.HTTPStatus(); got != tt.want {
			t.Errorf("%d %q: status %d, want %d", tt.err.Code, tt.err.Message, got, tt.want)
		}
	}
}
