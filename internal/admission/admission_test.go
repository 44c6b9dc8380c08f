package admission

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestAdaptStep is the adaptive in-flight limit's rule, one window at a
// time (target 5 ms, floor 16, ceiling 1024).
func TestAdaptStep(t *testing.T) {
	const target = 5 * time.Millisecond
	tests := []struct {
		name      string
		s         state
		d         time.Duration
		wantLimit int64
		wantHigh  int
	}{
		{"a first window over target waits", state{limit: 1024, inFlight: 400}, 20 * time.Millisecond, 1024, 1},
		{"a second one too", state{limit: 1024, inFlight: 400, high: 1}, 20 * time.Millisecond, 1024, 2},
		{"the third drops to 3/4 of the requests in flight", state{limit: 1024, inFlight: 400, runnable: 398, high: 2}, 20 * time.Millisecond, 300, 3},
		{"and on while it stays over", state{limit: 300, inFlight: 300, runnable: 150, high: 3}, 20 * time.Millisecond, 225, 4},
		{"not while most requests in flight wait for something else", state{limit: 300, inFlight: 300, runnable: 149, high: 3}, 20 * time.Millisecond, 300, 4},
		{"not while nothing waits for a CPU (the delay is another process's)", state{limit: 300, inFlight: 5, runnable: 0, high: 3}, 20 * time.Millisecond, 300, 4},
		{"the queue in front of admission: nothing in flight, 40 waiting", state{limit: 300, inFlight: 0, runnable: 40, high: 3}, 20 * time.Millisecond, 30, 4},
		{"one in flight, 400 waiting: 3/4 of the waiting", state{limit: 1024, inFlight: 1, runnable: 400, high: 2}, 20 * time.Millisecond, 300, 3},
		{"never below the floor", state{limit: 20, inFlight: 20, runnable: 20, high: 5}, time.Second, 16, 6},
		{"never above the limit it had", state{limit: 100, inFlight: 400, runnable: 400, high: 5}, 20 * time.Millisecond, 75, 6},
		{"at the target it holds", state{limit: 100, inFlight: 100, high: 5}, target, 100, 0},
		{"under the target but over half of it it holds", state{limit: 100, inFlight: 100, shed: true}, 3 * time.Millisecond, 100, 0},
		{"under half the target, reached: it grows by a quarter", state{limit: 100, inFlight: 80}, time.Millisecond, 126, 0},
		{"under half the target, shed: it grows", state{limit: 16, inFlight: 2, shed: true}, 0, 21, 0},
		{"under half the target, not reached: it holds", state{limit: 100, inFlight: 74}, 0, 100, 0},
		{"it grows up to the ceiling", state{limit: 1020, inFlight: 1020}, 0, 1024, 0},
		{"a quiet window ends a run over target", state{limit: 1024, inFlight: 400, high: 2}, time.Millisecond, 1024, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, h := step(tt.s, tt.d, target, 16, 1024)
			if l != tt.wantLimit || h != tt.wantHigh {
				t.Errorf("step(%+v, %v) = %d, %d; want %d, %d", tt.s, tt.d, l, h, tt.wantLimit, tt.wantHigh)
			}
		})
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
		if i == maxMerge {
			t.Fatalf("no window reported after %d reads", i+1)
		}
	}
}

// TestExcess: the requests to shed for the goroutines waiting for a CPU
// are the excess of the fewest over the last windows, never a burst.
func TestExcess(t *testing.T) {
	tests := []struct {
		name    string
		waiting []int64
		limit   int64
		want    int64
	}{
		{"nothing waits", []int64{0, 0, 0}, 4, 0},
		{"under the limit", []int64{3, 4, 2}, 4, 0},
		{"a burst in one window", []int64{0, 300, 2}, 4, 0},
		{"a standing queue: the excess of the fewest", []int64{120, 100, 150}, 4, 96},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := excess(tt.waiting, tt.limit); got != tt.want {
				t.Errorf("excess(%v, %d) = %d, want %d", tt.waiting, tt.limit, got, tt.want)
			}
		})
	}
}

// TestShedQueued drives a Limit window by window, the bubble's clock for
// time and the test's readers for the delay and the goroutines waiting
// for a CPU. It checks the queue in front of admission: with one request
// in flight and hundreds of goroutines waiting (one CPU, handlers that
// only compute), the requests that enter are shed, exactly as many per
// window as the waiting stood past the limit once the delay cut it, and
// none for a burst, while the delay is under target, or once the queue is
// gone.
func TestShedQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var delay, runnable atomic.Int64
		a := newLimit(1024, 5*time.Millisecond, func() (time.Duration, bool) { return time.Duration(delay.Load()), true })
		a.runnable = runnable.Load
		// sheds counts the true answers of ShedQueued, asking at most n
		// times (the requests entering in one window).
		sheds := func(n int) int {
			c := 0
			for range n {
				if a.ShedQueued() {
					c++
				}
			}
			return c
		}
		window := func(inFlight int64) {
			time.Sleep(Window)
			a.Tick(inFlight)
		}

		// Nothing waits: nothing is shed.
		for range 5 {
			window(1)
			if n := sheds(100); n != 0 {
				t.Fatalf("no queue: %d shed", n)
			}
		}
		// A burst: 300 waiting for one window, and the CPU catches up.
		runnable.Store(300)
		window(1)
		runnable.Store(2)
		window(1)
		if n := sheds(1000); n != 0 {
			t.Errorf("a one-window burst: %d shed, want 0", n)
		}
		// Many waiting, even past the ceiling, but the delay under its
		// target (goroutines that run soon, such as handlers woken at
		// once): nothing is shed.
		runnable.Store(1100)
		for range 2 * highWindows {
			window(1)
			if n := sheds(1000); n != 0 {
				t.Fatalf("1,100 waiting, no delay: %d shed, want 0", n)
			}
		}
		// The delay goes over the target with 400 waiting and one request
		// in flight: after highWindows windows the limit drops to 3/4 of
		// the waiting (300), and the excess over it is shed.
		runnable.Store(400)
		delay.Store(int64(50 * time.Millisecond))
		for range highWindows - 1 {
			window(1)
			sheds(1000)
		}
		window(1)
		if l := a.Current(); l != 300 {
			t.Errorf("limit after %d windows over target with 400 waiting: %d, want 300", highWindows, l)
		}
		if n := sheds(1000); n != 100 {
			t.Errorf("400 waiting, limit 300: %d shed, want 100", n)
		}
		a.Tick(1) // the same window: no new excess
		if n := sheds(1000); n != 0 {
			t.Errorf("again within the window: %d shed, want 0", n)
		}
		// It stays: the limit goes down to the floor, and the waiting past
		// it are shed each window.
		for range 30 {
			window(1)
			sheds(1000)
		}
		if l := a.Current(); l != a.floor {
			t.Errorf("limit after 30 more windows: %d, want the floor %d", l, a.floor)
		}
		window(1)
		if n, want := sheds(1000), int(400-a.floor); n != want {
			t.Errorf("400 waiting at the floor: %d shed, want %d", n, want)
		}
		// The queue is gone: within highWindows windows nothing is shed.
		runnable.Store(0)
		delay.Store(0)
		for range highWindows {
			window(1)
		}
		if n := sheds(1000); n != 0 {
			t.Errorf("queue gone: %d shed, want 0", n)
		}
	})
}
