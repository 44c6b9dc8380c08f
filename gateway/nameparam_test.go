package gateway

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// TestNameParam checks the name nameParam reads from tools/call params and
// the params it writes back with another name: the rest byte for byte.
func TestNameParam(t *testing.T) {
	tests := []struct {
		params, name, renamed, err string
	}{
		{params: `{"name":"a_t","arguments":{"x":1}}`, name: "a_t", renamed: `{"name":"t","arguments":{"x":1}}`},
		{params: ` { "arguments" : {"name":"no"} , "name" : "a_t" , "_meta":{} } `, name: "a_t", renamed: ` { "arguments" : {"name":"no"} , "name" : "t" , "_meta":{} } `},
		// A repeated key: decoded and encoded again, one name only.
		{params: `{"name":"a_\u00e9","arguments":{},"name":"a_t"}`, name: "a_t", renamed: `{"arguments":{},"name":"t"}`},
		{params: `{"n\u0061me":"b_secret","name":"a_t"}`, name: "a_t", renamed: `{"name":"t"}`},
		{params: `{"name":"a_\u00e9"}`, name: "a_é", renamed: `{"name":"t"}`},
		{params: `{"name":""}`, err: "Invalid params: name must be a non-empty string"},
		{params: `{"name":1}`, err: "Invalid params: name must be a non-empty string"},
		{params: `{}`, err: "Invalid params: name must be a non-empty string"},
		{params: ``, err: "Invalid params: name must be a non-empty string"},
		{params: `null`, err: "Invalid params: name must be a non-empty string"},
		{params: `["name"]`, err: "Invalid params: params must be an object"},
	}
	for _, tt := range tests {
		name, rename, err := nameParam([]byte(tt.params))
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("nameParam(%s): err %v, want %q", tt.params, err, tt.err)
			}
			continue
		}
		if err != nil || name != tt.name {
			t.Errorf("nameParam(%s) = %q, %v; want %q", tt.params, name, err, tt.name)
			continue
		}
		if got := string(rename("t")); got != tt.renamed {
			t.Errorf("nameParam(%s) renamed to %s, want %s", tt.params, got, tt.renamed)
		}
	}
}

// FuzzNameParam checks nameParam against encoding/json: the same name, and
// params renamed that decode to the same object with the name replaced.
func FuzzNameParam(f *testing.F) {
	f.Add([]byte(`{"name":"a_t","arguments":{"x":[1,"y"]},"_meta":{"k":null}}`))
	f.Add([]byte(`{"name":"x","name":"a_\u0074"}`))
	f.Add([]byte(`{"n\u0061me":"x","name":"a_t"}`))
	f.Add([]byte(`{"arguments":{"name":"n"}}`))
	f.Fuzz(func(t *testing.T, params []byte) {
		var m map[string]json.RawMessage
		if !json.Valid(params) || !utf8.Valid(params) || json.Unmarshal(params, &m) != nil || m == nil {
			// The front refuses what is not JSON; non-objects are covered by the
			// table; a name with invalid UTF-8 (which encoding/json reads with
			// U+FFFD) is no tool's name either way (nameChars).
			return
		}
		var want string
		wantOK := json.Unmarshal(m["name"], &want) == nil && want != ""
		name, rename, err := nameParam(params)
		if (err == nil) != wantOK || name != want {
			t.Fatalf("nameParam(%s) = %q, %v; encoding/json reads %q", params, name, err, want)
		}
		if err != nil {
			return
		}
		renamed := rename("renamed_x")
		// No key repeats in what a backend gets: one that reads the first
		// of repeated keys would see another name than the one routed.
		it, _ := jsonscan.Object(renamed)
		seen := map[string]bool{}
		var mem jsonscan.Member
		for it.Next(&mem) {
			k, _ := jsonscan.String([]byte(`"` + string(mem.Key) + `"`))
			if seen[k] {
				t.Fatalf("renamed params %s repeat the key %q", renamed, k)
			}
			seen[k] = true
		}
		var got map[string]any
		if err := json.Unmarshal(renamed, &got); err != nil {
			t.Fatalf("renamed params %s: %v", rename("renamed_x"), err)
		}
		var wantMap map[string]any
		json.Unmarshal(params, &wantMap)
		wantMap["name"] = "renamed_x"
		if diff := cmp.Diff(wantMap, got); diff != "" {
			t.Fatalf("renamed params of %s (-want +got):\n%s", params, diff)
		}
	})
}
