package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/internal/wire"
)

// Helpers for the tests of tools, resources, prompts and completion: they
// send requests through Server.Handle, the seam every transport uses.

// rpcError is a decoded JSON-RPC error.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// rpcReply is a decoded response with its HTTP status and the
// notifications sent before it.
type rpcReply struct {
	Status        int
	Result        map[string]any
	Error         *rpcError
	Notifications []map[string]any
}

// withMeta splices _meta (with extra members, an encoded list like
// `"progressToken":1`) into params, a JSON object or "".
func withMeta(params, extra string) string {
	return mcpwire.Request{Params: params, Meta: extra}.ParamsJSON()
}

func decodeMsg(tb testing.TB, body []byte) jsonrpc.Message {
	tb.Helper()
	msg, err := jsonrpc.Decode(body)
	if err != nil {
		tb.Fatalf("decoding %s: %v", body, err)
	}
	return msg
}

// collector is a Notifier that keeps what it receives.
type collector struct {
	mu   sync.Mutex
	msgs [][]byte
}

func (c *collector) Notify(msg []byte) {
	c.mu.Lock()
	c.msgs = append(c.msgs, append([]byte(nil), msg...))
	c.mu.Unlock()
}

// callCtx sends method with params (a JSON object without _meta) and the
// extra _meta members through s.Handle.
func callCtx(tb testing.TB, ctx context.Context, s *Server, method, params, extraMeta string) rpcReply {
	tb.Helper()
	msg := decodeMsg(tb, mcpwire.Request{ID: "7", Method: method, Params: params, Meta: extraMeta}.Bytes())
	var c collector
	out, status := s.Handle(ctx, nil, &Incoming{Message: &msg}, &c)
	var resp struct {
		ID     json.RawMessage `json:"id"`
		Result map[string]any  `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		tb.Fatalf("%s: response is not JSON: %v: %s", method, err, out)
	}
	if string(resp.ID) != "7" {
		tb.Fatalf("%s: response id %s, want 7", method, resp.ID)
	}
	r := rpcReply{Status: status, Result: resp.Result, Error: resp.Error}
	for _, m := range c.msgs {
		var n map[string]any
		if err := json.Unmarshal(m, &n); err != nil {
			tb.Fatalf("notification is not JSON: %s", m)
		}
		r.Notifications = append(r.Notifications, n)
	}
	return r
}

func call(tb testing.TB, s *Server, method, params string) rpcReply {
	tb.Helper()
	return callCtx(tb, context.Background(), s, method, params, "")
}

// mustResult calls and fails unless the response is a result; it returns
// the result without _meta.
func mustResult(tb testing.TB, s *Server, method, params string) map[string]any {
	tb.Helper()
	r := call(tb, s, method, params)
	if r.Error != nil {
		tb.Fatalf("%s %s: error %d %s", method, params, r.Error.Code, r.Error.Message)
	}
	delete(r.Result, "_meta")
	return r.Result
}

// mustError calls and fails unless the response is an error.
func mustError(tb testing.TB, s *Server, method, params string) *rpcError {
	tb.Helper()
	r := call(tb, s, method, params)
	if r.Error == nil {
		tb.Fatalf("%s %s: got result %v, want an error", method, params, r.Result)
	}
	return r.Error
}

func cursorMember(c string) string {
	if c == "" {
		return ""
	}
	return `"cursor":` + string(wire.AppendString(nil, c)) + ","
}

func cursorParams(c string) string {
	if c == "" {
		return "{}"
	}
	return `{"cursor":` + string(wire.AppendString(nil, c)) + `}`
}

// names returns the given member of each object in the list field of a
// result.
func names(res map[string]any, field, member string) []string {
	var out []string
	list, _ := res[field].([]any)
	for _, it := range list {
		m, _ := it.(map[string]any)
		s, _ := m[member].(string)
		out = append(out, s)
	}
	return out
}

func mustUnmarshal(tb testing.TB, b []byte, v any) {
	tb.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("decoding %s: %v", b, err)
	}
}
