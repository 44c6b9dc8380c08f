package mcp

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// decodeFresh decodes line from scratch, as the stdio reader did before it
// had a decodeCache.
func decodeFresh(line []byte) (jsonrpc.Message, metaVisitor, *jsonrpc.Error) {
	var mv metaVisitor
	msg, derr := decodeVisit(line, mv.visit)
	if derr == nil {
		mv.finish(msg.Params)
	}
	return msg, mv, derr
}

// inReaderBuffer returns a copy of line in an array with room after it, as
// a line the stdio reader read lies in its buffer.
func inReaderBuffer(line string) []byte {
	b := make([]byte, len(line), len(line)+64)
	copy(b, line)
	return b
}

// checkSpansOutside fails when a byte slice anywhere in v (structs,
// pointers, arrays, unexported fields included) points into buf.
func checkSpansOutside(t *testing.T, what string, v reflect.Value, buf []byte) {
	t.Helper()
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf[:cap(buf)])))
	hi := lo + uintptr(cap(buf))
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(path, v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
		case reflect.Array:
			for i := range v.Len() {
				walk(path, v.Index(i))
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				if p := uintptr(v.UnsafePointer()); v.Cap() > 0 && p >= lo && p < hi {
					t.Errorf("%s%s points into the reader's buffer", what, path)
				}
				return
			}
			for i := range v.Len() {
				walk(path, v.Index(i))
			}
		}
	}
	walk("", v)
}

// checkNoSpans fails when a byte slice anywhere in v is not nil.
func checkNoSpans(t *testing.T, v reflect.Value) {
	t.Helper()
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(path, v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
		case reflect.Array:
			for i := range v.Len() {
				walk(path, v.Index(i))
			}
		case reflect.Slice:
			if !v.IsNil() {
				t.Errorf("the decode cache keeps %s%s", v.Type(), path)
			}
		}
	}
	walk("", v)
}

