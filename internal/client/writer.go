package client

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
)

// WriteQueue is how many messages a stdio connection holds for its writer
// while an earlier write is still in progress. A request or notification
// that finds the queue full waits for room (as long as its context
// allows); a notifications/cancelled is dropped instead.
const WriteQueue = 64

// lineWriter is the one goroutine that writes to a stdio server's input.
// Messages are queued and written whole, one after another, so a write
// that its caller gave up on still ends its line and the framing stays
// intact. A server that stops reading fills the pipe: the write blocks,
// the queue fills, and callers give up when their contexts end; close
// closes the pipe without waiting on the stuck write, which then fails.
// Its methods are safe for concurrent use.
type lineWriter struct {
	w      io.WriteCloser
	q      chan *pendingWrite
	closed chan struct{} // closed by close
	dead   chan struct{} // closed when the writer stopped (after close or a failed write)

	once sync.Once
	cerr error // what closing w returned
	mu   sync.Mutex
	err  error // why the writer stopped
}

// pendingWrite is one queued message. done (buffered) gets the result of
// the write; ctx, if it ends before the write starts, skips the write.
type pendingWrite struct {
	ctx  context.Context
	msg  []byte
	done chan error
}

func newLineWriter(w io.WriteCloser) *lineWriter {
	lw := &lineWriter{w: w, q: make(chan *pendingWrite, WriteQueue), closed: make(chan struct{}), dead: make(chan struct{})}
	go lw.loop()
	return lw
}

func (lw *lineWriter) loop() {
	defer close(lw.dead)
	for {
		select {
		case <-lw.closed:
			lw.stop(ErrClosed)
			return
		case pw := <-lw.q:
			if pw.ctx != nil && pw.ctx.Err() != nil {
				pw.done <- ctxErr(pw.ctx)
				continue
			}
			if _, err := lw.w.Write(pw.msg); err != nil {
				err = writeError(err)
				lw.stop(err)
				pw.done <- err
				return
			}
			pw.done <- nil
		}
	}
}

func (lw *lineWriter) stop(err error) {
	lw.mu.Lock()
	if lw.err == nil {
		lw.err = err
	}
	lw.mu.Unlock()
}

// stopped returns why the writer stopped.
func (lw *lineWriter) stopped() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err == nil {
		return ErrClosed
	}
	return lw.err
}

// writeError maps a failed write to the connection's errors.
func writeError(err error) error {
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
		// The server closed its stdin (it exited), or Close closed the
		// pipe: the same failure as a read that ends, whichever of the two
		// the race between them lets happen first.
		return ErrClosed
	}
	return &TransportError{Op: "writing to the server", Err: err}
}

// write queues msg and a newline and waits until they are written, the
// writer stops, or ctx ends (the message may still be written later, whole).
func (lw *lineWriter) write(ctx context.Context, msg []byte) error {
	pw := &pendingWrite{ctx: ctx, msg: append(msg, '\n'), done: make(chan error, 1)}
	select {
	case lw.q <- pw:
	case <-lw.dead:
		return lw.stopped()
	case <-lw.closed:
		return ErrClosed
	case <-ctx.Done():
		return ctxErr(ctx)
	}
	select {
	case err := <-pw.done:
		return err
	case <-lw.dead:
		select {
		case err := <-pw.done:
			return err
		default:
			return lw.stopped()
		}
	case <-ctx.Done():
		return ctxErr(ctx)
	}
}

// tryWrite queues msg and a newline without waiting; it reports false
// (and drops msg) when the queue is full or the writer stopped.
func (lw *lineWriter) tryWrite(msg []byte) bool {
	select {
	case <-lw.dead:
		return false
	default:
	}
	select {
	case lw.q <- &pendingWrite{msg: append(msg, '\n'), done: make(chan error, 1)}:
		return true
	default:
		return false
	}
}

// close closes the pipe at once, which ends a write blocked in it, and
// stops the writer; queued messages are not written. It returns what
// closing the pipe returned, and never waits on a write.
func (lw *lineWriter) close() error {
	lw.once.Do(func() {
		close(lw.closed)
		lw.cerr = lw.w.Close()
	})
	return lw.cerr
}
