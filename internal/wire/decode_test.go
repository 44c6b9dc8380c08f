package wire_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// FuzzDecodeVisit checks that a Visitor changes nothing about what Decode
// returns, and that the events it gets are the params members, in order.
func FuzzDecodeVisit(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"a":1,"b":{"c":[]}},"\u005fmeta":{"d":"e"},"arguments":{"_meta":{}}}}`,
		`{"params":{"_meta":{"a":1}},"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":5}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`,
		`[{"jsonrpc":"2.0"}]`, `{"jsonrpc":"2.0","id":null}`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, err := wire.Decode(data, nil)
		checkDecodeVisit(t, data, msg, err)
	})
}

// BenchmarkDecodeVisit decodes a server/discover request as clients send
// it, reporting its params.
func BenchmarkDecodeVisit(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if _, err := wire.Decode(data, func(ev wire.Event, key []byte, escaped bool, value []byte) { n++ }); err != nil {
			b.Fatal(err)
		}
	}
}

// checkDecodeVisit checks that Decode with a visitor decodes data exactly
// as without one, and that what it reports about params matches a separate walk of
// them.
func checkDecodeVisit(t *testing.T, data []byte, want wire.Message, wantErr *wire.Error) {
	t.Helper()
	type event = paramsEvent
	var got []event
	msg, err := wire.Decode(data, func(ev wire.Event, key []byte, escaped bool, value []byte) {
		if ev == wire.ParamsStart {
			got = got[:0]
		}
		if ev != wire.ParamsStart {
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
		t.Fatalf("visiting Decode error %v, plain Decode error %v", err, wantErr)
	}
	if string(msg.ID) != string(want.ID) || msg.Method != want.Method || string(msg.Params) != string(want.Params) ||
		string(msg.Result) != string(want.Result) || (msg.Error == nil) != (want.Error == nil) {
		t.Fatalf("visiting Decode message %+v, plain Decode %+v", msg, want)
	}
	if err != nil || msg.Params == nil {
		return
	}
	// The events of the last params must be its members, in order, each
	// _meta object's members first.
	var wantEv []event
	wantEv = append(wantEv, event{ev: wire.ParamsStart})
	wantEv = appendMembers(t, wantEv, wire.ParamsMember, msg.Params)
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
	ev         wire.Event
	key, value string
}

// appendMembers appends an event for each member of obj, read with
// encoding/json; for a ParamsMember named _meta whose value is an object,
// the MetaMember events of its members come first.
func appendMembers(t *testing.T, evs []paramsEvent, ev wire.Event, obj []byte) []paramsEvent {
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
		if ev == wire.ParamsMember && key == "_meta" && len(v) > 0 && v[0] == '{' {
			evs = appendMembers(t, evs, wire.MetaMember, v)
		}
		evs = append(evs, paramsEvent{ev, key, string(v)})
	}
	return evs
}
