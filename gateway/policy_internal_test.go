package gateway

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestLimiterRefills(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(RateLimit{Count: 10, Per: time.Second, Burst: 2})
		for i := range 2 {
			if ok, _ := l.allow("ann"); !ok {
				t.Fatalf("call %d within the burst refused", i)
			}
		}
		ok, wait := l.allow("ann")
		if ok || wait != 100*time.Millisecond {
			t.Fatalf("past the burst: %v, wait %v; want refused, 100ms", ok, wait)
		}
		if ok, _ := l.allow("bob"); !ok {
			t.Error("another principal shares ann's bucket")
		}
		time.Sleep(wait - time.Millisecond)
		if ok, _ := l.allow("ann"); ok {
			t.Error("a token before its time")
		}
		time.Sleep(time.Millisecond)
		if ok, _ := l.allow("ann"); !ok {
			t.Error("no token once the wait passed")
		}
	})
}

// TestLimiterBounded checks that past MaxRateKeys callers share one bucket
// until the idle callers' full buckets are dropped.
func TestLimiterBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(RateLimit{Count: 1, Per: time.Second, Burst: 1})
		for i := range MaxRateKeys {
			l.allow(strconv.Itoa(i))
		}
		if ok, _ := l.allow("new1"); !ok {
			t.Fatal("the first caller past MaxRateKeys refused: the shared bucket is full")
		}
		if ok, _ := l.allow("new2"); ok {
			t.Fatal("a second caller past MaxRateKeys has a bucket of its own")
		}
		if n := len(l.buckets); n != MaxRateKeys {
			t.Fatalf("%d buckets, want %d", n, MaxRateKeys)
		}
		time.Sleep(time.Second) // every bucket is full again: the callers are idle
		if ok, _ := l.allow("new2"); !ok {
			t.Fatal("refused once the idle buckets could go")
		}
		if n := len(l.buckets); n != 1 {
			t.Errorf("%d buckets after the sweep, want 1 (new2's)", n)
		}
	})
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"10/s", "1/h", "600/m", "0/s", "1/d", "/s", "1e3/s", "+1/s", "010/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			return
		}
		if r.Count <= 0 || r.Count > MaxRate || r.String() != s {
			t.Fatalf("ParseRate(%q) = %+v, String %q", s, r, r.String())
		}
	})
}

// TestDownReasonRedacts checks that /readyz does not show a backend's
// header or env values, nor more than maxWhyBytes of its reason.
func TestDownReasonRedacts(t *testing.T) {
	s := &ServerConfig{URL: "http://u:pa55word@h/mcp", Headers: map[string]string{"Authorization": "Bearer s3cr3t-token"}, Env: map[string]string{"LOG": "info"}}
	b := &backend{name: "files", secrets: s.secrets()}
	why := "dial with Bearer s3cr3t-token and pa55word failed; the token s3cr3t-token again; log info " + strings.Repeat("x", 1000)
	b.why.Store(&why)
	got := b.downReason(context.Background())
	want := "not started: dial with [redacted] and [redacted] failed; the token [redacted] again; log info "
	if !strings.HasPrefix(got, want) || len(got) > maxWhyBytes {
		t.Errorf("downReason = %q (%d bytes)\nwant prefix %q, at most %d bytes", got, len(got), want, maxWhyBytes)
	}
}
