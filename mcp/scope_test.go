package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// A scoped change reaches the legacy sessions of its principal only (the
// session's owner); an unscoped one reaches every session.
func TestLegacyScopedChange(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "scoped", Version: "1"}, Auth: &mcp.AuthOptions{
		Verifier: mcp.TokenVerifierFunc(func(ctx context.Context, token string) (*mcp.Principal, error) {
			return &mcp.Principal{Issuer: "https://as.example", Subject: token}, nil
		}),
		Resource:             "http://127.0.0.1/mcp",
		AuthorizationServers: []string{"https://as.example"},
	}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return "", nil
	})
	srv := httptest.NewServer(s)
	defer srv.Close()
	defer s.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type event struct{ who, method string }
	events := make(chan event, 16)
	acked := make(chan struct{}, 2)
	for _, who := range []string{"alice", "bob"} {
		c, err := client.Connect(ctx, &client.HTTPTransport{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer " + who}}}, &client.Options{Eras: client.LegacyOnly})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		go func() {
			for ev, err := range c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}) {
				if err != nil {
					return
				}
				if ev.Acknowledged != nil {
					acked <- struct{}{}
					continue
				}
				events <- event{who, ev.Notification.Method}
			}
		}()
	}
	for range 2 {
		select {
		case <-acked:
		case <-ctx.Done():
			t.Fatal("no acknowledgement")
		}
	}
	next := func() event {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-ctx.Done():
			t.Fatal("no notification")
			return event{}
		}
	}
	const changed = "notifications/tools/list_changed"
	s.NotifyChange(mcp.Change{Kind: mcp.ToolsListChanged, Scope: "https://as.example alice"})
	if got := next(); got != (event{"alice", changed}) {
		t.Fatalf("after alice's change: %+v", got)
	}
	s.NotifyChange(mcp.Change{Kind: mcp.ToolsListChanged, Scope: "https://as.example bob"})
	if got := next(); got != (event{"bob", changed}) {
		t.Fatalf("after bob's change: %+v (alice's reached bob, or bob's reached alice)", got)
	}
	s.NotifyChange(mcp.Change{Kind: mcp.ToolsListChanged})
	got := map[event]int{}
	for range 2 {
		got[next()]++
	}
	if got[event{"alice", changed}] != 1 || got[event{"bob", changed}] != 1 {
		t.Errorf("after an unscoped change: %v, want one each", got)
	}
}
