package gateway_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

// counted is a backend whose sessions are counted: a restarted bridge
// opens a new probe session.
func counted(s srv, fingerprint string, n *atomic.Int32) gateway.Backend {
	m := s.build()
	return gateway.Backend{Name: s.name, Fingerprint: fingerprint, Transport: func() client.Transport {
		n.Add(1)
		return &client.MemoryTransport{Server: m}
	}}
}

// TestReload removes one backend, adds one and keeps one: the kept one is
// not restarted, the lists and discover follow, and a bad reload changes
// nothing.
func TestReload(t *testing.T) {
	var na, nb, nc, na2 atomic.Int32
	g, c := start(t, []gateway.Backend{
		counted(srv{name: "a", tools: []string{"t"}, instructions: "A."}, "a-v1", &na),
		counted(srv{name: "b", tools: []string{"t"}, instructions: "B."}, "b-v1", &nb),
	}, nil)
	ctx := context.Background()
	callText(t, c, "a_t")
	before := na.Load()

	err := g.Reload(ctx, []gateway.Backend{
		counted(srv{name: "a", tools: []string{"t"}, instructions: "A."}, "a-v1", &na2),
		counted(srv{name: "c", tools: []string{"t"}, instructions: "C."}, "", &nc),
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a_t", "c_t"}, toolNames(t, c)); d != "" {
		t.Errorf("tools after reload (-want +got):\n%s", d)
	}
	if got := callText(t, c, "c_t"); got != "c:t" {
		t.Errorf("c_t = %q", got)
	}
	if got := callText(t, c, "a_t"); got != "a:t" {
		t.Errorf("a_t = %q", got)
	}
	if na.Load() != before || na2.Load() != 0 {
		t.Errorf("the unchanged backend a was restarted (sessions %d then %d, new transport used %d times)", before, na.Load(), na2.Load())
	}
	_, err = c.CallTool(ctx, "b_t", nil)
	var e *mcp.Error
	if !errors.As(err, &e) || !strings.Contains(e.Message, "Unknown tool") {
		t.Errorf("call to the removed backend: err = %v, want Unknown tool", err)
	}
	c2 := connect(t, g) // a new session sees the new discover
	if want := "## a\n\nA.\n\n## c\n\nC."; c2.Instructions() != want {
		t.Errorf("instructions after reload = %q, want %q", c2.Instructions(), want)
	}

	// A bad configuration changes nothing.
	if err := g.Reload(ctx, []gateway.Backend{{Name: "Bad", Transport: func() client.Transport { return nil }}}, ""); err == nil {
		t.Error("Reload with a bad backend name succeeded")
	}
	if d := cmp.Diff([]string{"a_t", "c_t"}, toolNames(t, c)); d != "" {
		t.Errorf("tools after a failed reload (-want +got):\n%s", d)
	}
}

// TestReloadInFlight removes a backend while a call to it runs: the call
// ends with an error naming the backend instead of hanging.
func TestReloadInFlight(t *testing.T) {
	slow := mcp.NewServer(&mcp.ServerOptions{Logger: quiet})
	running := make(chan struct{})
	mcp.AddTool(slow, &mcp.Tool{Name: "wait", Description: "Waits for its cancellation."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			close(running)
			<-ctx.Done()
			return "", ctx.Err()
		})
	g, c := start(t, []gateway.Backend{
		{Name: "slow", Transport: func() client.Transport { return &client.MemoryTransport{Server: slow} }},
		srv{name: "ok", tools: []string{"t"}}.backend(),
	}, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "slow_wait", nil)
		errc <- err
	}()
	<-running
	if err := g.Reload(context.Background(), []gateway.Backend{srv{name: "ok", tools: []string{"t"}}.backend()}, ""); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	var e *mcp.Error
	if !errors.As(err, &e) || !strings.Contains(e.Message, "backend slow") {
		t.Errorf("the call in flight on the removed backend: err = %v, want an error naming backend slow", err)
	}
}
