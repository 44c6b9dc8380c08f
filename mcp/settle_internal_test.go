package mcp

import (
	"testing"
	"testing/synctest"
	"time"
)

// settle waits, inside a synctest bubble, until cond holds. Each round lets
// every goroutine of the bubble run until it blocks (synctest.Wait) and then
// checks cond; while it does not hold, the bubble's clock moves on by a
// millisecond, which fires what is due (heartbeats, keep-alives, TTLs).
// After 5 s of the bubble's time it fails, saying what it waited for.
//
// It panics outside a bubble (synctest.Wait does), so that no test of
// package mcp falls back on the wall clock by mistake: waits on real
// sockets use realtime.Poll and say why.
func settle(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		synctest.Wait()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s did not happen within 5s of the bubble's time", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Settle is settle for the tests of package mcp_test.
func Settle(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	settle(tb, what, cond)
}
