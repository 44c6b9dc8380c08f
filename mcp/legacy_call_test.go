package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
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

// legacyTestPost serves one POST of a 2025-11-25 client in process; sid is
// the session's id ("" for initialize).
func legacyTestPost(s *Server, sid, body string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	s.ServeHTTP(w, mcpwire.Request{Legacy: true, Session: sid, Body: []byte(body)}.ServerRequest())
	return w
}

// TestLegacyWorkersIdle: the goroutines that run the requests of legacy
// sessions are reused, at most maxIdleLegacyWorkers of them wait for the
// next request, and they end after workerIdle without one (or
// synctest.Test would report them as leaked).
func TestLegacyWorkersIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(nil)
		release := make(chan struct{})
		var running atomic.Int32
		AddTool(s, &Tool{Name: "wait", Description: "Waits for the test."},
			func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
				running.Add(1)
				<-release
				return "done", nil
			})
		init := legacyTestPost(s, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
		sid := init.Header().Get("Mcp-Session-Id")
		if sid == "" {
			t.Fatalf("initialize: status %d, %s", init.Code, init.Body)
		}
		const n = maxIdleLegacyWorkers + 8
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				w := legacyTestPost(s, sid, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"method":"tools/call","params":{"name":"wait"}}`)
				if !strings.Contains(w.Body.String(), `"text":"done"`) {
					t.Errorf("call %d: status %d, %s", i+1, w.Code, w.Body)
				}
			})
		}
		synctest.Wait()
		if got := running.Load(); got != n {
			t.Fatalf("%d handlers run at once, want %d", got, n)
		}
		close(release)
		wg.Wait()
		synctest.Wait()
		workers := &s.legacy.workers
		if got := workers.idle.Load(); got != maxIdleLegacyWorkers {
			t.Errorf("%d workers wait after the calls, want %d", got, maxIdleLegacyWorkers)
		}
		// A waiting worker serves the next call.
		if w := legacyTestPost(s, sid, `{"jsonrpc":"2.0","id":"again","method":"tools/call","params":{"name":"wait"}}`); !strings.Contains(w.Body.String(), `"text":"done"`) {
			t.Errorf("next call: status %d, %s", w.Code, w.Body)
		}
		time.Sleep(workerIdle)
		synctest.Wait()
		if got := workers.idle.Load(); got != 0 {
			t.Errorf("%d workers wait after %v without calls, want 0", got, workerIdle)
		}
	})
}

// TestLegacyWorkersEndAtShutdown checks that Shutdown ends the workers
// waiting for requests at once, not after workerIdle, and that a request
// served after Shutdown still gets its answer.
func TestLegacyWorkersEndAtShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(nil)
		AddTool(s, &Tool{Name: "echo", Description: "Echoes."},
			func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "done", nil })
		init := legacyTestPost(s, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
		sid := init.Header().Get("Mcp-Session-Id")
		if sid == "" {
			t.Fatalf("initialize: status %d, %s", init.Code, init.Body)
		}
		call := func(id int) {
			w := legacyTestPost(s, sid, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"tools/call","params":{"name":"echo"}}`)
			if !strings.Contains(w.Body.String(), `"text":"done"`) {
				t.Errorf("call %d: status %d, %s", id, w.Code, w.Body)
			}
		}
		call(1)
		synctest.Wait()
		workers := &s.legacy.workers
		if got := workers.idle.Load(); got != 1 {
			t.Fatalf("%d workers wait after a call, want 1", got)
		}
		start := time.Now()
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		synctest.Wait()
		if got := workers.idle.Load(); got != 0 {
			t.Errorf("%d workers wait after Shutdown, want 0", got)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Shutdown took %v of bubble time, want 0", d)
		}
		call(2)
		synctest.Wait()
		if got := workers.idle.Load(); got != 0 {
			t.Errorf("%d workers wait after a call served past Shutdown, want 0", got)
		}
	})
}

// TestShutdownModernOnly checks that Shutdown of a server without the
// legacy era (which has no legacy workers to end) returns without error.
func TestShutdownModernOnly(t *testing.T) {
	s := NewServer(&ServerOptions{Legacy: LegacyOptions{Disable: true}})
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}
