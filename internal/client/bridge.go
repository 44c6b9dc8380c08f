package client

import "context"

// The command line's spec checks (`mcpkit discover --check`) send
// deliberately malformed requests on the public client's own connection,
// which the public API never exposes. They ask for it through the context
// they connect with: package github.com/mcpkit/mcpkit/client calls
// HandOver with the Session its Connect settled on, and a context made by
// WithSessionCapture keeps it. Nothing global is set, and a Connect with
// any other context hands nothing over.

type captureKey struct{}

// SessionCapture receives the Session of one public client's Connect.
type SessionCapture struct{ s *Session }

// Session returns the captured Session, or nil when Connect failed or was
// not called with the capturing context.
func (c *SessionCapture) Session() *Session { return c.s }

// WithSessionCapture returns a context that makes the public client's
// Connect hand its Session to the returned capture.
func WithSessionCapture(ctx context.Context) (context.Context, *SessionCapture) {
	c := &SessionCapture{}
	return context.WithValue(ctx, captureKey{}, c), c
}

// HandOver gives s to the capture in ctx, if there is one. Package client's
// Connect calls it once it has settled on s.
func HandOver(ctx context.Context, s *Session) {
	if c, ok := ctx.Value(captureKey{}).(*SessionCapture); ok {
		c.s = s
	}
}
