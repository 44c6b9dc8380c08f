package gateway_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

// late is a backend whose first starts fail until up is set.
func late(s srv, up *atomic.Bool) gateway.Backend {
	m := s.build()
	return gateway.Backend{Name: s.name, Transport: func() client.Transport {
		if !up.Load() {
			return &client.CommandTransport{Command: "/nonexistent/mcp-backend"}
		}
		return &client.MemoryTransport{Server: m}
	}}
}

// TestBackendStartsLate checks that a backend that does not start does
// not keep the gateway from starting: it is down (calls get 503 naming
// it), retried in the background, and joins the lists with list_changed
// once it starts. A gateway none of whose backends starts is an error.
func TestBackendStartsLate(t *testing.T) {
	var up atomic.Bool
	_, c := start(t, []gateway.Backend{srv{name: "ok", tools: []string{"t"}}.backend(), late(srv{name: "late", tools: []string{"t"}}, &up)},
		&gateway.Options{HealthInterval: 10 * time.Millisecond, Bridge: bridge.Options{MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}})
	ctx := context.Background()
	if got := toolNames(t, c); !slices.Equal(got, []string{"ok_t"}) {
		t.Errorf("tools = %q, want ok's only", got)
	}
	_, err := c.CallTool(ctx, "late_t", nil)
	var e *mcp.Error
	if !errors.As(err, &e) || !strings.Contains(e.Message, "backend late has not started") {
		t.Errorf("call to the backend not started: err = %v, want it named", err)
	}
	changes := listenTools(t, c)
	up.Store(true)
	timeout := time.After(20 * time.Second)
	for !slices.Contains(toolNames(t, c), "late_t") {
		select {
		case <-changes:
		case <-timeout:
			t.Fatalf("the late backend never joined the list with a list_changed: %q", toolNames(t, c))
		}
	}
	if got := callText(t, c, "late_t"); got != "late:t" {
		t.Errorf("late_t = %q", got)
	}

	var never atomic.Bool
	_, err = gateway.New(ctx, []gateway.Backend{late(srv{name: "a"}, &never)}, &gateway.Options{Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), `backend "a"`) {
		t.Errorf("New with no backend starting: err = %v, want one naming it", err)
	}
}

// listenTools opens a listen stream for tools list changes and returns
// once it is acknowledged; the channel gets one value per change.
func listenTools(t *testing.T, c *client.Client) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	changes := make(chan struct{}, 16)
	acked := make(chan struct{})
	go func() {
		for ev, err := range c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}) {
			if err != nil {
				return
			}
			if ev.Acknowledged != nil {
				close(acked)
			}
			if ev.Notification != nil && ev.Notification.Method == "notifications/tools/list_changed" {
				select {
				case changes <- struct{}{}:
				default:
				}
			}
		}
	}()
	<-acked
	return changes
}

// TestReadyRequired checks readiness: not ready while every required
// backend is down, ready when one of them is up, and a backend that is
// not required never makes the gateway unready.
func TestReadyRequired(t *testing.T) {
	var up1, up2 atomic.Bool
	r1, r2 := late(srv{name: "r1", tools: []string{"t"}}, &up1), late(srv{name: "r2", tools: []string{"t"}}, &up2)
	r1.Required, r2.Required = true, true
	g, _ := start(t, []gateway.Backend{srv{name: "ok", tools: []string{"t"}}.backend(), r1, r2},
		&gateway.Options{Bridge: bridge.Options{MinBackoff: 5 * time.Millisecond, MaxBackoff: 10 * time.Millisecond}})
	ctx := context.Background()
	err := g.Server().Ready(ctx)
	if err == nil || !strings.Contains(err.Error(), "backend r1") || !strings.Contains(err.Error(), "backend r2") {
		t.Errorf("Ready with every required backend down = %v, want an error naming r1 and r2", err)
	}
	up2.Store(true) // the background retry starts r2 within its backoff
	timeout := time.After(20 * time.Second)
	for g.Server().Ready(ctx) != nil {
		select {
		case <-timeout:
			t.Fatalf("Ready with r2 up = %v, want nil", g.Server().Ready(ctx))
		default:
			runtime.Gosched()
		}
	}

	g2, _ := start(t, []gateway.Backend{srv{name: "ok", tools: []string{"t"}}.backend(), late(srv{name: "down"}, &atomic.Bool{})}, nil)
	if err := g2.Server().Ready(ctx); err != nil {
		t.Errorf("Ready with only a backend that is not required down = %v, want nil", err)
	}
}
