package client

import (
	"context"
	"errors"
	"time"

	iclient "github.com/mcpkit/mcpkit/internal/client"
)

// How Connect told the server's era, for tools that report it (`mcpkit
// discover`): the requests it sent, what each answer was and meant, and,
// when it failed, why.

// Step is one request Connect sent while telling the server's era.
type Step struct {
	// Request says what was sent: "server/discover at 2026-07-28", ...
	Request string
	// Answer summarizes what came back; Meaning is the conclusion drawn.
	Answer, Meaning string
	// Status is the HTTP status of the answer; 0 on other transports or
	// when nothing came back.
	Status int
	// Latency is the round trip; zero when nothing came back.
	Latency time.Duration
}

// FailKind classifies why Connect failed.
type FailKind int

// Kinds of failure.
const (
	// Unreachable: nothing answered (connection refused, command not
	// found, no answer to any request within the timeout).
	Unreachable FailKind = FailKind(iclient.Unreachable)
	// NotMCP: something answered, but not as an MCP server of either era.
	NotMCP FailKind = FailKind(iclient.NotMCP)
	// Incompatible: an MCP server, but no protocol version in common.
	Incompatible FailKind = FailKind(iclient.Incompatible)
)

func (k FailKind) String() string { return iclient.FailKind(k).String() }

// ConnectError is returned by Connect when it could not settle an era
// and version with the server: the kind of failure and the steps taken.
// Match it with errors.As.
type ConnectError struct {
	Kind  FailKind
	Steps []Step
	// Exit is how a stdio server's process ended, when it had ended by
	// the time Connect gave up (it is stopped first); nil otherwise.
	Exit *ProcessExit
	err  *iclient.ConnectError
}

func (e *ConnectError) Error() string { return "client: " + e.err.Error() }

// Unwrap returns the underlying cause (a *TransportError, say).
func (e *ConnectError) Unwrap() error { return publicError(e.err.Err) }

// connectError converts the negotiation's failure on conn (closed by
// then) to a *ConnectError; other errors come back as they are.
func connectError(err error, conn iclient.Conn) error {
	var ce *iclient.ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	out := &ConnectError{Kind: FailKind(ce.Kind), Steps: steps(ce.Steps), err: ce}
	if e, ok := processExit(conn); ok {
		out.Exit = &e
	}
	return out
}

// ProcessExit says how a stdio server's process ended.
type ProcessExit struct {
	// Code is the exit status, or -1 when a signal ended the process.
	Code int
	// Forced names the signal the client had to send ("SIGTERM",
	// "SIGKILL"), or is "" when the process exited once its stdin closed.
	Forced string
	// AfterStdinClose is how long the process took to exit after its
	// stdin was closed.
	AfterStdinClose time.Duration
}

func processExit(conn iclient.Conn) (ProcessExit, bool) {
	sc, ok := conn.(*iclient.StreamConn)
	if !ok {
		return ProcessExit{}, false
	}
	e, ok := sc.Exit()
	return ProcessExit{Code: e.Code, Forced: e.Forced, AfterStdinClose: e.AfterStdinClose}, ok
}

// Done returns a channel that is closed when the connection ended: a
// stdio server's output closed (its process exited, say) or the client was
// closed. Later calls fail with ErrClosed. It is for supervisors (the
// bridge restarts a backend that exited).
// Every call returns the same channel, and watching it costs no goroutine.
func (c *Client) Done() <-chan struct{} {
	c.doneOnce.Do(func() {
		c.done = c.life.Done()
		if sc, ok := c.sess.Conn().(interface{ OnDone(func()) }); ok {
			ctx, cancel := context.WithCancel(c.life)
			sc.OnDone(cancel)
			c.done = ctx.Done()
		}
	})
	return c.done
}

// ProcessExit returns how a stdio server's process ended, once it has
// (after Close, or when it died); false for other transports and while
// the process runs.
func (c *Client) ProcessExit() (ProcessExit, bool) { return processExit(c.sess.Conn()) }

func steps(in []iclient.Step) []Step {
	out := make([]Step, len(in))
	for i, s := range in {
		out[i] = Step{Request: s.Request, Answer: s.Answer, Meaning: s.Meaning, Status: s.Status, Latency: s.Latency}
	}
	return out
}

// Probe returns the steps Connect took to tell the server's era, in order.
func (c *Client) Probe() []Step { return steps(c.sess.Steps) }

// ConnectLatency returns the round trip of the request that described the
// server (server/discover, or initialize for a legacy server).
func (c *Client) ConnectLatency() time.Duration { return c.sess.Latency }
