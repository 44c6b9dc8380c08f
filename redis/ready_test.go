package redis

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestStoresReady checks that the stores report an unreachable Redis to
// mcp.Server.Ready, and recover with it.
func TestStoresReady(t *testing.T) {
	r := startRedis(t)
	rdb := newTaskClient(t, fmt.Sprintf("127.0.0.1:%d", r.Port))
	sessions := NewSessionStore(rdb, nil)
	tasks := NewTaskStore(rdb, nil)
	t.Cleanup(func() { tasks.Close() })
	var _ mcp.ReadyChecker = sessions
	var _ mcp.ReadyChecker = tasks
	s := mcp.NewServer(&mcp.ServerOptions{Legacy: mcp.LegacyOptions{SessionStore: sessions}, Tasks: mcp.TaskOptions{Store: tasks}})
	ready := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return s.Ready(ctx)
	}
	if err := ready(); err != nil {
		t.Fatalf("Ready with Redis up: %v", err)
	}
	r.Stop()
	if err := ready(); err == nil {
		t.Fatal("Ready with Redis down: nil")
	}
	r.Start()
	if err := ready(); err != nil {
		t.Fatalf("Ready with Redis back: %v", err)
	}
}
