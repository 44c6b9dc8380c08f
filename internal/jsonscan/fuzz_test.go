package jsonscan

import (
	"encoding/json"
	"testing"
)

// FuzzValid compares Valid with encoding/json.Valid, the reference, on
// every input that does not nest deeper than MaxDepth; and checks that the
// walking functions stay within bounds on valid input.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2.5e-3,"x\u00e9",true,false,null]}`, `"\ud800"`, `-0`, `01`, `1.`, `{"a" 1}`, "\"\x01\"", ` {"a":{"b":{}}} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, want := Valid(b), json.Valid(b)
		if TooDeep(b) {
			if got {
				t.Fatalf("Valid accepted input deeper than %d", MaxDepth)
			}
			return
		}
		if got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
		if !got {
			return
		}
		if it, ok := Object(b); ok {
			var m Member
			for it.Next(&m) {
				if !json.Valid(m.Value) {
					t.Fatalf("member %q value %q is not JSON", m.Key, m.Value)
				}
			}
		}
	})
}

func TestValid(t *testing.T) {
	deep := make([]byte, 0, 2*(MaxDepth+1))
	for range MaxDepth + 1 {
		deep = append(deep, '[')
	}
	for range MaxDepth + 1 {
		deep = append(deep, ']')
	}
	tests := []struct {
		in   string
		want bool
	}{
		{`{"a":1}`, true},
		{`{"a":1,}`, false},
		{`[1 2]`, false},
		{`"\q"`, false},
		{`"\u12"`, false},
		{"\"a\tb\"", false},
		{`1e5`, true},
		{`-`, false},
		{`nul`, false},
		{`{} {}`, false},
		{string(deep[1 : len(deep)-1]), true},
		{string(deep), false},
	}
	for _, tt := range tests {
		if got := Valid([]byte(tt.in)); got != tt.want {
			t.Errorf("Valid(%.40q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
