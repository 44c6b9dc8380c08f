package mcp

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestLegacyDeleteCancelsRequests: DELETE of a session cancels the
// requests of the session that are in flight, and their POSTs end.
func TestLegacyDeleteCancelsRequests(t *testing.T) {
	s := NewServer(nil)
	started, cancelled := make(chan struct{}), make(chan struct{})
	AddTool(s, &Tool{Name: "block", Description: "Blocks until cancelled."},
		func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return "", ctx.Err()
		})
	c := newLegacyHTTP(t, s)
	posted := make(chan struct{})
	go func() {
		defer close(posted)
		resp := c.post(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"block"}}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	<-started
	del := c.do(context.Background(), http.MethodDelete, "")
	del.Body.Close()
	if del.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: status %d", del.StatusCode)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("DELETE did not cancel the request in flight")
	}
	select {
	case <-posted:
	case <-time.After(5 * time.Second):
		t.Fatal("the POST of the cancelled request did not end")
	}
}
