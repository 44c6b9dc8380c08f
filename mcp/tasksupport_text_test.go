package mcp_test

import (
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestTaskSupportText: the three words round-trip; anything else is an
// error naming them, and leaves the value as it was.
func TestTaskSupportText(t *testing.T) {
	for _, want := range []mcp.TaskSupport{mcp.TaskNone, mcp.TaskOptional, mcp.TaskRequired} {
		b, err := want.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got mcp.TaskSupport
		if err := got.UnmarshalText(b); err != nil || got != want || string(b) != want.String() {
			t.Errorf("%v: %q round-trips to %v, %v", want, b, got, err)
		}
	}
	got := mcp.TaskOptional
	for _, bad := range []string{"", "Required", "always", "required "} {
		if err := got.UnmarshalText([]byte(bad)); err == nil || got != mcp.TaskOptional {
			t.Errorf("%q: %v, value %v; want an error and the value kept", bad, err, got)
		}
	}
	if _, err := mcp.TaskSupport(7).MarshalText(); err == nil {
		t.Error("TaskSupport(7) marshalled")
	}
}
