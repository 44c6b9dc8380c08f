package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// keyArgs is the input of the tools of the argument key tests.
type keyArgs struct {
	Amount int    `json:"amount"`
	Region string `json:"region"`
	Nested struct {
		V int `json:"v"`
	} `json:"nested"`
}

// keySchema allows other properties, as an explicit schema often does, so
// that only the key check stands between a case variant and the handler.
const keySchema = `{"type":"object","properties":{"amount":{"type":"integer","maximum":10},"region":{"type":"string","enum":["us"]},"nested":{"type":"object","properties":{"v":{"type":"integer","maximum":10}}}}}`

// keyServer returns a server with a typed tool ("typed") and a raw tool
// whose handler decodes with encoding/json ("raw"), both on keySchema, and
// the recorder of the arguments their handlers acted on.
func keyServer() (*Server, *keyRecorder) {
	s := NewServer(&ServerOptions{Info: Implementation{Name: "keys", Version: "1"}})
	rec := &keyRecorder{}
	AddTool(s, &Tool{Name: "typed", Description: "Typed.", InputSchema: keySchema}, func(ctx context.Context, req *ToolRequest, in keyArgs) (string, error) {
		rec.set(in)
		return "ok", nil
	})
	s.AddRawTool(&Tool{Name: "raw", Description: "Raw.", InputSchema: keySchema}, func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) {
		var in keyArgs
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return nil, err
		}
		rec.set(in)
		return textResult("ok"), nil
	})
	return s, rec
}

type keyRecorder struct {
	mu  sync.Mutex
	got *keyArgs
}

func (r *keyRecorder) set(in keyArgs) { r.mu.Lock(); r.got = &in; r.mu.Unlock() }

func (r *keyRecorder) take() *keyArgs {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.got
	r.got = nil
	return g
}

// TestToolArgumentKeys checks that arguments whose meaning depends on how
// keys are matched are refused with an isError result naming the keys,
// without running the handler.
func TestToolArgumentKeys(t *testing.T) {
	s, rec := keyServer()
	tests := []struct {
		args string
		want []string // in the error text; nil: accepted
	}{
		{`{"amount":5,"region":"us"}`, nil},
		{`{"amount":5,"AMOUNT":100000}`, []string{`"AMOUNT"`, `"amount"`, "differs only in case"}},
		{`{"Amount":5}`, []string{`"Amount"`}},
		{`{"region":"us","REGION":"eu"}`, []string{`"REGION"`}},
		{`{"region":"us","region":"eu"}`, []string{`repeated key "region"`}},
		{`{"amount":5,"\u0061mount":50}`, []string{`repeated key "amount"`}},
		{`{"nested":{"v":1,"V":100}}`, []string{`in "nested"`, `"V"`}},
		{`{"nested":{"v":1,"v":100}}`, []string{`in "nested"`, `repeated key "v"`}},
		{`{"other":{"x":1,"x":2}}`, []string{`repeated key "x"`}},
		{`{"other":[{"x":1},{"x":1,"x":2}]}`, []string{`in "other"`, `"[1]"`, `repeated key "x"`}},
		{`{"other":1,"OTHER":2}`, nil}, // neither is declared: nothing to mistake for a validated value
		{`{"region":"us","ʀegion":"eu"}`, nil},
		{`{"amount":1,"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1,"l":1,"m":1,"n":1,"o":1,"p":1,"q":1,"a":2}`, []string{`repeated key "a"`}},
	}
	for _, tool := range []string{"typed", "raw"} {
		for _, tt := range tests {
			res := mustResult(t, s, "tools/call", `{"name":"`+tool+`","arguments":`+tt.args+`}`)
			got := rec.take()
			isErr, _ := res["isError"].(bool)
			if tt.want == nil {
				if isErr || got == nil {
					t.Errorf("%s %s: refused (%v), want accepted", tool, tt.args, res)
				}
				continue
			}
			if !isErr || got != nil {
				t.Errorf("%s %s: handler ran (%+v), want an isError result", tool, tt.args, got)
				continue
			}
			text := res["content"].([]any)[0].(map[string]any)["text"].(string)
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("%s %s: %q does not name %s", tool, tt.args, text, w)
				}
			}
		}
	}
}

// exactDecode decodes a JSON object into the struct v points to matching
// keys exactly, as the validator reads them: the reference for what a
// handler may act on.
func exactDecode(args []byte, v reflect.Value) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return err
	}
	t := v.Type()
	for i := range t.NumField() {
		name, ok := jsonFieldName(t.Field(i))
		if !ok {
			continue
		}
		if name == "" {
			name = t.Field(i).Name
		}
		raw, ok := m[name]
		if !ok || string(raw) == "null" {
			continue
		}
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			if err := exactDecode(raw, f); err != nil {
				return err
			}
			continue
		}
		if err := json.Unmarshal(raw, f.Addr().Interface()); err != nil {
			return err
		}
	}
	return nil
}

// FuzzToolArgumentsActedOnAreValidated checks, for any key casing and
// duplication, that the arguments a handler acts on are the arguments that
// were validated: whenever a handler runs, what it decoded equals the
// arguments read with exact keys, and those satisfy the schema's maximum.
func FuzzToolArgumentsActedOnAreValidated(f *testing.F) {
	for _, s := range []string{
		`{"amount":5,"region":"us"}`, `{"amount":5,"AMOUNT":100000}`, `{"region":"us","REGION":"eu"}`,
		`{"amount":5,"amount":100000}`, `{"amount":5,"\u0041MOUNT":100000}`, `{"nested":{"v":1,"V":100}}`,
		`{"nested":{"v":1},"NESTED":{"v":100}}`, `{"amount":5,"\u212a":1}`, `{"aMoUnT":11}`, `{}`,
	} {
		f.Add(s, "typed")
		f.Add(s, "raw")
	}
	s, rec := keyServer()
	f.Fuzz(func(t *testing.T, args, tool string) {
		if tool != "typed" && tool != "raw" {
			return
		}
		var obj map[string]json.RawMessage
		if !json.Valid([]byte(args)) || json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
			return
		}
		params, _ := json.Marshal(map[string]any{"name": tool, "arguments": json.RawMessage(args)})
		r := call(t, s, "tools/call", string(params))
		got := rec.take()
		if got == nil {
			return
		}
		if r.Error != nil || r.Result["isError"] == true {
			t.Fatalf("%s: the handler ran, yet the call failed: %v %v", args, r.Error, r.Result)
		}
		var want keyArgs
		if err := exactDecode([]byte(args), reflect.ValueOf(&want).Elem()); err != nil {
			t.Fatalf("%s: the handler ran on arguments that do not decode exactly: %v", args, err)
		}
		if diff := cmp.Diff(want, *got); diff != "" {
			t.Fatalf("%s via %s: handler acted on other values than were validated (-validated +acted on):\n%s", args, tool, diff)
		}
		if got.Amount > 10 || got.Nested.V > 10 || (got.Region != "" && got.Region != "us") {
			t.Fatalf("%s via %s: handler got %+v, outside the schema", args, tool, *got)
		}
	})
}

// BenchmarkArgKeysCheck measures the key check on the arguments of
// BenchmarkToolsCall: it must not allocate.
func BenchmarkArgKeysCheck(b *testing.B) {
	k := schemaArgKeys([]byte(`{"type":"object","properties":{"text":{"type":"string"}}}`))
	args := []byte(`{"text":"hello"}`)
	b.ReportAllocs()
	for b.Loop() {
		if k.check(args) != "" {
			b.Fatal("refused")
		}
	}
}
