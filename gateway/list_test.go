package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

// listing is a backend whose tools/list answers tools, after wait (when
// not nil) returns; it counts its lists.
func listing(name string, tools []string, lists *atomic.Int32, wait func(ctx context.Context, n int32)) gateway.Backend {
	items := make([]map[string]any, len(tools))
	for i, tool := range tools {
		items[i] = map[string]any{"name": tool, "inputSchema": map[string]any{"type": "object"}}
	}
	body, _ := json.Marshal(map[string]any{"tools": items})
	s := mcp.NewServer(&mcp.ServerOptions{Logger: quiet, Provider: mcp.ProviderFunc(func(ctx context.Context, req *mcp.MethodRequest) (*mcp.ProvidedResult, error) {
		if req.Method != "tools/list" {
			return nil, mcp.InvalidParams("no")
		}
		n := lists.Add(1)
		if wait != nil {
			wait(ctx, n)
		}
		return &mcp.ProvidedResult{Body: body}, nil
	})})
	s.Advertise(&mcp.Advertisement{Capabilities: mcp.ServerCapabilities{Tools: &mcp.ListCapability{}}})
	return gateway.Backend{Name: name, Transport: func() client.Transport { return &client.MemoryTransport{Server: s} }}
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d", prefix, i)
	}
	return out
}

// pages lists tools page by page and returns each page's names.
func pages(t *testing.T, c *client.Client) [][]string {
	t.Helper()
	var out [][]string
	cursor := ""
	for i := 0; ; i++ {
		if i > 20 {
			t.Fatal("the list does not end")
		}
		p := map[string]any{}
		if cursor != "" {
			p["cursor"] = cursor
		}
		raw, err := c.Call(context.Background(), "tools/list", p)
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		var page struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tool := range page.Tools {
			got = append(got, tool.Name)
		}
		out = append(out, got)
		if page.NextCursor == "" {
			return out
		}
		cursor = page.NextCursor
	}
}

func prefixed(prefix string, tools []string) []string {
	out := make([]string, len(tools))
	for i, tool := range tools {
		out[i] = prefix + "_" + tool
	}
	return out
}

// TestPageShape checks where merged pages end: after the backend page
// that brings a page to gateway.MinPageItems (a backend listing that many
// gets a page of its own), small backends joined, the same on the first
// walk (the backends' sizes unknown, asked one by one) and on the next
// (asked at once).
func TestPageShape(t *testing.T) {
	var lists atomic.Int32
	big, small := names("t", gateway.MinPageItems+8), names("u", gateway.MinPageItems/4)
	_, c := start(t, []gateway.Backend{
		listing("a", big, &lists, nil),
		listing("b", small, &lists, nil),
		listing("c", small, &lists, nil),
		listing("d", small, &lists, nil),
		listing("e", small, &lists, nil),
		listing("f", small, &lists, nil),
	}, nil)
	var rest []string
	for _, name := range []string{"b", "c", "d", "e"} {
		rest = append(rest, prefixed(name, small)...)
	}
	want := [][]string{prefixed("a", big), rest, prefixed("f", small)}
	for walk := range 2 {
		lists.Store(0)
		if d := cmp.Diff(want, pages(t, c)); d != "" {
			t.Errorf("walk %d: pages (-want +got):\n%s", walk, d)
		}
		if n := lists.Load(); n != 6 {
			t.Errorf("walk %d: the backends listed %d times, want 6 (once each)", walk, n)
		}
	}
}

// TestListAsksAtOnce checks that the backends of one page are asked at
// once and joined in config order whatever order they answer in: backend
// a answers only once c has been asked, so c answers first.
func TestListAsksAtOnce(t *testing.T) {
	var la, lb, lc atomic.Int32
	cAsked := make(chan struct{})
	var pending atomic.Bool
	waitA := func(ctx context.Context, n int32) {
		if n < 2 {
			return // the first walk learns the backends' sizes, one by one
		}
		select {
		case <-cAsked:
		case <-ctx.Done():
		case <-time.After(10 * time.Second): // only when the test fails
			pending.Store(true)
		}
	}
	askedC := func(ctx context.Context, n int32) {
		if n == 2 {
			close(cAsked)
		}
	}
	_, c := start(t, []gateway.Backend{
		listing("a", []string{"x", "y"}, &la, waitA),
		listing("b", []string{"x"}, &lb, nil),
		listing("c", []string{"z"}, &lc, askedC),
	}, nil)
	want := [][]string{{"a_x", "a_y", "b_x", "c_z"}}
	for walk := range 2 {
		if d := cmp.Diff(want, pages(t, c)); d != "" {
			t.Errorf("walk %d: pages (-want +got):\n%s", walk, d)
		}
	}
	if pending.Load() {
		t.Error("backend c was not asked while a's list was pending")
	}
}
