//go:build race

package mcp

import "sync/atomic"

// releaseGuard catches a reqBuf released twice, in the race build: the
// handles of one buffer share the flag.
type releaseGuard struct{ released *atomic.Bool }

func newReleaseGuard() releaseGuard { return releaseGuard{new(atomic.Bool)} }

func (g releaseGuard) release() {
	if g.released != nil && g.released.Swap(true) {
		panic("mcp: a pooled request buffer was released twice (a reqBuf copied instead of taken)")
	}
}
