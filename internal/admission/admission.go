// Package admission is mcp's adaptive in-flight limit
// (mcp.QuotaOptions.MaxQueueDelay): a limit on the requests in flight that
// drops when requests queue for the CPU (the Go scheduler's latency, from
// runtime/metrics) and grows back when they do not. mcp asks it whether a
// request may enter; the rule itself (step) is a pure function.
//
// The queue is not always behind admission. With few CPUs and handlers
// that only compute, each handler runs to its end before the next
// connection's goroutine gets a CPU, so the requests in flight stay at
// one or two while hundreds of connection goroutines wait runnable in the
// Go scheduler's run queues, before their request reaches admission
// (measured at GOMAXPROCS 1 with 5 ms handlers, bench/NOTES.md). A limit
// on the requests in flight alone never binds there. So the limit also
// counts the goroutines waiting for a CPU (runtime/metrics
// /sched/goroutines/runnable): when the delay has cut the limit and more
// goroutines stay waiting than it allows, the requests that reach
// admission next, the ones that waited longest, are shed, as many as the
// excess (ShedQueued).
package admission

import (
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The adaptive in-flight limit (mcp.QuotaOptions.MaxQueueDelay). It is
// adjusted by the requests themselves, at most once per Window, by
// whichever request enters first after the window has passed: no
// goroutine of its own, and nothing at all on an idle server.
const (
	// Window is how often the limit is adjusted, at most.
	Window = 10 * time.Millisecond
	// highWindows is how many windows in a row the delay must stay
	// above the target before the limit drops: a burst (a GC cycle, a
	// wave of arrivals) is not a standing queue.
	highWindows = 3
	// floorPerCPU, times GOMAXPROCS, is the least the adaptive
	// limit drops to (at least minFloor, at most
	// MaxInFlightRequests): enough to keep every CPU busy while one
	// request per CPU waits for I/O. Measured on 2 cores with 1 ms
	// handlers at 2x capacity on a starved host (bench/NOTES.md), a floor
	// of 16 let requests wait 1-1.6 s before admission, 4 about 0.2 s.
	floorPerCPU = 2
	minFloor    = 4
	// minSamples is the least sampled scheduling events a window
	// needs to count; fewer say little about queueing.
	minSamples = 8
	// maxMerge is the most windows merged to get minSamples.
	maxMerge = 10
)

// Limit is an adaptive in-flight limit: requests call Tick as they enter,
// read Current, and call Shed when they are refused. It is safe for
// concurrent use; New makes one.
type Limit struct {
	limit atomic.Int64
	shed  atomic.Bool // a request was refused in this window
	// queued is how many of the requests entering in this window are
	// still to be shed for the goroutines waiting for a CPU past the
	// limit (ShedQueued); set at each window.
	queued atomic.Int64
	next   atomic.Int64 // when the next window ends, in ns since start
	start  time.Time
	max    int64
	floor  int64
	target time.Duration

	mu   sync.Mutex // held by the request that adjusts the limit
	high int        // windows in a row with the delay above target
	// waiting holds the goroutines waiting for a CPU at the end of the
	// last highWindows windows (a ring, at pos): the excess sheds only
	// when it stands through all of them, not for a burst.
	waiting [highWindows]int64
	pos     int
	// read returns the delay of the window just ended (the 90th
	// percentile of the scheduling latency since the last read) and
	// whether it had enough samples to count.
	read func() (time.Duration, bool)
	// runnable returns the goroutines waiting for a CPU now.
	runnable func() int64
}

// New returns a limit that starts at ceiling and keeps the Go scheduler's
// latency under target (runtime/metrics), between its floor (twice
// GOMAXPROCS, at least 4, at most ceiling) and ceiling.
func New(ceiling int64, target time.Duration) *Limit {
	a := newLimit(ceiling, target, readSchedLatency())
	a.runnable = readRunnable()
	return a
}

// Current returns the limit in force.
func (a *Limit) Current() int64 { return a.limit.Load() }

// Shed records that a request was refused in this window.
func (a *Limit) Shed() { a.shed.Store(true) }

// ShedQueued reports whether the request entering now is to be shed
// because goroutines waiting for a CPU in front of admission stood above
// the limit through the last windows, while the delay kept the limit
// under its ceiling; each true takes one of the window's excess. A
// request entering now waited in that queue, and the longest waiting
// enter first (the run queue is first in, first out for goroutines the
// network poller readies): shedding them, before their body is read,
// drains the queue at the cost of a 503 each. On a server without such a
// queue it costs one atomic load.
func (a *Limit) ShedQueued() bool {
	return a.queued.Load() > 0 && a.queued.Add(-1) >= 0
}

// Target returns the scheduling delay the limit keeps under.
func (a *Limit) Target() time.Duration { return a.target }

// SetReaders replaces the readers of the scheduling delay and of the
// goroutines waiting for a CPU (for tests that drive the limit).
func (a *Limit) SetReaders(delay func() (time.Duration, bool), runnable func() int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.read, a.runnable = delay, runnable
}

func newLimit(ceiling int64, target time.Duration, read func() (time.Duration, bool)) *Limit {
	floor := min(max(minFloor, floorPerCPU*int64(runtime.GOMAXPROCS(0))), ceiling)
	a := &Limit{max: ceiling, floor: floor, target: target, read: read, start: time.Now()}
	a.limit.Store(ceiling)
	a.next.Store(int64(Window))
	return a
}

// Tick adjusts the limit when a window has passed; inFlight is the count
// of requests in flight. Requests call it as they enter: the limit has no
// goroutine of its own.
func (a *Limit) Tick(inFlight int64) {
	now := int64(time.Since(a.start))
	if now < a.next.Load() || !a.mu.TryLock() {
		return
	}
	defer a.mu.Unlock()
	if now < a.next.Load() {
		return
	}
	a.next.Store(now + int64(Window))
	// The goroutines waiting for a CPU now (a look at the run queues,
	// O(GOMAXPROCS)), every window: unlike the delay, it needs no
	// samples, and it sees the queue in front of admission at once.
	runnable := int64(0)
	if a.runnable != nil {
		runnable = a.runnable()
	}
	a.waiting[a.pos] = runnable
	a.pos = (a.pos + 1) % highWindows
	d, ok := a.read()
	if ok {
		st := state{limit: a.limit.Load(), inFlight: inFlight, shed: a.shed.Swap(false), high: a.high, runnable: runnable}
		l, high := step(st, d, a.target, a.floor, a.max)
		a.limit.Store(l)
		a.high = high
	}
	// Only while the delay keeps the limit under its ceiling: the count
	// says how many to shed, the delay whether requests wait too long.
	// (Goroutines waiting briefly, such as many handlers woken at once
	// from a wait, shed nothing while the delay stays under target.)
	q := int64(0)
	if l := a.limit.Load(); l < a.max {
		q = excess(a.waiting[:], l)
	}
	a.queued.Store(q)
}

// excess returns how many requests to shed for the goroutines waiting for
// a CPU: by how much the fewest of them over the last windows (waiting,
// one count a window) passed limit, 0 when they did not. The fewest, so
// that a burst of arrivals that the CPUs absorb within a window or two
// sheds nothing.
func excess(waiting []int64, limit int64) int64 {
	return max(0, slices.Min(waiting)-limit)
}

// state is what one step of the adaptive limit starts from.
type state struct {
	limit, inFlight int64
	shed            bool // a request was refused in the window
	high            int  // windows in a row with the delay above target before this one
	// runnable counts the goroutines waiting for a CPU at the end of the
	// window.
	runnable int64
}

// step returns the limit after a window whose delay was d, and the
// count of windows in a row above target.
func step(s state, d, target time.Duration, floor, ceiling int64) (limit int64, high int) {
	switch {
	case d > target:
		high = s.high + 1
		if high < highWindows {
			return s.limit, high
		}
		if s.runnable == 0 || s.runnable*2 < s.inFlight {
			// Nothing waits for a CPU (the delay was someone else's:
			// other processes), or most requests in flight wait (for a
			// backend, a client), not for a CPU: fewer of them would not
			// shorten the queue.
			return s.limit, high
		}
		// A standing queue: drop to 3/4 of what is in flight or waiting
		// for a CPU, whichever is more (the limit may be far above both),
		// and again each window it stays. The goroutines waiting count
		// because the queue may be in front of admission: with few CPUs
		// and handlers that only compute, one or two requests are in
		// flight while the rest wait runnable to reach admission.
		return min(s.limit, max(floor, min(s.limit, max(s.inFlight, s.runnable))*3/4)), high
	case d < target/2 && (s.shed || s.inFlight >= s.limit*3/4):
		// No queueing, and the limit binds: grow, by a quarter, so that
		// a limit cut by a burst of delay that shedding could not help
		// (the host took the CPU) comes back in a few tens of ms.
		return min(ceiling, s.limit+s.limit/4+1), 0
	}
	return s.limit, 0
}

// readRunnable returns a reader of the goroutines waiting for a CPU, from
// runtime/metrics (a look at the run queues, under the scheduler's lock).
func readRunnable() func() int64 {
	sample := []metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}}
	return func() int64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 1 << 62 // unknown: do not hold the limit up
		}
		return int64(sample[0].Value.Uint64())
	}
}

