package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/client"
)

// dropServer answers subscriptions/listen with an acknowledgment that
// leaves out prompts and one notification, then drops the stream without
// a response; the third stream ends gracefully.
func dropServer(listens *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &req)
		if req.Method == "server/discover" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}}}}`, req.ID)
			return
		}
		n := listens.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		meta := `"_meta":{"io.modelcontextprotocol/subscriptionId":` + string(req.ID) + `}`
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{%s,\"notifications\":{\"toolsListChanged\":true}}}\n\n", meta)
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\",\"params\":{%s}}\n\n", meta)
		if n == 3 {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"resultType\":\"complete\",%s}}\n\n", req.ID, meta)
		}
	})
}

func TestListenReconnects(t *testing.T) {
	var listens atomic.Int32
	hs := httptest.NewServer(dropServer(&listens))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := client.ListenFilter{ToolsListChanged: true, PromptsListChanged: true}
	var got []string
	for ev, err := range c.Listen(ctx, want) {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ev.Acknowledged != nil:
			got = append(got, fmt.Sprintf("ack reconnected=%v missing=%+v", ev.Reconnected, want.Missing(*ev.Acknowledged)))
		default:
			got = append(got, ev.Notification.Method)
		}
	}
	missing := "missing={ToolsListChanged:false PromptsListChanged:true ResourcesListChanged:false ResourceSubscriptions:[]}"
	wantEvents := []string{
		"ack reconnected=false " + missing, "notifications/tools/list_changed",
		"ack reconnected=true " + missing, "notifications/tools/list_changed",
		"ack reconnected=true " + missing, "notifications/tools/list_changed",
	}
	if diff := cmp.Diff(wantEvents, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if n := listens.Load(); n != 3 {
		t.Errorf("%d listen requests, want 3 (two reconnections, then a graceful end)", n)
	}
}

// Closing the client ends a Listen in progress with ErrClosed, at once.
func TestListenEndsOnClose(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := testServer(t)
	defer s.Shutdown(context.Background())
	c, err := client.Connect(ctx, transports(t, s)["http"], nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var last error
	for ev, err := range c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}) {
		if err != nil {
			last = err
			break
		}
		if ev.Acknowledged != nil {
			c.Close()
		}
	}
	if !errors.Is(last, client.ErrClosed) {
		t.Errorf("Listen after Close ended with %v, want ErrClosed", last)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Listen took %v to end after Close", d)
	}
}
