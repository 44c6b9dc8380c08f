package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
)

// TestOnNotificationSkipsListen: in the legacy era, a notification a Listen stream took does not
// also reach Options.OnNotification (its doc: "every notification no request or Listen took").
// The server sends tools/list_changed (Listen's) and then prompts/list_changed (nobody's) on the
// same stream, in that order: OnNotification must see the second first.
func TestOnNotificationSkipsListen(t *testing.T) {
	for _, name := range []string{"memory", "http"} {
		t.Run(name, func(t *testing.T) {
			s := testServer(t)
			defer s.Shutdown(context.Background())
			got := make(chan string, 16)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := client.Connect(ctx, transports(t, s)[name], &client.Options{Eras: client.LegacyOnly,
				OnNotification: func(n *client.Notification) { got <- n.Method }})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for ev, err := range c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}) {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Acknowledged != nil {
					s.RemoveTools("fail")
					continue
				}
				if ev.Notification.Method != "notifications/tools/list_changed" {
					t.Fatalf("Listen got %s", ev.Notification.Method)
				}
				break
			}
			s.RemovePrompts("p")
			select {
			case m := <-got:
				if m != "notifications/prompts/list_changed" {
					t.Errorf("OnNotification got %s first, want notifications/prompts/list_changed (the tools one was Listen's)", m)
				}
			case <-ctx.Done():
				t.Fatal("OnNotification got nothing")
			}
		})
	}
}
