package bridge_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// subscribeBackend is a legacy backend with one resource that reports
// every resources/subscribe and resources/unsubscribe it gets.
func subscribeBackend(calls chan<- string) *mcp.Server {
	count := func(ctx context.Context, c *mcp.Call, next mcp.CallHandler) mcp.Outcome {
		out := next(ctx, c)
		if c.Method == "resources/subscribe" || c.Method == "resources/unsubscribe" {
			var p struct {
				URI string `json:"uri"`
			}
			json.Unmarshal(c.Params, &p)
			calls <- c.Method + " " + p.URI
		}
		return out
	}
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "backend"}, Logger: quiet, Interceptors: []mcp.Interceptor{count}})
	s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://r", Text: "r"}}}, nil
	})
	return s
}

// A front listen stream's resourceSubscriptions become one backend
// resources/subscribe per (key, URI), however many streams name it; the
// backend's resources/updated reaches them; the last stream to end
// unsubscribes.
func TestResourceSubscriptionsRelayed(t *testing.T) {
	calls := make(chan string, 16)
	be := subscribeBackend(calls)
	b := startBridge(t, &bridge.Options{
		Backend: func() client.Transport { return &client.MemoryTransport{Server: be} },
		Eras:    client.LegacyOnly,
	})
	c := mcptest.NewClient(t, b.Server())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	next := func() string {
		t.Helper()
		select {
		case m := <-calls:
			return m
		case <-ctx.Done():
			t.Fatal("no backend call")
			return ""
		}
	}
	f := client.ListenFilter{ResourceSubscriptions: []string{"test://r"}, PromptsListChanged: true}
	var got []string
	for ev, err := range c.Client().Listen(ctx, f) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Acknowledged != nil {
			// Granted: the resource (the backend declares subscribe), not
			// prompts (it has none).
			if diff := cmp.Diff(client.ListenFilter{ResourceSubscriptions: []string{"test://r"}}, *ev.Acknowledged); diff != "" {
				t.Fatalf("acknowledged (-want +got):\n%s", diff)
			}
			if m := next(); m != "resources/subscribe test://r" {
				t.Fatalf("backend got %q, want the subscribe", m)
			}
			// A second stream on the same URI adds no backend subscribe,
			// gets the update, and its end unsubscribes nothing.
			for ev2, err := range c.Client().Listen(ctx, f) {
				if err != nil {
					t.Fatal(err)
				}
				if ev2.Acknowledged != nil {
					be.NotifyResourceUpdated("test://r")
					continue
				}
				got = append(got, "second "+ev2.Notification.Method)
				break
			}
			continue
		}
		got = append(got, "first "+ev.Notification.Method)
		break
	}
	if diff := cmp.Diff([]string{"second notifications/resources/updated", "first notifications/resources/updated"}, got); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
	// The first backend call after the subscribe is the last stream's
	// unsubscribe: the second stream's end sent none.
	if m := next(); m != "resources/unsubscribe test://r" {
		t.Errorf("backend got %q, want the unsubscribe", m)
	}
	select {
	case m := <-calls:
		t.Errorf("unexpected backend call %q", m)
	default:
	}
}

// A legacy caller's resources/subscribe reaches the backend as a listen
// stream's does: one backend subscribe per (key, URI) whatever the
// sessions, the backend's resources/updated reaches the sessions, and the
// last session to unsubscribe (or to end) unsubscribes the backend.
func TestLegacySubscribeRelayed(t *testing.T) {
	calls := make(chan string, 16)
	be := subscribeBackend(calls)
	b := startBridge(t, &bridge.Options{
		Backend: func() client.Transport { return &client.MemoryTransport{Server: be} },
		Eras:    client.LegacyOnly,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	next := func() string {
		t.Helper()
		select {
		case m := <-calls:
			return m
		case <-ctx.Done():
			t.Fatal("no backend call")
			return ""
		}
	}
	none := func() {
		t.Helper()
		// Whatever the bridge sends the backend for a session's request
		// is sent before the front answers it.
		select {
		case m := <-calls:
			t.Errorf("unexpected backend call %q", m)
		default:
		}
	}
	f := client.ListenFilter{ResourceSubscriptions: []string{"test://r"}}
	first := mcptest.NewClient(t, b.Server(), mcptest.Legacy())
	second := mcptest.NewClient(t, b.Server(), mcptest.Legacy())
	var got []string
	for ev, err := range first.Client().Listen(ctx, f) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Acknowledged != nil {
			if m := next(); m != "resources/subscribe test://r" {
				t.Fatalf("backend got %q, want the subscribe", m)
			}
			// The second session's subscribe adds no backend subscribe;
			// its unsubscribe (the end of its listen) sends none.
			for ev2, err := range second.Client().Listen(ctx, f) {
				if err != nil {
					t.Fatal(err)
				}
				if ev2.Acknowledged != nil {
					none()
					be.NotifyResourceUpdated("test://r")
					continue
				}
				got = append(got, "second "+ev2.Notification.Method)
				break
			}
			none() // the second session unsubscribed (its listen ended): the first still is
			continue
		}
		got = append(got, "first "+ev.Notification.Method)
		break
	}
	if diff := cmp.Diff([]string{"second notifications/resources/updated", "first notifications/resources/updated"}, got); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
	if m := next(); m != "resources/unsubscribe test://r" {
		t.Errorf("backend got %q, want the unsubscribe of the last session", m)
	}
	none()

	// A session that ends while subscribed unsubscribes the backend.
	third := mcptest.NewClient(t, b.Server(), mcptest.Legacy())
	if _, err := third.Client().Call(ctx, "resources/subscribe", map[string]any{"uri": "test://r"}); err != nil {
		t.Fatal(err)
	}
	if m := next(); m != "resources/subscribe test://r" {
		t.Fatalf("backend got %q, want the subscribe", m)
	}
	third.Client().Close()
	if m := next(); m != "resources/unsubscribe test://r" {
		t.Errorf("backend got %q after the session ended, want the unsubscribe", m)
	}
}
