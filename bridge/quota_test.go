package bridge_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
)

// The front's quotas hold for bridged calls as for any: past
// MaxInFlightRequests a tools/call gets 503 with Retry-After and -32603
// naming the quota, and a backend result over MaxResponseBytes becomes
// -32603 "Response too large".
func TestFrontQuotas(t *testing.T) {
	b, started := newBridge(t, func(o *bridge.Options) { o.Server.Quotas = mcp.QuotaOptions{MaxInFlightRequests: 1} })
	srv := httptest.NewServer(b.Server())
	defer srv.Close()

	// One bridged call in flight: it blocks in the backend.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	req, err := mcpwire.Request{Method: "tools/call", Params: `{"name":"block"}`}.NewRequest(first, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil { // it ends cancelled
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the first call did not reach the backend")
	}
	r := mcpwire.Post(t, ctx, srv.URL, mcpwire.Request{Method: "tools/call", Params: `{"name":"echo","arguments":{"text":"hi"}}`})
	var e struct {
		Error struct {
			Code int
			Data struct {
				Quota string
				Limit int
			}
		}
	}
	r.Decode(t, &e)
	if r.Status != 503 || r.Header.Get("Retry-After") == "" || e.Error.Code != -32603 || e.Error.Data.Quota != "maxInFlightRequests" || e.Error.Data.Limit != 1 {
		t.Errorf("a second call past MaxInFlightRequests 1: %d, Retry-After %q, %s\nwant 503 with Retry-After and -32603 naming the quota", r.Status, r.Header.Get("Retry-After"), r.Last())
	}
	stop()
	<-done
	select {
	case <-started: // "cancelled": the backend call ended with the caller
	case <-ctx.Done():
		t.Fatal("the backend call was not cancelled")
	}

	// A bridge of its own: the cancelled request may still count in the
	// first one's until its handler returned.
	b2, _ := newBridge(t, func(o *bridge.Options) { o.Server.Quotas = mcp.QuotaOptions{MaxResponseBytes: 4 << 10} })
	srv2 := httptest.NewServer(b2.Server())
	defer srv2.Close()
	r = mcpwire.Post(t, ctx, srv2.URL, mcpwire.Request{Method: "tools/call", Params: `{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 8<<10) + `"}}`})
	r.Decode(t, &e)
	if e.Error.Code != -32603 || !strings.Contains(string(r.Last()), "Response too large") {
		t.Errorf("a backend result over MaxResponseBytes: %d %s, want -32603 Response too large", r.Status, r.Last())
	}
}
