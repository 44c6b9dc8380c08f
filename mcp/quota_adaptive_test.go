package mcp

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/internal/admission"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// TestAdaptiveInFlight: with MaxInFlightRequests 64 and calls held in
// their handler, a scheduler delay above MaxQueueDelay leaves the limit
// alone while the calls wait for something else than a CPU; once as many
// goroutines wait for a CPU as calls are in flight, it drops the limit to
// 3/4 of the requests in flight (and on, to the floor), and the
// next request is shed with 503, Retry-After and data naming the limit in
// force, before its handler runs; once the delay is gone, the limit grows
// back as requests reach it, up to MaxInFlightRequests and no further.
// The delay reader is the test's; time is the bubble's.
func TestAdaptiveInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxInFlightRequests: 64}})
		g := newGate()
		g.release = make(chan string, 64)
		AddTool(s, &Tool{Name: "held", Description: "d"}, g.handler)
		var delay atomic.Int64
		var runnable atomic.Int64 // goroutines waiting for a CPU
		s.quota.adapt.SetReaders(func() (time.Duration, bool) { return time.Duration(delay.Load()), true }, runnable.Load)

		call := mcpwire.Request{Method: "tools/call", Params: `{"name":"held","arguments":{}}`}
		var wg sync.WaitGroup
		statuses := make(chan int, 200)
		hold := func(n int) {
			for range n {
				wg.Go(func() { statuses <- mcpwire.Serve(t, s, call).Status })
				<-g.started
			}
		}
		releaseAll := func(n int) {
			for range n {
				g.release <- "ok"
			}
			wg.Wait()
			for range n {
				if st := <-statuses; st != http.StatusOK {
					t.Errorf("a held call ended with %d, want 200", st)
				}
			}
		}
		discover := mcpwire.Request{Method: "server/discover"}

		hold(24)
		delay.Store(int64(50 * time.Millisecond))
		// The held calls wait (as for a backend): no goroutine waits for a
		// CPU, so fewer calls would not shorten the queue, and the limit
		// holds however long the delay lasts.
		for range 5 {
			time.Sleep(admission.Window)
			if r := mcpwire.Serve(t, s, discover); r.Status != http.StatusOK {
				t.Fatalf("discover while the calls in flight wait for something else: %d %s", r.Status, r.Raw)
			}
		}
		// Now as many goroutines wait for a CPU as calls are in flight:
		// the limit drops to 3/4 of the 24 in flight, before this request
		// is admitted.
		runnable.Store(24)
		time.Sleep(admission.Window)
		r := mcpwire.Serve(t, s, call)
		if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" ||
			!strings.Contains(string(r.Raw), `"data":{"quota":"maxInFlightRequests","limit":18}`) {
			t.Errorf("a call past the lowered limit: %d, Retry-After %q, %s; want 503 with Retry-After naming the limit 18",
				r.Status, r.Header.Get("Retry-After"), r.Raw)
		}
		select {
		case <-g.started:
			t.Error("a shed call reached its handler")
		default:
		}
		// The delay stays: the limit goes on down to the floor, twice
		// GOMAXPROCS (at least 4, at most 18 here).
		for range 8 {
			time.Sleep(admission.Window)
			mcpwire.Serve(t, s, discover)
		}
		floor := min(max(4, 2*int64(runtime.GOMAXPROCS(0))), 18)
		if l := s.quota.adapt.Current(); l != floor {
			t.Errorf("limit after 8 more windows over the target: %d, want the floor %d", l, floor)
		}

		// The delay is gone: as calls reach the limit, it grows back to 64.
		delay.Store(0)
		releaseAll(24)
		held := 0
		for i := 0; held < 64; i++ {
			if i == 1000 {
				t.Fatalf("%d calls held after 1,000 windows without delay, want 64", held)
			}
			time.Sleep(admission.Window)
			r := mcpwire.Serve(t, s, discover)
			if r.Status == http.StatusOK {
				hold(1)
				held++
			}
		}
		time.Sleep(admission.Window)
		r = mcpwire.Serve(t, s, call)
		if r.Status != http.StatusServiceUnavailable || !strings.Contains(string(r.Raw), `"data":{"quota":"maxInFlightRequests","limit":64}`) {
			t.Errorf("a call past 64 in flight: %d %s; want 503 naming the limit 64", r.Status, r.Raw)
		}
		releaseAll(64)
		if n := s.quota.requests.Load(); n != 0 {
			t.Errorf("%d requests still counted in flight", n)
		}
	})
}

