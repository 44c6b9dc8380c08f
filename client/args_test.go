package client

import (
	"encoding/json"
	"testing"
)

func TestMarshalArgs(t *testing.T) {
	tests := []struct {
		name string
		args any
	}{
		{"nil", nil},
		{"empty", map[string]any{}},
		{"nil map", map[string]any(nil)},
		{"strings", map[string]any{"text": "hello", "b": "<&>\u2028", "a": "\xff"}},
		{"scalars", map[string]any{"n": 42, "m": int64(-7), "t": true, "f": false, "z": nil}},
		{"a float takes json.Marshal", map[string]any{"x": 1e21}},
		{"nested takes json.Marshal", map[string]any{"o": map[string]any{"k": []int{1}}}},
		{"a struct", struct {
			A string `json:"a"`
		}{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := marshalArgs(tt.args)
			want, werr := json.Marshal(tt.args)
			if (err != nil) != (werr != nil) || string(got) != string(want) {
				t.Errorf("marshalArgs(%#v) = %s, %v; json.Marshal gives %s, %v", tt.args, got, err, want, werr)
			}
		})
	}
}

// FuzzMarshalArgs checks marshalArgs against json.Marshal byte for byte.
func FuzzMarshalArgs(f *testing.F) {
	f.Add("text", "hello, benchmark", "n", int64(3), true)
	f.Add("<k>", "\xff\u2028&", "", int64(-1), false)
	f.Fuzz(func(t *testing.T, k1, v1, k2 string, n int64, flag bool) {
		args := map[string]any{k1: v1, k2: n, k1 + k2: flag, k2 + "\x00": nil}
		got, err := marshalArgs(args)
		want, werr := json.Marshal(args)
		if err != nil || werr != nil || string(got) != string(want) {
			t.Fatalf("marshalArgs(%#v) = %s, %v; json.Marshal gives %s, %v", args, got, err, want, werr)
		}
	})
}
