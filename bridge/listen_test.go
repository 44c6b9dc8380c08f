package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// listenBackend is a modern backend with one resource that reports the
// resource subscriptions of every listen stream it opens.
func listenBackend(opened chan<- []string) *mcp.Server {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "backend"}, Logger: quiet,
		Listen: mcp.ListenOptions{Observe: func(ctx context.Context, info *mcp.RequestInfo, f mcp.SubscriptionFilter) (func(), error) {
			if len(f.ResourceSubscriptions) > 0 {
				opened <- f.ResourceSubscriptions
			}
			return nil, nil
		}}})
	s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://r", Text: "r"}}}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
	return s
}

// updatedURI returns the uri of a notifications/resources/updated.
func updatedURI(n *client.Notification) string {
	var p struct {
		URI string `json:"uri"`
	}
	json.Unmarshal(n.Params, &p)
	return n.Method + " " + p.URI
}

// A modern backend's resources/updated, sent only on its own listen
// streams, reaches the front's listeners: the front grants the
// subscription, two front streams on one URI open one backend stream, and
// a backend stream whose session ends is reopened.
func TestModernResourceUpdatedRelayed(t *testing.T) {
	opened := make(chan []string, 16)
	be := listenBackend(opened)
	b := modernBridge(t, be)
	c := mcptest.NewClient(t, b.Server())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nextOpen := func() []string {
		t.Helper()
		select {
		case u := <-opened:
			return u
		case <-ctx.Done():
			t.Fatal("no backend listen stream opened")
			return nil
		}
	}
	f := client.ListenFilter{ResourceSubscriptions: []string{"test://r"}}
	var got []string
	for ev, err := range c.Client().Listen(ctx, f) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Acknowledged != nil {
			if diff := cmp.Diff(f, *ev.Acknowledged); diff != "" {
				t.Fatalf("acknowledged (-want +got):\n%s", diff)
			}
			if u := nextOpen(); !cmp.Equal(u, []string{"test://r"}) {
				t.Fatalf("backend stream on %q, want test://r", u)
			}
			// A second front stream on the URI shares the backend stream.
			for ev2, err := range c.Client().Listen(ctx, f) {
				if err != nil {
					t.Fatal(err)
				}
				if ev2.Acknowledged != nil {
					select {
					case u := <-opened:
						t.Fatalf("a second backend stream opened on %q", u)
					default:
					}
					be.NotifyResourceUpdated("test://r")
					continue
				}
				got = append(got, "second "+updatedURI(ev2.Notification))
				break
			}
			// The backend restarts: its stream is reopened on a new
			// session, and updates flow again.
			bridge.EndSessions(b)
			if u := nextOpen(); !cmp.Equal(u, []string{"test://r"}) {
				t.Fatalf("reopened backend stream on %q, want test://r", u)
			}
			be.NotifyResourceUpdated("test://r")
			continue
		}
		got = append(got, "first "+updatedURI(ev.Notification))
		break
	}
	want := []string{"second notifications/resources/updated test://r", "first notifications/resources/updated test://r"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
}

