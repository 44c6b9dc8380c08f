package servers

import (
	"sync/atomic"
	"time"
)

// The overload case's tools (bench/overload.sh). Every implementation
// registers both, with the same {"text": string} input as echo, validated
// the same way, and the text as the result: burn does BurnIters rounds of a
// fixed integer loop first (about 1 ms of CPU, calibrated by the driver and
// given to every server, so that each does the same work), sleep waits
// SleepFor without using the CPU (a call to a slow backend).
const (
	BurnTool  = "burn"
	BurnDesc  = "Spends about a millisecond of CPU, then echoes the given text."
	SleepTool = "sleep"
	SleepDesc = "Waits 50 ms, then echoes the given text."
	// SleepFor is how long the sleep tool waits.
	SleepFor = 50 * time.Millisecond
)

// BurnIters is the number of rounds of Burn the burn tool does per call;
// benchserver -burn-iters sets it (bench/overload.sh calibrates it once,
// with CalibrateBurn, and gives the same count to every implementation).
var BurnIters = 200_000

// burnSink keeps the compiler from dropping Burn's loop.
var burnSink atomic.Uint64

// Burn does n rounds of a xorshift step: pure CPU, no memory traffic, no
// allocation. Its result goes to a sink so that the loop is not optimised
// away.
func Burn(n int) {
	x := uint64(0x9E3779B97F4A7C15)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	burnSink.Store(x)
}

// CalibrateBurn returns the rounds of Burn that take about d of CPU on this
// machine: the fastest of several timed runs, so that other load on the
// machine makes the count too high rather than too low by as little as
// possible.
func CalibrateBurn(d time.Duration) int {
	const probe = 100_000
	best := time.Duration(1 << 62)
	for range 20 {
		t0 := time.Now()
		Burn(probe)
		best = min(best, time.Since(t0))
	}
	if best <= 0 {
		best = 1
	}
	return max(1, int(int64(probe)*int64(d)/int64(best)))
}

// sleepCtx waits SleepFor or until done is closed, reporting whether the
// whole wait happened.
func sleepCtx(done <-chan struct{}) bool {
	t := time.NewTimer(SleepFor)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}
