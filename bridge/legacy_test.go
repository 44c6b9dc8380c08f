package bridge_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// A legacy caller's logging/setLevel is the level of its session's later
// calls: the backend gets it for each call (set before, reset after, on a
// leased session), and only the messages at that level or above reach the
// caller.
func TestLegacySetLevel(t *testing.T) {
	b, _ := newBridge(t, nil)
	logs := make(chan string, 16)
	// A legacy session's log messages name no request: they come to OnLog.
	c := mcptest.NewClient(t, b.Server(), mcptest.Legacy(), mcptest.ClientOptions(func(o *client.Options) {
		o.OnLog = func(m *client.LogMessage) { logs <- string(m.Level) + ":" + string(m.Data) }
	}))
	ctx := context.Background()
	for _, tt := range []struct {
		level mcp.LogLevel
		want  []string
	}{
		{mcp.LevelInfo, []string{`info:"one"`}},
		{mcp.LevelDebug, []string{`info:"one"`, `debug:"two"`}},
		{mcp.LevelError, nil},
	} {
		if _, err := c.Client().Call(ctx, "logging/setLevel", map[string]any{"level": tt.level}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Client().CallTool(ctx, "logs", nil); err != nil {
			t.Fatal(err)
		}
		// The session's messages are sent before the call's answer; the
		// client hands them to OnLog in order, before the answer.
		var got []string
		for len(logs) > 0 {
			got = append(got, <-logs)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("level %s: logs (-want +got):\n%s", tt.level, diff)
		}
	}
}
