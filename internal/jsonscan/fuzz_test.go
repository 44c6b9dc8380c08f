package jsonscan

import (
	"encoding/json"
	"testing"
)

// FuzzValid compares Valid with encoding/json.Valid, the reference, on
// every input that does not nest deeper than MaxDepth; and checks that the
// walking functions stay within bounds on valid input.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2.5e-3,"x\u00e9",true,false,null]}`, `"\ud800"`, `-0`, `01`, `1.`, `{"a" 1}`, "\"\x01\"", ` {"a":{"b":{}}} `, `{"a":{"b":1,"c":{"d":[]}},"e":2}`, `{"_meta":{},"_meta":{"x":1}}`, `{"k\u0065y":{"\"":1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, want := Valid(b), json.Valid(b)
		if Kind(b) == '{' {
			// The validating walk, entering every object value in place,
			// must agree with Valid.
			c := CheckObject(b)
			if walked := walkChecked(&c); walked != got {
				t.Fatalf("validating walk of %q reports %v, Valid %v", b, walked, got)
			}
		}
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
			var keys [][]byte
			var values [][]byte
			for it.Next(&m) {
				if !json.Valid(m.Value) {
					t.Fatalf("member %q value %q is not JSON", m.Key, m.Value)
				}
				keys, values = append(keys, m.Key), append(values, m.Value)
			}
			// Walking object values in place with Enter/Leave must see the
			// same members as Next, and the inner members of each object.
			it2, _ := Object(b)
			n := 0
			for it2.NextKey(&m) {
				if string(m.Key) != string(keys[n]) {
					t.Fatalf("NextKey %q, Next %q", m.Key, keys[n])
				}
				if inner, ok := it2.Enter(); ok {
					want, _ := Object(values[n])
					var a, c Member
					for inner.Next(&a) {
						if !want.Next(&c) || string(a.Key) != string(c.Key) || string(a.Value) != string(c.Value) {
							t.Fatalf("inner member %q:%q differs", a.Key, a.Value)
						}
					}
					it2.Leave(&inner)
				} else if n%2 == 0 { // alternate between consuming and not consuming
					if v := it2.Value(); string(v) != string(values[n]) {
						t.Fatalf("Value %q, Next %q", v, values[n])
					}
				}
				n++
			}
			if n != len(keys) {
				t.Fatalf("NextKey saw %d members, Next %d", n, len(keys))
			}
		}
	})
}

// walkChecked walks c to its end, entering object values (and alternately
// leaving the values of other members pending for NextKey to validate),
// and reports whether the walk was valid.
func walkChecked(c *Checked) bool {
	var m Member
	n := 0
	for c.NextKey(&m) {
		if inner, ok := c.Enter(); ok {
			walkChecked(&inner)
			c.Leave(&inner)
		} else if n%2 == 0 {
			c.Value()
		}
		n++
	}
	return c.Valid()
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
