package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

func TestSessionStore(t *testing.T) {
	rdb := newTaskClient(t, fmt.Sprintf("127.0.0.1:%d", startRedis(t).Port))
	var n atomic.Int64
	mcptest.TestSessionStore(t, func(t *testing.T, idle time.Duration) mcp.SessionStore {
		return NewSessionStore(rdb, &SessionStoreOptions{Prefix: "test" + strconv.FormatInt(n.Add(1), 10) + ":", IdleTimeout: idle})
	})
}

func TestSessionStoreShared(t *testing.T) {
	// Two stores on one Redis and one prefix, as two replicas have: a
	// session stored by one is loaded, changed and deleted by the other.
	ctx := context.Background()
	rdb := newTaskClient(t, fmt.Sprintf("127.0.0.1:%d", startRedis(t).Port))
	a, b := NewSessionStore(rdb, nil), NewSessionStore(rdb, nil)
	if err := a.Store(ctx, "s", &mcp.SessionState{ProtocolVersion: "2025-11-25"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Store(ctx, "s", &mcp.SessionState{ProtocolVersion: "2025-11-25", LogLevel: mcp.LevelDebug}); err != nil {
		t.Fatal(err)
	}
	if st, err := a.Load(ctx, "s"); err != nil || st.LogLevel != mcp.LevelDebug {
		t.Fatalf("Load through the other store = %+v, %v; want the log level it set", st, err)
	}
	// The key expires with the default idle timeout of 30 minutes.
	if ttl, err := rdb.PTTL(ctx, "mcpkit:sessions:s").Result(); err != nil || ttl <= 29*time.Minute || ttl > 30*time.Minute {
		t.Errorf("PTTL = %v, %v; want about 30 minutes", ttl, err)
	}
	if err := b.Delete(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Load(ctx, "s"); !errors.Is(err, mcp.ErrSessionNotFound) {
		t.Errorf("Load after the other store's Delete = %v, want ErrSessionNotFound", err)
	}
}

func TestSessionStoreErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rdb := newTaskClient(t, fmt.Sprintf("127.0.0.1:%d", startRedis(t).Port))
	st := NewSessionStore(rdb, nil)
	// A key that holds something else is an error, not a session.
	rdb.Set(ctx, "mcpkit:sessions:junk", "not json", 0)
	if _, err := st.Load(ctx, "junk"); err == nil || errors.Is(err, mcp.ErrSessionNotFound) {
		t.Errorf("Load of a corrupt session = %v, want an error other than not-found", err)
	}
	// An unreachable Redis is an error, never "not found" (which would
	// end the client's session).
	rdb.Close()
	if _, err := st.Load(ctx, "s"); err == nil || errors.Is(err, mcp.ErrSessionNotFound) {
		t.Errorf("Load with Redis down = %v, want an error other than not-found", err)
	}
	if err := st.Store(ctx, "s", &mcp.SessionState{}); err == nil {
		t.Error("Store with Redis down = nil, want an error")
	}
}