// TestAdaptiveInFlightOff: MaxQueueDelay Off, or MaxInFlightRequests Off,
// leaves no adaptive limit; the default has one, at MaxInFlightRequests.
func TestAdaptiveInFlightOff(t *testing.T) {
	if s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxQueueDelay: Off}}); s.quota.adapt != nil {
		t.Error("MaxQueueDelay Off: an adaptive limit")
	}
	if s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxInFlightRequests: Off}}); s.quota.adapt != nil {
		t.Error("MaxInFlightRequests Off: an adaptive limit")
	}
	s := NewServer(nil)
	if s.quota.adapt == nil || s.quota.adapt.Current() != defaultMaxInFlightRequests || s.quota.adapt.Target() != defaultMaxQueueDelay {
		t.Errorf("default: adaptive limit %+v, want one at %d with target %v", s.quota.adapt, defaultMaxInFlightRequests, defaultMaxQueueDelay)
	}
}

// TestAdaptiveQueueBeforeAdmission: with one CPU and handlers that only
// compute, requests queue before admission, as connection goroutines
// waiting for a CPU, and none is in flight when the next one enters. Once
// the scheduler delay stays above MaxQueueDelay with 100 goroutines
// waiting, the limit drops to 3/4 of them and the requests entering next
// are shed (503, Retry-After, before the body is read or the handler
// runs), as many per window as wait past the limit; once the queue is
// gone, requests are served again. The readers are the test's; time is
// the bubble's.
func TestAdaptiveQueueBeforeAdmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxInFlightRequests: 256}})
		ran := 0
		AddTool(s, &Tool{Name: "work", Description: "d"}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) {
			ran++
			return "done", nil
		})
		var delay, runnable atomic.Int64
		s.quota.adapt.SetReaders(func() (time.Duration, bool) { return time.Duration(delay.Load()), true }, runnable.Load)
		call := mcpwire.Request{Method: "tools/call", Params: `{"name":"work","arguments":{}}`}

		delay.Store(int64(50 * time.Millisecond))
		runnable.Store(100)
		for range 2 { // two windows over target: not yet a standing queue
			time.Sleep(admission.Window)
			if r := mcpwire.Serve(t, s, call); r.Status != http.StatusOK {
				t.Fatalf("before the queue stood for 3 windows: %d %s", r.Status, r.Raw)
			}
		}
		time.Sleep(admission.Window)
		shed := 0
		for range 40 {
			r := mcpwire.Serve(t, s, call)
			if r.Status == http.StatusOK {
				continue
			}
			shed++
			if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" ||
				!strings.Contains(string(r.Raw), `"data":{"quota":"maxInFlightRequests","limit":75}`) {
				t.Fatalf("a request in the queue before admission: %d, Retry-After %q, %s; want 503 with Retry-After naming the limit 75",
					r.Status, r.Header.Get("Retry-After"), r.Raw)
			}
		}
		if shed != 25 || ran != 2+15 {
			t.Errorf("100 waiting, limit 75: %d of 40 requests shed and %d handlers ran, want 25 shed (the excess) and 17 ran", shed, ran)
		}

		delay.Store(0)
		runnable.Store(0)
		for range 3 {
			time.Sleep(admission.Window)
			mcpwire.Serve(t, s, call)
		}
		time.Sleep(admission.Window)
		if r := mcpwire.Serve(t, s, call); r.Status != http.StatusOK {
			t.Errorf("the queue gone: %d %s, want 200", r.Status, r.Raw)
		}
	})
}
