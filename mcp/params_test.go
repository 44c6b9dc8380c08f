package mcp

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompleteParamsDecode(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		want         completeParams
		err          string
	}{
		{name: "prompt", params: `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"}}`,
			want: completeParams{refType: "ref/prompt", refName: "p", argument: "a", value: "v", context: map[string]string{}}},
		{name: "resource with context", params: `{"ref":{"type":"ref/resource","uri":"f://{x}"},"argument":{"name":"x","value":""},"context":{"arguments":{"k":"w"}}}`,
			want: completeParams{refType: "ref/resource", refURI: "f://{x}", argument: "x", context: map[string]string{"k": "w"}}},
		{name: "null ref", params: `{"ref":null,"argument":{"name":"a","value":"v"}}`, err: "Invalid params: completion/complete needs a ref object"},
		{name: "argument array", params: `{"ref":{},"argument":[]}`, err: "Invalid params: completion/complete needs an argument object with name and value"},
		{name: "value number", params: `{"ref":{},"argument":{"name":"a","value":1}}`, err: "Invalid params: argument.name and argument.value must be strings"},
		{name: "context string", params: `{"ref":{},"argument":{"name":"a","value":"v"},"context":"x"}`, err: "Invalid params: context must be an object"},
		{name: "context value number", params: `{"ref":{},"argument":{"name":"a","value":"v"},"context":{"arguments":{"k":1}}}`, err: "Invalid params: context.arguments k must be a string"},
		{name: "ref type missing", params: `{"ref":{},"argument":{"name":"a","value":"v"}}`, err: `Invalid params: ref.type must be "ref/prompt" or "ref/resource"`},
		{name: "ref name number", params: `{"ref":{"type":"ref/prompt","name":1},"argument":{"name":"a","value":"v"}}`, err: "Invalid params: ref.name must be a string"},
		{name: "ref uri missing", params: `{"ref":{"type":"ref/resource"},"argument":{"name":"a","value":"v"}}`, err: "Invalid params: ref.uri must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got completeParams
			e := got.decode(&paramReader{raw: []byte(tc.params)})
			if tc.err != "" {
				if e == nil || e.Message != tc.err || e.Code != -32602 {
					t.Fatalf("decode = %v, want -32602 %q", e, tc.err)
				}
				return
			}
			if e != nil {
				t.Fatalf("decode: %v", e)
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(completeParams{})); d != "" {
				t.Errorf("params (-want +got):\n%s", d)
			}
		})
	}
}

func TestReadParamsDecode(t *testing.T) {
	var r readParams
	if e := r.decode(&paramReader{raw: []byte(`{"uri":"a://b"}`)}); e != nil || r.uri != "a://b" {
		t.Fatalf("decode = %v, uri %q", e, r.uri)
	}
	if e := r.decode(&paramReader{raw: []byte(`{"uri":7}`)}); e == nil || e.Message != "Invalid params: resources/read needs a string uri" {
		t.Fatalf("decode of a number uri = %v", e)
	}
}

// FuzzParamsDecode checks that the params decoders answer any params with
// a value or an InvalidParams error, never a panic. Params reach them
// validated (the message decoder rejects malformed JSON first), so only
// valid JSON is fed.
func FuzzParamsDecode(f *testing.F) {
	f.Add([]byte(`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"},"context":{"arguments":{"k":"v"}}}`))
	f.Add([]byte(`{"uri":"a://b"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			t.Skip()
		}
		var c completeParams
		if e := c.decode(&paramReader{raw: b}); e != nil && e.Code != -32602 {
			t.Fatalf("complete: code %d", e.Code)
		}
		var r readParams
		if e := r.decode(&paramReader{raw: b}); e != nil && e.Code != -32602 {
			t.Fatalf("read: code %d", e.Code)
		}
	})
}
