//go:build race

package mcp

import (
	"strings"
	"testing"
)

// TestReqBufDoubleRelease: in the race build, a request buffer released
// through two handles (one copied instead of taken) panics, and one taken
// before its giver's deferred release is released once.
func TestReqBufDoubleRelease(t *testing.T) {
	s := NewServer(nil)
	taken := func() {
		b := s.getReqBuf()
		defer b.release(s)
		c := b.take()
		c.release(s)
	}
	taken() // must not panic

	defer func() {
		p := recover()
		if p == nil || !strings.Contains(p.(string), "released twice") {
			t.Errorf("a copied buffer released twice: recovered %v, want the double-release panic", p)
		}
	}()
	b := s.getReqBuf()
	c := b // a copy, not a take: two owners
	c.release(s)
	b.release(s)
}
