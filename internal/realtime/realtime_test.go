package realtime

import (
	"strings"
	"testing"
	"time"
)

// fakeTB records a Fatalf instead of ending the test.
type fakeTB struct {
	testing.TB
	failed string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = format
	panic(f)
}

func poll(within time.Duration, cond func() bool) (failed string) {
	f := &fakeTB{}
	defer func() {
		if p := recover(); p != nil && p != any(f) {
			panic(p)
		}
		failed = f.failed
	}()
	Poll(f, within, "the thing", cond)
	return ""
}

func TestPoll(t *testing.T) {
	n := 0
	if failed := poll(time.Minute, func() bool { n++; return n == 3 }); failed != "" || n != 3 {
		t.Errorf("Poll of a condition true on the third call: %d calls, failed %q", n, failed)
	}
	// A condition that never holds fails once the deadline passed
	// (real time, a few milliseconds: this is the helper's own clock).
	if failed := poll(5*time.Millisecond, func() bool { return false }); !strings.Contains(failed, "timed out after") {
		t.Errorf("Poll of a condition that never holds: failed %q, want a timeout", failed)
	}
}
