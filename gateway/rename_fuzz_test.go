package gateway

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// FuzzRename checks the sanitizer of backends' lists: whatever a backend
// lists, rename never panics, and every tool it keeps is a JSON object
// whose name is the backend's prefix and a name the revision allows, at
// most MaxNameLen long, and not a denied tool.
func FuzzRename(f *testing.F) {
	for _, s := range []string{
		`[{"name":"ok"},{"name":"bad name"},{"nope":1}]`,
		`[{"name":"x","name":"y"}]`,
		`{"name":"not a list"}`,
		`[{"name":"deny"},{"name":"` + strings.Repeat("z", 70) + `"}]`,
		`null`, `[]`, `[null,1,"s"]`,
	} {
		f.Add([]byte(s))
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.Fuzz(func(t *testing.T, raw []byte) {
		b := &backend{name: "a", deny: set([]string{"deny"})}
		r := &router{log: quiet, backends: []*backend{b}, named: map[string]*backend{"a": b}}
		items, err := r.rename(b, "tools", kindTool, raw)
		if err != nil {
			return
		}
		for _, it := range items {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(it, &m); err != nil {
				t.Fatalf("kept item %s is not an object: %v", it, err)
			}
			var name string
			if err := json.Unmarshal(m["name"], &name); err != nil {
				t.Fatalf("kept item %s has no string name", it)
			}
			if !strings.HasPrefix(name, "a_") || len(name) > MaxNameLen || !nameChars.MatchString(name) || name == "a_deny" {
				t.Fatalf("kept name %q", name)
			}
		}
	})
}
