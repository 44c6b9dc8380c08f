package mcp

// reqBuf is the pooled buffer of one HTTP request: its body, then its
// response after it. It has one owner at a time. ServeHTTP owns it first;
// a path that keeps the body beyond ServeHTTP (a legacy session's call,
// whose handler may outlive the POST) takes it with take, which leaves the
// giver's handle empty; the owner at the end gives it back to the pool
// with release, which empties the handle, so that a deferred release after
// a take or an early release does nothing.
//
// A reqBuf is a value: copying one instead of taking it makes two owners.
// The race build (where the tests run) catches that: a buffer released
// through both handles panics (reqbuf_race.go), before it could go into
// the pool twice. The normal build pays nothing for the check.
type reqBuf struct {
	p     *[]byte // nil: the handle is empty (taken or released)
	guard releaseGuard
}

// getReqBuf returns a pooled buffer owned by the caller.
func (s *Server) getReqBuf() reqBuf {
	b := reqBuf{p: s.getBuf(), guard: newReleaseGuard()}
	b.guard.acquired(b.p)
	return b
}

// take moves the buffer to the caller: b is left empty.
func (b *reqBuf) take() reqBuf {
	t := *b
	*b = reqBuf{}
	return t
}

// release gives the buffer back to s's pool and empties b; an empty b does
// nothing.
func (b *reqBuf) release(s *Server) {
	if b.p == nil {
		return
	}
	b.guard.release(b.p)
	s.putBuf(b.p)
	*b = reqBuf{}
}
