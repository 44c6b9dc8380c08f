package mcp_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/mcp"
)

func TestChangeText(t *testing.T) {
	tests := []struct {
		text string
		want mcp.Change
		ok   bool
	}{
		{"notifications/tools/list_changed", mcp.Change{Kind: mcp.ToolsListChanged}, true},
		{"notifications/prompts/list_changed", mcp.Change{Kind: mcp.PromptsListChanged}, true},
		{"notifications/resources/list_changed", mcp.Change{Kind: mcp.ResourcesListChanged}, true},
		{"notifications/resources/updated file:///a b.txt", mcp.Change{Kind: mcp.ResourceUpdated, URI: "file:///a b.txt"}, true},
		{"notifications/resources/updated", mcp.Change{}, false},    // no URI
		{"notifications/tools/list_changed x", mcp.Change{}, false}, // a URI where none belongs
		{"notifications/progress", mcp.Change{}, false},             // not a change
		{"", mcp.Change{}, false},
		{`@"iss alice" notifications/tools/list_changed`, mcp.Change{Kind: mcp.ToolsListChanged, Scope: "iss alice"}, true},
		{`@"iss \"b\"" notifications/resources/updated file:///a`, mcp.Change{Kind: mcp.ResourceUpdated, URI: "file:///a", Scope: `iss "b"`}, true},
		{`@"" notifications/tools/list_changed`, mcp.Change{}, false},      // an empty scope is written without @
		{`@"a"notifications/tools/list_changed`, mcp.Change{}, false},      // no space
		{`@"\x61" notifications/tools/list_changed`, mcp.Change{}, false},  // not the canonical quoting
		{`@"a notifications/tools/list_changed`, mcp.Change{}, false},      // unterminated
		{`@"a" "b" notifications/tools/list_changed`, mcp.Change{}, false}, // two scopes
		{`@"a" notifications/resources/updated`, mcp.Change{}, false},      // no URI
	}
	for _, tt := range tests {
		var c mcp.Change
		err := c.UnmarshalText([]byte(tt.text))
		if (err == nil) != tt.ok {
			t.Errorf("UnmarshalText(%q): err %v, want ok=%v", tt.text, err, tt.ok)
			continue
		}
		if !tt.ok {
			continue
		}
		if diff := cmp.Diff(tt.want, c); diff != "" {
			t.Errorf("UnmarshalText(%q) (-want +got):\n%s", tt.text, diff)
		}
		b, err := c.MarshalText()
		if err != nil || string(b) != tt.text {
			t.Errorf("MarshalText(%+v) = %q, %v; want %q", c, b, err, tt.text)
		}
	}
	for _, c := range []mcp.Change{{}, {Kind: mcp.ResourceUpdated}, {Kind: 99}} {
		if _, err := c.MarshalText(); err == nil {
			t.Errorf("MarshalText(%+v) succeeded", c)
		}
	}
}

// FuzzChangeText: what UnmarshalText accepts, MarshalText writes back
// unchanged.
func FuzzChangeText(f *testing.F) {
	f.Add([]byte("notifications/resources/updated file:///x"))
	f.Add([]byte("notifications/tools/list_changed"))
	f.Add([]byte(`@"iss alice" notifications/resources/updated file:///x`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c mcp.Change
		if c.UnmarshalText(b) != nil {
			return
		}
		out, err := c.MarshalText()
		if err != nil || string(out) != string(b) {
			t.Fatalf("%q decodes to %+v, which encodes to %q, %v", b, c, out, err)
		}
	})
}
