package admission

import (
	"sync"
	"testing"
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
		{"not while nothing is in flight", state{limit: 300, inFlight: 0, runnable: 40, high: 3}, 20 * time.Millisecond, 300, 4},
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
