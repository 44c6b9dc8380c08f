//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package park

import (
	"net"
	"os"
	"syscall"
)

// Parked streams write without a write deadline where they can: one write
// system call, which takes what fits in the kernel's buffer and never
// waits. A write deadline is a runtime timer that each write would set
// (and that fires later, for nothing, on every stream of a fan-out): with
// tens of thousands of streams per change, that was a fifth of the cost of
// the writes. Only the rare write that does not fit waits, under the write
// timeout, on a goroutine of its own (the caller's).

// Raw is the socket of a connection, for writes that never wait. The zero
// Raw has none (Valid is false): every write then waits, with a deadline.
// It is as small as the interface it holds, for a stream to keep.
type Raw struct {
	rc syscall.RawConn
}

// RawOf returns the Raw of c, or the zero Raw when c is not a socket of
// its own: a TLS connection's bytes must go through TLS, so c is not
// unwrapped.
func RawOf(c net.Conn) Raw {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return Raw{}
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return Raw{}
	}
	return Raw{rc}
}

// Valid reports whether r has a socket.
func (r Raw) Valid() bool { return r.rc != nil }

// Writer is one writer goroutine's scratch for Raw writes, so that a
// stream holds only its Raw. A Writer is used by one goroutine at a time.
type Writer struct {
	fn   func(fd uintptr) bool // w.write, bound once
	left []byte                // what the current write has not written yet
	err  error
}

// write runs under the connection's write lock (RawConn.Write): it writes
// as much of w.left as the socket takes now.
func (w *Writer) write(fd uintptr) bool {
	for len(w.left) > 0 {
		n, err := syscall.Write(int(fd), w.left)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			if err != syscall.EAGAIN {
				w.err = os.NewSyscallError("write", err)
			}
			break
		}
		if n <= 0 {
			break
		}
		w.left = w.left[n:]
	}
	return true // never wait here: the caller decides
}

// Try writes what r's socket takes of b at once and returns the rest:
// empty when all of b was written. When the connection refuses the write
// as a whole (its deadline has passed, or it is closed) it returns all of
// b and no error, for the caller's waiting write to report. r must be
// Valid.
func (w *Writer) Try(r Raw, b []byte) ([]byte, error) {
	if w.fn == nil {
		w.fn = w.write
	}
	w.left, w.err = b, nil
	err := r.rc.Write(w.fn)
	rest, werr := w.left, w.err
	w.left, w.err = nil, nil
	if err != nil {
		return b, nil
	}
	return rest, werr
}
