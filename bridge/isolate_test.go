package bridge_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// instances is a backend that is a new server for every session, as a
// stdio command is a new process: its "whoami" tool names the instance,
// and the test can make one instance report a change.
type instances struct {
	mu  sync.Mutex
	all []*mcp.Server
}

func (in *instances) transport() client.Transport {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := len(in.all)
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "backend", Version: "1.0.0"}, Logger: quiet})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Names the backend instance."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return strconv.Itoa(n), nil
		})
	s.AddResource(&mcp.Resource{URI: "test://shared", Name: "shared"}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://shared", Text: "x"}}}, nil
	})
	in.all = append(in.all, s)
	return &client.MemoryTransport{Server: s}
}

func (in *instances) get(t *testing.T, name string) *mcp.Server {
	t.Helper()
	n, err := strconv.Atoi(name)
	in.mu.Lock()
	defer in.mu.Unlock()
	if err != nil || n < 0 || n >= len(in.all) {
		t.Fatalf("no backend instance %q", name)
	}
	return in.all[n]
}

// tokenAuth accepts any bearer token as the principal it names.
func tokenAuth(resource string) *mcp.AuthOptions {
	return &mcp.AuthOptions{
		Verifier: mcp.TokenVerifierFunc(func(ctx context.Context, token string) (*mcp.Principal, error) {
			return &mcp.Principal{Issuer: "https://as.example", Subject: token}, nil
		}),
		Resource:             resource,
		AuthorizationServers: []string{"https://as.example"},
	}
}

// isolatedFront serves a bridge with IsolatePrincipal over HTTP.
func isolatedFront(t *testing.T, in *instances, eras ...client.EraPreference) (*bridge.Bridge, string) {
	t.Helper()
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	o := &bridge.Options{Backend: in.transport, Eras: client.LegacyOnly, Isolate: bridge.IsolatePrincipal}
	if len(eras) > 0 {
		o.Eras = eras[0]
	}
	o.Server.Auth = tokenAuth(srv.URL + "/mcp")
	b := startBridge(t, o)
	h = b.Server().NewHTTPServer("", "/mcp").Handler
	return b, srv.URL + "/mcp"
}

