package mcp

import (
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// TestAdaptStep is the adaptive in-flight limit's rule, one window at a
// time (target 5 ms, floor 16, ceiling 1024).
func TestAdaptStep(t *testing.T) {
	const target = 5 * time.Millisecond
	tests := []struct {
		name      string
		s         adaptState
		d         time.Duration
		wantLimit int64
		wantHigh  int
	}{
		{"a first window over target waits", adaptState{limit: 1024, inFlight: 400}, 20 * time.Millisecond, 1024, 1},
		{"a second one too", adaptState{limit: 1024, inFlight: 400, high: 1}, 20 * time.Millisecond, 1024, 2},
		{"the third drops to 3/4 of the requests in flight", adaptState{limit: 1024, inFlight: 400, runnable: 398, high: 2}, 20 * time.Millisecond, 300, 3},
		{"and on while it stays over", adaptState{limit: 300, inFlight: 300, runnable: 150, high: 3}, 20 * time.Millisecond, 225, 4},
		{"not while most requests in flight wait for something else", adaptState{limit: 300, inFlight: 300, runnable: 149, high: 3}, 20 * time.Millisecond, 300, 4},
		{"not while nothing is in flight", adaptState{limit: 300, inFlight: 0, runnable: 40, high: 3}, 20 * time.Millisecond, 300, 4},
		{"never below the floor", adaptState{limit: 20, inFlight: 20, runnable: 20, high: 5}, time.Second, 16, 6},
		{"never above the limit it had", adaptState{limit: 100, inFlight: 400, runnable: 400, high: 5}, 20 * time.Millisecond, 75, 6},
		{"at the target it holds", adaptState{limit: 100, inFlight: 100, high: 5}, target, 100, 0},
		{"under the target but over half of it it holds", adaptState{limit: 100, inFlight: 100, shed: true}, 3 * time.Millisecond, 100, 0},
		{"under half the target, reached: it grows by a quarter", adaptState{limit: 100, inFlight: 80}, time.Millisecond, 126, 0},
		{"under half the target, shed: it grows", adaptState{limit: 16, inFlight: 2, shed: true}, 0, 21, 0},
		{"under half the target, not reached: it holds", adaptState{limit: 100, inFlight: 74}, 0, 100, 0},
		{"it grows up to the ceiling", adaptState{limit: 1020, inFlight: 1020}, 0, 1024, 0},
		{"a quiet window ends a run over target", adaptState{limit: 1024, inFlight: 400, high: 2}, time.Millisecond, 1024, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, h := adaptStep(tt.s, tt.d, target, 16, 1024)
			if l != tt.wantLimit || h != tt.wantHigh {
				t.Errorf("adaptStep(%+v, %v) = %d, %d; want %d, %d", tt.s, tt.d, l, h, tt.wantLimit, tt.wantHigh)
			}
		})
	}
}

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
		s.quota.adapt.read = func() (time.Duration, bool) { return time.Duration(delay.Load()), true }
		var runnable atomic.Int64 // goroutines waiting for a CPU
		s.quota.adapt.runnable = runnable.Load

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
			time.Sleep(adaptWindow)
			if r := mcpwire.Serve(t, s, discover); r.Status != http.StatusOK {
				t.Fatalf("discover while the calls in flight wait for something else: %d %s", r.Status, r.Raw)
			}
		}
		// Now as many goroutines wait for a CPU as calls are in flight:
		// the limit drops to 3/4 of the 24 in flight, before this request
		// is admitted.
		runnable.Store(24)
		time.Sleep(adaptWindow)
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
			time.Sleep(adaptWindow)
			mcpwire.Serve(t, s, discover)
		}
		floor := min(max(4, 2*int64(runtime.GOMAXPROCS(0))), 18)
		if l := s.quota.adapt.limit.Load(); l != floor {
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
			time.Sleep(adaptWindow)
			r := mcpwire.Serve(t, s, discover)
			if r.Status == http.StatusOK {
				hold(1)
				held++
			}
		}
		time.Sleep(adaptWindow)
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
	if s.quota.adapt == nil || s.quota.adapt.limit.Load() != defaultMaxInFlightRequests || s.quota.adapt.target != defaultMaxQueueDelay {
		t.Errorf("default: adaptive limit %+v, want one at %d with target %v", s.quota.adapt, defaultMaxInFlightRequests, defaultMaxQueueDelay)
	}
}

// TestReadSchedLatency: the runtime's scheduler latency is readable here,
// and a reader reports a window once it has enough samples.
func TestReadSchedLatency(t *testing.T) {
	read := readSchedLatency()
	if _, ok := read(); ok {
		t.Error("the first read reported a window: it has nothing to compare with")
	}
	for i := 0; ; i++ {
		var wg sync.WaitGroup
		for range 64 { // scheduling events
			wg.Go(func() {})
		}
		wg.Wait()
		if d, ok := read(); ok {
			if d < 0 || d > time.Minute {
				t.Errorf("delay %v", d)
			}
			return
		}
		if i == adaptMaxMerge {
			t.Fatalf("no window reported after %d reads", i+1)
		}
	}
}
