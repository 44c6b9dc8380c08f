package redis

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

func TestTaskStore(t *testing.T) {
	rdb := newClient(t, startRedis(t))
	var n atomic.Int64
	mcptest.TestTaskStore(t, func(t *testing.T) mcp.TaskStore {
		st := NewTaskStore(rdb, &TaskStoreOptions{Prefix: "test" + strconv.FormatInt(n.Add(1), 10) + ":"})
		t.Cleanup(func() { st.Close() })
		return st
	})
}

func TestTaskStoreFull(t *testing.T) {
	ctx := context.Background()
	rdb := newClient(t, startRedis(t))
	// Two stores sharing one prefix: the bound is shared, as replicas share it.
	a := NewTaskStore(rdb, &TaskStoreOptions{MaxTasks: 2})
	b := NewTaskStore(rdb, &TaskStoreOptions{MaxTasks: 2})
	now := time.Now()
	if err := a.Create(ctx, &mcp.TaskRecord{ID: "a", CreatedAt: now, TTL: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, &mcp.TaskRecord{ID: "b", CreatedAt: now, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := a.Create(ctx, &mcp.TaskRecord{ID: "c", CreatedAt: now, TTL: time.Hour}); !errors.Is(err, mcp.ErrTaskStoreFull) {
		t.Fatalf("third Create = %v, want ErrTaskStoreFull", err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := b.Create(ctx, &mcp.TaskRecord{ID: "c", CreatedAt: now, TTL: time.Hour}); err != nil {
		t.Fatalf("Create once a task expired: %v", err)
	}
	// Redis itself dropped the expired record.
	if n, err := rdb.Exists(ctx, "mcpkit:tasks:t:a").Result(); err != nil || n != 0 {
		t.Errorf("expired key still exists: %d, %v", n, err)
	}
}

func TestTaskStoreRedisDown(t *testing.T) {
	// A store whose Redis is unreachable reports errors, and they are not
	// mistaken for "not found".
	rdb := newClient(t, startRedis(t))
	st := NewTaskStore(rdb, nil)
	rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := st.Get(ctx, "x"); err == nil || errors.Is(err, mcp.ErrTaskNotFound) {
		t.Errorf("Get on a closed client = %v, want a connection error", err)
	}
	if err := st.Create(ctx, &mcp.TaskRecord{ID: "x", CreatedAt: time.Now(), TTL: time.Hour}); err == nil {
		t.Error("Create on a closed client succeeded")
	}
	_, err := st.Update(ctx, "x", func(*mcp.TaskRecord) (bool, error) { return true, nil })
	if err == nil || errors.Is(err, mcp.ErrTaskNotFound) {
		t.Errorf("Update on a closed client = %v, want a connection error", err)
	}
}
