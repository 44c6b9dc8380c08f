package bridge_test

import (
	"testing"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestTaskToolText: MODE and MODE,input-starts-task round-trip; other
// forms are errors.
func TestTaskToolText(t *testing.T) {
	for text, want := range map[string]bridge.TaskTool{
		"none":                       {},
		"optional":                   {Support: mcp.TaskOptional},
		"required,input-starts-task": {Support: mcp.TaskRequired, InputStartsTask: true},
	} {
		var got bridge.TaskTool
		if err := got.UnmarshalText([]byte(text)); err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", text, got, err, want)
		}
		if b, err := want.MarshalText(); err != nil || string(b) != text {
			t.Errorf("%+v marshals to %q, %v; want %q", want, b, err, text)
		}
	}
	for _, bad := range []string{"", "input-starts-task", "required,", "optional,input-starts-task,x"} {
		var got bridge.TaskTool
		if err := got.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