// readSchedLatency returns a reader of the Go scheduler's latency: the
// 90th percentile of the time goroutines waited runnable since the last
// window it reported, from runtime/metrics. The runtime records only a
// sample of the scheduling events (one in eight per goroutine), so a
// window with fewer than minSamples of them is not reported but
// merged into the next, up to maxMerge windows: after that, so
// little scheduling happened that nothing queued, and it reports 0.
func readSchedLatency() func() (time.Duration, bool) {
	sample := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	var prev []uint64
	merged := 0
	return func() (time.Duration, bool) {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindFloat64Histogram {
			return 0, false
		}
		h := sample[0].Value.Float64Histogram()
		if prev == nil {
			prev = slices.Clone(h.Counts)
			return 0, false
		}
		var total uint64
		for i, c := range h.Counts {
			total += c - prev[i]
		}
		if total < minSamples {
			if merged++; merged < maxMerge {
				return 0, false
			}
		}
		merged = 0
		d := time.Duration(0)
		if total > 0 {
			// The bucket holding the 90th percentile; its lower bound.
			want, seen := total-total/10, uint64(0)
			for i, c := range h.Counts {
				seen += c - prev[i]
				if seen >= want {
					d = time.Duration(max(h.Buckets[i], 0) * 1e9)
					break
				}
			}
		}
		copy(prev, h.Counts)
		return d, true
	}
}
