package gateway

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

func TestMergeHint(t *testing.T) {
	pub := func(ttl time.Duration) *mcp.CacheHint { return &mcp.CacheHint{TTL: ttl, Scope: mcp.CachePublic} }
	priv := func(ttl time.Duration) *mcp.CacheHint { return &mcp.CacheHint{TTL: ttl, Scope: mcp.CachePrivate} }
	for _, tc := range []struct {
		name string
		a, b *mcp.CacheHint
		want mcp.CacheHint
	}{
		{"first part", nil, pub(time.Minute), *pub(time.Minute)},
		{"no hint", pub(time.Minute), nil, *pub(time.Minute)},
		{"private wins", pub(time.Minute), priv(time.Hour), *priv(time.Minute)},
		{"smaller TTL", priv(time.Hour), pub(time.Second), *priv(time.Second)},
		{"off is smallest", pub(time.Second), pub(mcp.Off), *pub(mcp.Off)},
		{"default yields", pub(0), pub(time.Minute), *pub(time.Minute)},
		{"default does not lower", pub(time.Minute), pub(0), *pub(time.Minute)},
	} {
		if got := mergeHint(tc.a, tc.b); *got != tc.want {
			t.Errorf("%s: mergeHint = %+v, want %+v", tc.name, *got, tc.want)
		}
	}
}

// TestIndexBounds checks the resource index's cap and that a URI listed by
// two backends is warned about once, however often it is listed.
func TestIndexBounds(t *testing.T) {
	defer func(n int) { maxIndexURIs = n }(maxIndexURIs)
	maxIndexURIs = 2
	var logs strings.Builder
	r := &router{log: slog.New(slog.NewTextHandler(&logs, nil))}
	a, b := &backend{name: "a", index: 0}, &backend{name: "b", index: 1}
	for range 3 {
		r.res.saw(r, b, "x://1")
		r.res.saw(r, a, "x://1")
	}
	if got := r.res.lookup("x://1"); len(got) != 1 || got[0] != a {
		t.Errorf("x://1 routes to %v, want a (first in config order)", got)
	}
	if n := strings.Count(logs.String(), "two backends list one resource URI"); n != 1 {
		t.Errorf("the duplicate URI was warned about %d times, want once", n)
	}
	r.res.saw(r, a, "x://2")
	r.res.saw(r, a, "x://3") // past the cap
	if got := r.res.lookup("x://3"); len(got) != 0 {
		t.Errorf("a URI past the cap routes to %v, want nowhere", got)
	}
	if !strings.Contains(logs.String(), "the resource index is full") {
		t.Error("no warning that the index is full")
	}
}

// TestCapTTL checks Options.MaxListTTL on a merged list's hint: a longer
// TTL (the front's default one hour, for 0) is lowered to it, a shorter
// one and Off stay.
func TestCapTTL(t *testing.T) {
	for _, tc := range []struct {
		name       string
		max, cache time.Duration
		in, want   time.Duration
	}{
		{"no cap", 0, 0, time.Hour, time.Hour},
		{"longer", 5 * time.Second, 0, time.Minute, 5 * time.Second},
		{"shorter", 5 * time.Second, 0, time.Second, time.Second},
		{"off", 5 * time.Second, 0, mcp.Off, mcp.Off},
		{"default one hour", 5 * time.Second, 0, 0, 5 * time.Second},
		{"default set shorter", 5 * time.Second, time.Second, 0, 0},
		{"default set longer", 5 * time.Second, time.Minute, 0, 5 * time.Second},
	} {
		r := &router{maxTTL: tc.max, cacheTTL: tc.cache}
		h := &mcp.CacheHint{TTL: tc.in}
		r.capTTL(h)
		if h.TTL != tc.want {
			t.Errorf("%s: TTL %v, want %v", tc.name, h.TTL, tc.want)
		}
	}
}
