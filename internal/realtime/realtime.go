// Package realtime holds the one wait on the wall clock that mcpkit's tests
// allow: polling, with a deadline, for a state whose time an outside party
// owns.
//
// A test waits on an event where the code under test can signal one (a
// channel it closes, a hook, a log line), and runs in a testing/synctest
// bubble where the time is the test's own (timers, TTLs, keep-alives in
// process). What is left is time that no bubble can hold: a Redis server
// expiring a key, a child process or nginx coming up, the kernel reporting
// a socket's state, net/http's own deadlines on a real connection. For
// those, Poll checks a condition until it holds or the deadline passes, and
// then fails the test saying what it waited for.
package realtime

import (
	"testing"
	"time"
)

// Poll calls cond until it reports true, failing tb (with what, and how long
// it waited) if within passes first. The pause between calls starts at 1 ms
// and doubles up to 50 ms, so that a fast answer is seen at once and a slow
// one does not busy the machine.
//
// Use it only where an outside process or the kernel owns the time, and say
// at the call which one; in-process waits use an event or a synctest bubble.
func Poll(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(within)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}
