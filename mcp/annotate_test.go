package mcp_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestAnnotate checks that interceptors see the attributes a handler
// attached, the last value of a key, at most MaxAttributes keys, and that
// Annotate outside a call or without interceptors does nothing.
func TestAnnotate(t *testing.T) {
	mcp.Annotate(context.Background(), "k", "v") // outside a call: nothing
	var mu sync.Mutex
	var seen []mcp.Attribute
	var backend string
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "a", Version: "1"},
		Interceptors: []mcp.Interceptor{func(ctx context.Context, c *mcp.Call, next mcp.CallHandler) mcp.Outcome {
			o := next(ctx, c)
			mu.Lock()
			defer mu.Unlock()
			seen, backend = c.Attributes(), c.Attribute("mcp.backend")
			return o
		}}})
	mcp.AddTool(s, &mcp.Tool{Name: "t", Description: "Annotates."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		mcp.Annotate(ctx, "mcp.backend", "a")
		var wg sync.WaitGroup
		for i := range mcp.MaxAttributes + 4 {
			wg.Go(func() { mcp.Annotate(ctx, "k"+strconv.Itoa(i%mcp.MaxAttributes), "v") })
		}
		wg.Wait()
		mcp.Annotate(ctx, "mcp.backend", "files")
		return "ok", nil
	})
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(context.Background(), "t", nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if backend != "files" || len(seen) != mcp.MaxAttributes || seen[0] != (mcp.Attribute{Key: "mcp.backend", Value: "files"}) {
		t.Errorf("attributes %v, backend %q; want %d, mcp.backend=files first", seen, backend, mcp.MaxAttributes)
	}
	mu.Unlock()
	for _, err := range c.ListTools(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]mcp.Attribute(nil), seen); diff != "" || backend != "" {
		t.Errorf("tools/list, whose handler annotates nothing: attributes (-want +got):\n%s", diff)
	}
}
