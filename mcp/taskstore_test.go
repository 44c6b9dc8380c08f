package mcp_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

func TestMemoryTaskStore(t *testing.T) {
	mcptest.TestTaskStore(t, func(t *testing.T) mcp.TaskStore { return mcp.NewMemoryTaskStore(0) })
}

func TestMemoryTaskStoreFull(t *testing.T) {
	synctest.Test(t, testMemoryTaskStoreFull) // exact TTL timing on a loaded machine
}

func testMemoryTaskStoreFull(t *testing.T) {
	ctx := context.Background()
	st := mcp.NewMemoryTaskStore(2)
	now := time.Now()
	for i, id := range []string{"a", "b"} {
		ttl := time.Hour
		if i == 0 {
			ttl = 100 * time.Millisecond
		}
		if err := st.Create(ctx, &mcp.TaskRecord{ID: id, Status: mcp.TaskWorking, CreatedAt: now, TTL: ttl}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Create(ctx, &mcp.TaskRecord{ID: "c", CreatedAt: now, TTL: time.Hour}); !errors.Is(err, mcp.ErrTaskStoreFull) {
		t.Fatalf("third Create = %v, want ErrTaskStoreFull", err)
	}
	// Once a record expired, its place is free again.
	time.Sleep(150 * time.Millisecond)
	if err := st.Create(ctx, &mcp.TaskRecord{ID: "c", CreatedAt: now, TTL: time.Hour}); err != nil {
		t.Fatalf("Create after an expiry: %v", err)
	}
	if n := st.Len(); n != 2 {
		t.Errorf("Len = %d, want 2", n)
	}
}
