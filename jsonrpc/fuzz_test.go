package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

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
		checkDecodeVisit(t, data, msg, err)
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

// checkDecodeVisit checks that DecodeVisit decodes data exactly as Decode
// did, and that what it reports about params matches a separate walk of
// them.
func checkDecodeVisit(t *testing.T, data []byte, want jsonrpc.Message, wantErr *jsonrpc.Error) {
	t.Helper()
	type event = paramsEvent
	var got []event
	msg, err := jsonrpc.DecodeVisit(data, func(ev jsonrpc.ParamsEvent, key []byte, escaped bool, value []byte) {
		if ev == jsonrpc.ParamsStart {
			got = got[:0]
		}
		if ev != jsonrpc.ParamsStart {
			// Decoded as encoding/json decodes it (invalid UTF-8
			// becomes U+FFFD), to compare with appendMembers.
			var k string
			if json.Unmarshal([]byte(`"`+string(key)+`"`), &k) != nil {
				t.Fatalf("key %q does not decode", key)
			}
			if escaped != bytes.ContainsRune(key, '\\') {
				t.Fatalf("key %q: escaped is %v", key, escaped)
			}
			key = []byte(k)
		}
		got = append(got, event{ev, string(key), string(value)})
	})
	if (err == nil) != (wantErr == nil) || (err != nil && (err.Code != wantErr.Code || err.Message != wantErr.Message)) {
		t.Fatalf("DecodeVisit error %v, Decode error %v", err, wantErr)
	}
	if string(msg.ID.Raw()) != string(want.ID.Raw()) || msg.Method != want.Method || string(msg.Params) != string(want.Params) ||
		string(msg.Result) != string(want.Result) || (msg.Error == nil) != (want.Error == nil) {
		t.Fatalf("DecodeVisit message %+v, Decode %+v", msg, want)
	}
	if err != nil || msg.Params == nil {
		return
	}
	// The events of the last params must be its members, in order, each
	// _meta object's members first.
	var wantEv []event
	wantEv = append(wantEv, event{ev: jsonrpc.ParamsStart})
	wantEv = appendMembers(t, wantEv, jsonrpc.ParamsMember, msg.Params)
	if len(got) != len(wantEv) {
		t.Fatalf("params %s: events %+v, want %+v", msg.Params, got, wantEv)
	}
	for i := range got {
		if got[i] != wantEv[i] {
			t.Fatalf("params %s: event %d is %+v, want %+v", msg.Params, i, got[i], wantEv[i])
		}
	}
}

type paramsEvent struct {
	ev         jsonrpc.ParamsEvent
	key, value string
}

// appendMembers appends an event for each member of obj, read with
// encoding/json; for a ParamsMember named _meta whose value is an object,
// the MetaMember events of its members come first.
func appendMembers(t *testing.T, evs []paramsEvent, ev jsonrpc.ParamsEvent, obj []byte) []paramsEvent {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("params %s: not an object", obj)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		key := tok.(string)
		if ev == jsonrpc.ParamsMember && key == "_meta" && len(v) > 0 && v[0] == '{' {
			evs = appendMembers(t, evs, jsonrpc.MetaMember, v)
		}
		evs = append(evs, paramsEvent{ev, key, string(v)})
	}
	return evs
}
