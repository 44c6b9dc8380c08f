package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

func TestTaskStore(t *testing.T) {
	rdb := newTaskClient(t, fmt.Sprintf("127.0.0.1:%d", startRedis(t).Port))
	var n atomic.Int64
	mcptest.TestTaskStore(t, func(t *testing.T) mcp.TaskStore {
		st := NewTaskStore(rdb, &TaskStoreOptions{Prefix: "test" + strconv.FormatInt(n.Add(1), 10) + ":"})
		t.Cleanup(func() { st.Close() })
		return st
	})
}

func TestTaskStoreFull(t *testing.T) {
	ctx := context.Background()
	rdb := newTaskClient(t, fmt.Sprintf("127.0.0.1:%d", startRedis(t).Port))
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
	// Redis owns the TTL: poll, with a deadline, until it dropped the
	// expired record itself.
	waitFor(t, 5*time.Second, "Redis to expire task a", func() bool {
		n, err := rdb.Exists(ctx, "mcpkit:tasks:t:a").Result()
		return err == nil && n == 0
	})
	if err := b.Create(ctx, &mcp.TaskRecord{ID: "c", CreatedAt: now, TTL: time.Hour}); err != nil {
		t.Fatalf("Create once a task expired: %v", err)
	}
}

func TestTaskStoreRedisDown(t *testing.T) {
	// A store whose Redis is unreachable reports errors, and they are not
	// mistaken for "not found".
	rdb := newTaskClient(t, fmt.Sprintf("127.0.0.1:%d", startRedis(t).Port))
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

// newTaskClient returns a client of the Redis at addr, closed when the
// test ends.
func newTaskClient(t testing.TB, addr string) *goredis.Client {
	t.Helper()
	rdb := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("ping %s: %v", addr, err)
	}
	return rdb
}