// A modern backend's tools list_changed reaches the front's listeners.
func TestModernListChangedRelayed(t *testing.T) {
	be := listenBackend(make(chan []string, 16))
	b := modernBridge(t, be)
	c := mcptest.NewClient(t, b.Server())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ev, err := range c.Client().Listen(ctx, client.ListenFilter{ToolsListChanged: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Acknowledged != nil {
			if !ev.Acknowledged.ToolsListChanged {
				t.Fatalf("acknowledged %+v, want toolsListChanged", *ev.Acknowledged)
			}
			mcp.AddTool(be, &mcp.Tool{Name: "added", Description: "New."},
				func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
			continue
		}
		if ev.Notification.Method != "notifications/tools/list_changed" {
			t.Fatalf("got %s", ev.Notification.Method)
		}
		break
	}
	n := 0
	for _, err := range c.Client().ListTools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d tools after the change, want 2", n)
	}
}

// After a legacy backend's session ends (a restart), the bridge
// subscribes the new session to the URIs open streams still name, and
// resources/updated still arrives.
func TestLegacySubscriptionRenewed(t *testing.T) {
	calls := make(chan string, 16)
	be := subscribeBackend(calls)
	b := startBridge(t, &bridge.Options{
		Backend:    func() client.Transport { return &client.MemoryTransport{Server: be} },
		Eras:       client.LegacyOnly,
		MinBackoff: time.Millisecond,
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
	for ev, err := range c.Client().Listen(ctx, client.ListenFilter{ResourceSubscriptions: []string{"test://r"}}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Acknowledged != nil {
			if m := next(); m != "resources/subscribe test://r" {
				t.Fatalf("backend got %q, want the subscribe", m)
			}
			bridge.EndSessions(b)
			if m := next(); m != "resources/subscribe test://r" {
				t.Fatalf("backend got %q after the restart, want the subscribe renewed", m)
			}
			be.NotifyResourceUpdated("test://r")
			continue
		}
		if got := updatedURI(ev.Notification); got != "notifications/resources/updated test://r" {
			t.Errorf("got %s", got)
		}
		break
	}
}

// Past Options.MaxListenStreams backend streams, a front listen stream
// that needs another is refused with 503; one that needs none is not.
func TestModernListenStreamsBounded(t *testing.T) {
	be := listenBackend(make(chan []string, 16))
	b := startBridge(t, &bridge.Options{
		Backend:          func() client.Transport { return &client.MemoryTransport{Server: be} },
		Eras:             client.ModernOnly,
		MaxListenStreams: 2, // the bridge's list-changes stream and one URI
	})
	c := mcptest.NewClient(t, b.Server())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tt := range []struct {
		name string
		uris []string
		ok   bool
	}{
		{"two URIs", []string{"test://r", "test://s"}, false},
		{"one URI", []string{"test://r"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for ev, err := range c.Client().Listen(ctx, client.ListenFilter{ToolsListChanged: true, ResourceSubscriptions: tt.uris}) {
				var me *mcp.Error
				switch {
				case tt.ok && err != nil:
					t.Fatal(err)
				case tt.ok:
					if ev.Acknowledged == nil {
						t.Fatalf("first event %+v, want the acknowledgement", ev)
					}
				case !errors.As(err, &me) || me.Code != -32603 || !strings.Contains(me.Message, "MaxListenStreams"):
					t.Fatalf("event %+v, err %v: want -32603 naming MaxListenStreams", ev, err)
				}
				break
			}
		})
	}
}

// A legacy caller's resources/subscribe, on a modern backend, holds a
// backend listen stream too: the update reaches its session.
func TestModernLegacyCallerSubscribe(t *testing.T) {
	opened := make(chan []string, 16)
	be := listenBackend(opened)
	b := modernBridge(t, be)
	c := mcptest.NewClient(t, b.Server(), mcptest.Legacy())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ev, err := range c.Client().Listen(ctx, client.ListenFilter{ResourceSubscriptions: []string{"test://r"}}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Acknowledged != nil {
			if diff := cmp.Diff([]string{"test://r"}, ev.Acknowledged.ResourceSubscriptions); diff != "" {
				t.Fatalf("acknowledged subscriptions (-want +got):\n%s", diff)
			}
			select {
			case u := <-opened:
				if !cmp.Equal(u, []string{"test://r"}) {
					t.Fatalf("backend stream on %q", u)
				}
			case <-ctx.Done():
				t.Fatal("no backend listen stream opened")
			}
			be.NotifyResourceUpdated("test://r")
			continue
		}
		if got := updatedURI(ev.Notification); got != "notifications/resources/updated test://r" {
			t.Errorf("got %s", got)
		}
		break
	}
}
