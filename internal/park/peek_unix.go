//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package park

import (
	"net"
	"syscall"
)

// PeerClosed reports whether the peer closed (or reset) its end of c,
// without blocking and without consuming anything it sent: a parked
// stream is never read, so this is how a keep-alive round notices a client
// that went away. Bytes the client sent before closing (none, from a
// well-behaved client) hide the close until a write fails.
func PeerClosed(c net.Conn) bool {
	rc, ok := syscallConn(c)
	if !ok {
		return false
	}
	closed := false
	var b [1]byte
	rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			closed = n == 0 // end of stream; n > 0: bytes the client sent
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK || err == syscall.EINTR:
		default:
			closed = true // reset
		}
		return true
	})
	return closed
}

// Unread peeks at c's socket without blocking and returns how many bytes
// wait in it (up to 1), -1 when the peer closed it, and -2 when c has no
// file descriptor. It is for tests that wait for the kernel.
func Unread(c net.Conn) int {
	rc, ok := syscallConn(c)
	if !ok {
		return -2
	}
	n := 0
	var b [1]byte
	rc.Read(func(fd uintptr) bool {
		m, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil && m == 0:
			n = -1
		case err == nil:
			n = m
		}
		return true
	})
	return n
}

// syscallConn returns the file descriptor access of c's socket (for TLS,
// of the connection underneath).
func syscallConn(c net.Conn) (syscall.RawConn, bool) {
	if nc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = nc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	return rc, err == nil
}
