package jsonrpc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// FuzzDecode checks that Decode never panics, that whatever it accepts is a
// well-formed message, and that the responses it makes are valid JSON.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"a":1,"b":{"c":[]}},"\u005fmeta":{"d":"e"},"arguments":{"_meta":{}}}}`,
		`{"params":{"_meta":{"a":1}},"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":5}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`,
		`[{"jsonrpc":"2.0"}]`, `{"jsonrpc":"2.0","id":null}`, `{"\u006aso\u006erpc":"2.0","id":1,"method":"m"}`,
		`{`, `"x"`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, err := jsonrpc.Decode(data)
		if err != nil {
			if err.Code != jsonrpc.CodeParseError && err.Code != jsonrpc.CodeInvalidRequest {
				t.Fatalf("unexpected error code %d", err.Code)
			}
			if err.Code == jsonrpc.CodeParseError && json.Valid(data) && !strings.Contains(err.Message, "deeper") {
				t.Fatalf("valid JSON %q reported as a parse error", data)
			}
			if err.Code == jsonrpc.CodeInvalidRequest && !json.Valid(data) {
				t.Fatalf("invalid JSON %q reported as an invalid request, not a parse error", data)
			}
			if out := jsonrpc.AppendError(nil, msg.ID, err); !json.Valid(out) {
				t.Fatalf("error response is not valid JSON: %s", out)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Decode accepted invalid JSON %q", data)
		}
		switch {
		case msg.IsRequest(), msg.IsNotification():
			if msg.Method == "" {
				t.Fatal("request without method")
			}
			if msg.Params != nil && !json.Valid(msg.Params) {
				t.Fatalf("params span is not JSON: %q", msg.Params)
			}
		case msg.IsResponse():
			if !msg.ID.IsValid() && msg.Error == nil {
				t.Fatal("response without id")
			}
		}
		if out := jsonrpc.AppendResult(nil, msg.ID, []byte(`{}`)); !json.Valid(out) {
			t.Fatalf("result response is not valid JSON: %s", out)
		}
	})
}

// TestWireCodes checks that the codes the internal decoder sends are
// this package's.
func TestWireCodes(t *testing.T) {
	if wire.CodeParseError != jsonrpc.CodeParseError || wire.CodeInvalidRequest != jsonrpc.CodeInvalidRequest {
		t.Errorf("internal/wire codes %d, %d; jsonrpc's %d, %d", wire.CodeParseError, wire.CodeInvalidRequest, jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest)
	}
}
