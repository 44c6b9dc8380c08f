package mcp

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

type argsAll struct {
	S     string  `json:"s"`
	B     bool    `json:"b,omitempty"`
	I     int     `json:"i"`
	I8    int8    `json:"i8"`
	U16   uint16  `json:"u16"`
	F32   float32 `json:"f32"`
	F     float64 `json:"f"`
	Plain string
	Skip  string `json:"-"`
	Level LogLevel
	priv  string //lint:ignore U1000 an unexported field, which decoding must leave alone
}

type argsText struct{ T textArg }
type textArg string

func (t *textArg) UnmarshalText(b []byte) error { *t = textArg("x" + string(b)); return nil }

type argsEmbedded struct {
	argsAll
	X string
}

type argsStringOpt struct {
	N int `json:"n,string"`
}

type argsFold struct {
	A string `json:"a"`
	B string `json:"A"`
}

// TestArgDecoderShapes checks which input types take the fast path.
func TestArgDecoderShapes(t *testing.T) {
	tests := []struct {
		typ  reflect.Type
		fast bool
	}{
		{reflect.TypeFor[argsAll](), true},
		{reflect.TypeFor[struct{}](), true},
		{reflect.TypeFor[argsText](), false},
		{reflect.TypeFor[argsEmbedded](), false},
		{reflect.TypeFor[argsStringOpt](), false},
		{reflect.TypeFor[argsFold](), false},
		{reflect.TypeFor[struct{ M map[string]any }](), false},
		{reflect.TypeFor[struct{ P *string }](), false},
		{reflect.TypeFor[struct {
			N string `json:"a-b"`
		}](), false},
		{reflect.TypeFor[map[string]any](), false},
	}
	for _, tt := range tests {
		if got := newArgDecoder(tt.typ) != nil; got != tt.fast {
			t.Errorf("%v: fast path %v, want %v", tt.typ, got, tt.fast)
		}
	}
}

// FuzzArgDecoder checks that both ways AddTool decodes arguments match
// keys exactly: wherever the fast argument decoder succeeds, and wherever
// the key check lets encoding/json decode, the value is the one decoded
// with exact keys (exactDecode), never one that a case variant or a
// repeated key put there.
func FuzzArgDecoder(f *testing.F) {
	for _, s := range []string{
		`{"s":"hello","b":true,"i":-3,"i8":127,"u16":65535,"f32":1.5,"f":-2e-3,"Plain":"p","Level":"debug"}`,
		`{"s":"a","s":"b"}`, `{"i8":128}`, `{"u16":-1}`, `{"i":1.0}`, `{"s":"\u00e9"}`, "{\"s\":\"\xff\"}",
		`{"S":"x"}`, `{"plain":"x"}`, `{"s":null}`, `{"b":1}`, `{"f32":1e39}`, `{"Skip":"x"}`, `{"priv":"x"}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	d := newArgDecoder(reflect.TypeFor[argsAll]())
	keys := &argKeys{}
	addTypeKeys(keys, reflect.TypeFor[argsAll](), map[reflect.Type]bool{})
	f.Fuzz(func(t *testing.T, args []byte) {
		if !json.Valid(args) {
			return
		}
		var fast argsAll
		fastOK := d.decode(args, reflect.ValueOf(&fast).Elem())
		var want argsAll
		exactErr := exactDecode(args, reflect.ValueOf(&want).Elem())
		if fastOK {
			if exactErr != nil {
				t.Fatalf("fast path decoded %s, an exact decode fails: %v", args, exactErr)
			}
			if diff := cmp.Diff(want, fast, cmp.AllowUnexported(argsAll{})); diff != "" {
				t.Fatalf("%s (-exact +fast):\n%s", args, diff)
			}
		}
		if jsonscan.Kind(args) != '{' || keys.check(args) != "" {
			return // refused before decoding
		}
		var slow argsAll
		if err := json.Unmarshal(args, &slow); err != nil || exactErr != nil {
			if (err == nil) != (exactErr == nil) {
				t.Fatalf("%s: encoding/json error %v, exact decode error %v", args, err, exactErr)
			}
			return
		}
		if diff := cmp.Diff(want, slow, cmp.AllowUnexported(argsAll{})); diff != "" {
			t.Fatalf("%s (-exact +encoding/json):\n%s", args, diff)
		}
	})
}
