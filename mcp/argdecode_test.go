package mcp

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	priv  string
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

// FuzzArgDecoder checks that wherever the fast argument decoder succeeds,
// encoding/json succeeds with the same value.
func FuzzArgDecoder(f *testing.F) {
	for _, s := range []string{
		`{"s":"hello","b":true,"i":-3,"i8":127,"u16":65535,"f32":1.5,"f":-2e-3,"Plain":"p","Level":"debug"}`,
		`{"s":"a","s":"b"}`, `{"i8":128}`, `{"u16":-1}`, `{"i":1.0}`, `{"s":"\u00e9"}`, "{\"s\":\"\xff\"}",
		`{"S":"x"}`, `{"plain":"x"}`, `{"s":null}`, `{"b":1}`, `{"f32":1e39}`, `{"Skip":"x"}`, `{"priv":"x"}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	d := newArgDecoder(reflect.TypeFor[argsAll]())
	f.Fuzz(func(t *testing.T, args []byte) {
		if !json.Valid(args) {
			return
		}
		var got argsAll
		if !d.decode(args, reflect.ValueOf(&got).Elem()) {
			return
		}
		var want argsAll
		if err := json.Unmarshal(args, &want); err != nil {
			t.Fatalf("fast path decoded %s, encoding/json fails: %v", args, err)
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(argsAll{})); diff != "" {
			t.Fatalf("%s (-json +fast):\n%s", args, diff)
		}
	})
}
