package demo

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// TestNewPlain checks that the plain demo lists no conformance fixture, and that every fixture
// name the plain demo removes is one that New registers (a renamed fixture would otherwise
// stay in the plain demo unnoticed).
func TestNewPlain(t *testing.T) {
	full := toolNames(t, New(nil))
	for _, name := range fixtureTools {
		if !slices.Contains(full, name) {
			t.Errorf("fixture tool %q is not registered by New", name)
		}
	}
	plain := toolNames(t, NewPlain(nil))
	for _, name := range plain {
		if strings.HasPrefix(name, "test_") || slices.Contains(fixtureTools, name) {
			t.Errorf("the plain demo lists the fixture %q", name)
		}
	}
	if len(plain) == 0 || len(plain) > 15 {
		t.Errorf("the plain demo lists %d tools (%v), want a small set", len(plain), plain)
	}
	for _, want := range []string{"echo", "dice_roll", "evaluate", "countdown"} {
		if !slices.Contains(plain, want) {
			t.Errorf("the plain demo lacks %q, which its instructions name", want)
		}
	}
}

func toolNames(t *testing.T, s *mcp.Server) []string {
	t.Helper()
	c := mcptest.NewClient(t, s)
	tools, err := c.ListTools()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}
