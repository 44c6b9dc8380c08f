//go:build race

package mcp

import (
	"sync"
	"weak"
)

// releaseGuard catches a reqBuf released twice, in the race build. The
// buffers released and not handed out again are kept in a set of weak
// pointers: a released buffer's second release panics, and one that
// getReqBuf hands out again leaves the set. Weak pointers neither keep a
// buffer alive nor match another buffer made later at the same address,
// and the steady state (pooled buffers going round) allocates nothing, so
// the allocation pins hold in the race build too.
type releaseGuard struct{}

var released struct {
	sync.Mutex
	set map[weak.Pointer[[]byte]]struct{}
}

func newReleaseGuard() releaseGuard { return releaseGuard{} }

// acquired records that p was handed out.
func (releaseGuard) acquired(p *[]byte) {
	released.Lock()
	delete(released.set, weak.Make(p))
	released.Unlock()
}

// release records that p is released, and panics if it was already.
func (releaseGuard) release(p *[]byte) {
	w := weak.Make(p)
	released.Lock()
	defer released.Unlock()
	if _, ok := released.set[w]; ok {
		panic("mcp: a pooled request buffer was released twice (a reqBuf copied instead of taken)")
	}
	if released.set == nil {
		released.set = make(map[weak.Pointer[[]byte]]struct{})
	}
	if len(released.set) >= 4096 {
		for k := range released.set {
			if k.Value() == nil {
				delete(released.set, k)
			}
		}
	}
	released.set[w] = struct{}{}
}