func connectAs(t *testing.T, url, token string) *client.Client {
	t.Helper()
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: url, Header: http.Header{"Authorization": {"Bearer " + token}}}, &client.Options{Eras: client.ModernOnly, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func whoami(t *testing.T, c *client.Client) string {
	t.Helper()
	res, err := c.CallTool(context.Background(), "whoami", nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// With IsolatePrincipal each principal gets a backend of its own, and what
// one principal's backend reports reaches that principal's listen streams
// only: a legacy backend's notifications, and a modern backend's listen
// streams, which the bridge opens on each principal's own session.
func TestIsolatePrincipal(t *testing.T) {
	for _, tt := range []struct {
		name string
		era  client.EraPreference
	}{{"legacy", client.LegacyOnly}, {"modern", client.ModernOnly}} {
		t.Run(tt.name, func(t *testing.T) { testIsolatePrincipal(t, tt.era) })
	}
}

func testIsolatePrincipal(t *testing.T, era client.EraPreference) {
	in := &instances{}
	b, url := isolatedFront(t, in, era)
	alice, bob := connectAs(t, url, "alice"), connectAs(t, url, "bob")
	a, bb := whoami(t, alice), whoami(t, bob)
	if a == bb || a == "0" || bb == "0" { // instance 0 is the probe
		t.Fatalf("alice's backend %s, bob's %s: want two instances of their own", a, bb)
	}
	if again := whoami(t, alice); again != a {
		t.Errorf("alice's second call went to backend %s, want her own %s", again, a)
	}
	if n := bridge.Sessions(b); n != 2 {
		t.Errorf("%d backend sessions, want 2", n)
	}

	// Both listen to the same URI and to tool list changes.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := client.ListenFilter{ResourceSubscriptions: []string{"test://shared"}, ToolsListChanged: true}
	type event struct{ who, method string }
	events := make(chan event, 16)
	acked := make(chan string, 2)
	listen := func(who string, c *client.Client) {
		for ev, err := range c.Listen(ctx, f) {
			if err != nil {
				return
			}
			if ev.Acknowledged != nil {
				acked <- who
				continue
			}
			events <- event{who, ev.Notification.Method}
		}
	}
	go listen("alice", alice)
	go listen("bob", bob)
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
	// Alice's backend updates the resource: alice is told, bob is not.
	in.get(t, a).NotifyResourceUpdated("test://shared")
	if got := next(); got != (event{"alice", "notifications/resources/updated"}) {
		t.Fatalf("first notification %+v, want alice's update", got)
	}
	// Bob's backend changes its tools: bob's next notification is that
	// (changes reach every stream in the order published, so alice's
	// update would have come first), and alice never gets it.
	mcp.AddTool(in.get(t, bb), &mcp.Tool{Name: "extra", Description: "New."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
	if got := next(); got != (event{"bob", "notifications/tools/list_changed"}) {
		t.Fatalf("second notification %+v, want bob's list change", got)
	}
	// Alice's backend changes its tools: alice is told, and that is her
	// next notification (bob's change never reached her).
	mcp.AddTool(in.get(t, a), &mcp.Tool{Name: "extra", Description: "New."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
	if got := next(); got != (event{"alice", "notifications/tools/list_changed"}) {
		t.Fatalf("third notification %+v, want alice's list change", got)
	}
	// Lists come from the caller's own backend: never shared in a cache.
	var names []string
	for tl, err := range bob.ListTools(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	if diff := cmp.Diff([]string{"extra", "whoami"}, names); diff != "" {
		t.Errorf("bob's tools (-want +got):\n%s", diff)
	}
}

// A modern backend is isolated too: one shared session per principal.
func TestIsolatePrincipalModern(t *testing.T) {
	in := &instances{}
	b, url := isolatedFront(t, in, client.ModernOnly)
	alice, bob := connectAs(t, url, "alice"), connectAs(t, url, "bob")
	a, bb := whoami(t, alice), whoami(t, bob)
	if a == bb || a == "0" || bb == "0" {
		t.Fatalf("alice's backend %s, bob's %s: want two of their own", a, bb)
	}
	if again := whoami(t, alice); again != a {
		t.Errorf("alice's second call went to backend %s, want her own %s", again, a)
	}
	if n := bridge.Sessions(b); n != 2 {
		t.Errorf("%d backend sessions, want 2", n)
	}
}

// A bridge isolating by principal needs the front's authorization, and
// refuses a request without a principal.
func TestIsolatePrincipalNeedsAuth(t *testing.T) {
	in := &instances{}
	_, err := bridge.New(context.Background(), &bridge.Options{Backend: in.transport, Eras: client.LegacyOnly, Isolate: bridge.IsolatePrincipal, Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), "Server.Auth") {
		t.Errorf("New without Server.Auth = %v, want an error naming it", err)
	}
	// Server.Auth applies to HTTP only: a request in process has no
	// principal.
	o := &bridge.Options{Backend: in.transport, Eras: client.LegacyOnly, Isolate: bridge.IsolatePrincipal}
	o.Server.Auth = tokenAuth("http://127.0.0.1/mcp")
	b := startBridge(t, o)
	c := mcptest.NewClient(t, b.Server())
	_, err = c.Client().CallTool(context.Background(), "whoami", nil)
	var e *mcp.Error
	if !errors.As(err, &e) || e.Code != -32600 || !strings.Contains(e.Message, "authenticated caller") {
		t.Errorf("a call without a principal: %v, want -32600", err)
	}
	if n := bridge.Sessions(b); n != 0 {
		t.Errorf("%d backend sessions, want none", n)
	}
}
