package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// Each trigger fixture changes what the server lists and tells a listen
// stream that asked for it.
func TestTriggers(t *testing.T) {
	srv := httptest.NewServer(New(nil))
	t.Cleanup(srv.Close)
	c := connect(t, srv.URL)

	resp := mcpwire.Send(t, context.Background(), srv.URL, mcpwire.Request{ID: "42", Method: "subscriptions/listen",
		Params: `{"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["` + WatchedResource + `"]}}`})
	t.Cleanup(func() { resp.Body.Close() })
	methods := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m struct {
					Method string
					Params struct {
						Meta map[string]any `json:"_meta"`
					}
				}
				json.Unmarshal([]byte(data), &m)
				if m.Params.Meta["io.modelcontextprotocol/subscriptionId"] != 42.0 {
					t.Errorf("untagged frame %s", data)
				}
				methods <- m.Method
			}
		}
	}()
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-methods:
			if got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s within 5s", want)
		}
	}
	expect("notifications/subscriptions/acknowledged")

	names := func(method, field string) []string { return fieldOf(c.list(method, field), "name") }
	tests := []struct {
		trigger, list, field, item, note string
	}{
		{"test_trigger_tool_change", "tools/list", "tools", TransientTool, "notifications/tools/list_changed"},
		{"test_trigger_prompt_change", "prompts/list", "prompts", TransientPrompt, "notifications/prompts/list_changed"},
	}
	for _, tt := range tests {
		for _, present := range []bool{true, false} {
			c.result("tools/call", map[string]any{"name": tt.trigger})
			expect(tt.note)
			if got := slices.Contains(names(tt.list, tt.field), tt.item); got != present {
				t.Errorf("after %s: %s listed = %v, want %v", tt.trigger, tt.item, got, present)
			}
		}
	}
	c.result("tools/call", map[string]any{"name": "test_trigger_resource_update"})
	expect("notifications/resources/updated")
}

func fieldOf(items []map[string]any, key string) []string { return field(items, key) }