// ownCases are requests with every span reqMeta holds.
var ownCases = []struct{ name, line string }{
	{"tools/call with every _meta member", `{"jsonrpc":"2.0","id":"a1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"inputResponses":{},"requestState":"s","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/logLevel":"info","progressToken":7,"trace":"x"}}}`},
	{"resources/read", `{"params":{"uri":"file:///a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}},"method":"resources/read","id":12,"jsonrpc":"2.0"}`},
	{"tasks/get", `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`},
	{"a response", `{"jsonrpc":"2.0","id":3,"result":{"x":1}}`},
	{"an error response", `{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"m","data":{"d":1}}}`},
	{"a notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a1"}}`},
	{"no params", `{"jsonrpc":"2.0","id":4,"method":"ping"}`},
}

// TestStdioCallOwnsSpans checks that a request handed to a worker keeps no
// span of the reader's buffer (which the next read overwrites): own moves
// every byte slice of the message and of its _meta onto the copy, and they
// read as before.
func TestStdioCallOwnsSpans(t *testing.T) {
	for _, tt := range ownCases {
		t.Run(tt.name, func(t *testing.T) {
			line := inReaderBuffer(tt.line)
			msg, mv, derr := decodeFresh(line)
			if derr != nil {
				t.Fatal(derr)
			}
			want, wantMV, _ := decodeFresh([]byte(tt.line))
			call := &stdioCall{line: bytes.Clone(line)}
			if !call.own(line, &msg, &mv) {
				t.Fatal("own refused spans of the line they were decoded from")
			}
			for i := range line[:cap(line)] {
				line[:cap(line)][i] = '#' // the reader reads on
			}
			checkSpansOutside(t, "msg", reflect.ValueOf(&msg), line)
			checkSpansOutside(t, "mv", reflect.ValueOf(&mv), line)
			if !reflect.DeepEqual(msg, want) {
				t.Errorf("message after own = %+v, want %+v", msg, want)
			}
			if !reflect.DeepEqual(mv.rm, wantMV.rm) || mv.err != wantMV.err || !mv.done {
				t.Errorf("_meta after own = %+v, want %+v", mv.rm, wantMV.rm)
			}
		})
	}
	t.Run("a span outside the line", func(t *testing.T) {
		line := inReaderBuffer(ownCases[0].line)
		msg, mv, _ := decodeFresh(line)
		before := msg
		msg.Params = []byte(`{}`)
		call := &stdioCall{line: bytes.Clone(line)}
		if call.own(line, &msg, &mv) {
			t.Fatal("own accepted a span that is not inside the line")
		}
		if &msg.Params[0] == &before.Params[0] || msg.ID.String() != before.ID.String() {
			t.Error("own changed the message it refused")
		}
	})
}

// checkCached fails unless dc.decode(line) gives what decoding line from
// scratch gives.
func checkCached(t *testing.T, dc *decodeCache, line []byte) {
	t.Helper()
	want, wantMV, wantErr := decodeFresh(bytes.Clone(line))
	var msg jsonrpc.Message
	var mv metaVisitor
	derr := dc.decode(line, &msg, &mv)
	if (derr == nil) != (wantErr == nil) || (derr != nil && !reflect.DeepEqual(derr, wantErr)) {
		t.Fatalf("decode(%q) error %v, want %v", line, derr, wantErr)
	}
	if derr != nil {
		return
	}
	if dc.line != nil && &dc.line[0] != &line[0] {
		// The cache's copy is overwritten by the next request it keeps.
		checkSpansOutside(t, "msg", reflect.ValueOf(&msg), dc.line)
		checkSpansOutside(t, "mv", reflect.ValueOf(&mv), dc.line)
	}
	if !reflect.DeepEqual(msg, want) {
		t.Fatalf("decode(%q) = %+v, want %+v", line, msg, want)
	}
	// What the cache keeps besides its copy holds no span (a span it
	// does not move on a hit would point into an old line).
	checkNoSpans(t, reflect.ValueOf(dc.rm))
	if !reflect.DeepEqual(mv.rm, wantMV.rm) || !reflect.DeepEqual(mv.err, wantMV.err) || !mv.done {
		t.Fatalf("decode(%q) _meta = %+v (err %v), want %+v (err %v)", line, mv.rm, mv.err, wantMV.rm, wantMV.err)
	}
	for _, key := range []string{"name", "uri", "taskId", "arguments", "inputResponses", "requestState", "other"} {
		got, gok := mv.rm.p.lookup(msg.Params, key)
		w, wok := wantMV.rm.p.lookup(want.Params, key)
		if gok != wok || !bytes.Equal(got, w) {
			t.Fatalf("decode(%q): params %q = %q, want %q", line, key, got, w)
		}
	}
	if !bytes.Equal(mv.rm.extraMeta(msg.Params), wantMV.rm.extraMeta(want.Params)) {
		t.Fatalf("decode(%q): extra _meta = %q, want %q", line, mv.rm.extraMeta(msg.Params), wantMV.rm.extraMeta(want.Params))
	}
}

// TestStdioDecodeCache checks the remembered request against decoding
// from scratch: for requests that differ from the previous one only in
// their id (the shortcut), and for lines that differ elsewhere, or whose
// id cannot take the shortcut.
func TestStdioDecodeCache(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":7,"trace":"x"}}}`
	const last = `{"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}},"jsonrpc":"2.0","id":ID}`
	id := func(tmpl, id string) []byte {
		return inReaderBuffer(string(bytes.Replace([]byte(tmpl), []byte("ID"), []byte(id), 1)))
	}
	tests := []struct {
		name  string
		lines [][]byte
		hits  []bool // whether each line is answered from the cache
	}{
		{"the next ids", [][]byte{id(call, "1"), id(call, "2"), id(call, "1000"), id(call, `"s"`), id(call, "-3"), id(call, "0")}, []bool{false, true, true, true, true, true}},
		{"the id last", [][]byte{id(last, "1"), id(last, "22"), id(last, `"x y"`)}, []bool{false, true, true}},
		{"ids the shortcut leaves to the decoder", [][]byte{id(call, "1"), id(call, "01"), id(call, "1.5"), id(call, "1e3"), id(call, "null"), id(call, `"a\"b"`), id(call, `"\u0041"`), id(call, `"a`), id(call, `{}`), id(call, "true"), id(call, ""), id(call, " 2"), id(call, "2 ")}, []bool{false, false, false, false, false, false, false, false, false, false, false, false, false}},
		{"other params", [][]byte{id(call, "1"), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ho"}}}`)}, []bool{false, false}},
		{"a broken _meta is not remembered", [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":1}}`), []byte(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":1}}`)}, []bool{false, false}},
		{"notifications are not remembered", [][]byte{[]byte(`{"jsonrpc":"2.0","method":"notifications/x"}`), []byte(`{"jsonrpc":"2.0","method":"notifications/x"}`)}, []bool{false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dc decodeCache
			for i, line := range tt.lines {
				var msg jsonrpc.Message
				var mv metaVisitor
				if hit := dc.hit(line, &msg, &mv); hit != tt.hits[i] {
					t.Errorf("line %d %s: answered from the cache %v, want %v", i, line, hit, tt.hits[i])
				}
				checkCached(t, &dc, line)
			}
		})
	}
}

// FuzzStdioDecodeCache checks the decode cache against decoding from
// scratch: after line a, line a with its id replaced by id, and line b,
// must decode as they decode without a cache.
func FuzzStdioDecodeCache(f *testing.F) {
	for _, c := range ownCases {
		f.Add([]byte(c.line), []byte("99"), []byte(c.line))
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), []byte(`"x"`), []byte(`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"x":1}}`))
	f.Add([]byte(`{"id":1,"id":2,"jsonrpc":"2.0","method":"m"}`), []byte(`3`), []byte(`{"id":1,"id":3,"jsonrpc":"2.0","method":"m"}`))
	f.Fuzz(func(t *testing.T, a, id, b []byte) {
		var dc decodeCache
		checkCached(t, &dc, inReaderBuffer(string(a)))
		if spliced, ok := spliceID(a, id); ok {
			checkCached(t, &dc, inReaderBuffer(string(spliced)))
		}
		checkCached(t, &dc, inReaderBuffer(string(b)))
	})
}

// spliceID returns line with the value of its id replaced by id, when line
// decodes with an id.
func spliceID(line, id []byte) ([]byte, bool) {
	line = bytes.Clone(line)
	msg, _, err := decodeFresh(line)
	if err != nil || !msg.ID.IsValid() {
		return nil, false
	}
	start, ok := spanOffset(line, msg.ID.Raw())
	if !ok {
		return nil, false
	}
	end := start + len(msg.ID.Raw())
	return append(append(append([]byte(nil), line[:start]...), id...), line[end:]...), true
}
