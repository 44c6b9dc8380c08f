package gateway

import (
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
