package bridge

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/client"
)

// This file detects a backend that stops answering without exiting (a
// deadlock, a stopped process, a wedged event loop). The probe session is
// pinged every PingInterval; a pooled session is pinged every
// PingInterval while calls are in flight on it. A ping without an answer
// within PingTimeout closes the session (a stdio backend's process is
// ended): its calls in flight get -32603 saying that the backend stopped
// answering, a pooled session is replaced at the next call, and the probe
// session's end restarts the backend as an exit does.

// watch pings c every PingInterval while busy reports true, until c ends.
// A ping that gets no answer within PingTimeout sets hung and closes c.
func (b *Bridge) watch(c *client.Client, hung *atomic.Bool, busy func() bool) {
	if b.opts.PingInterval < 0 {
		return
	}
	t := time.NewTicker(b.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.Done():
			return
		case <-t.C:
		}
		if !busy() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), ownCall{}, true), b.opts.PingTimeout)
		err := c.Ping(ctx)
		timedOut := ctx.Err() != nil
		cancel()
		if err == nil || !timedOut || errors.Is(err, client.ErrClosed) {
			continue // it answered (an error answer is an answer), or it ended
		}
		hung.Store(true)
		b.log.Warn("bridge: the backend stopped answering; ending it", "ping_timeout", b.opts.PingTimeout)
		c.Close()
		return
	}
}

// hungReason is how a call learns that its backend was ended for not
// answering.
func (b *Bridge) hungReason() string {
	return "it stopped answering: no answer to a ping within " + b.opts.PingTimeout.String()
}
