//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package park

import (
	"net"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/realtime"
)

// PeerClosed tells a connection whose client closed it from an open one,
// without consuming what the client sent. (Where peek_other.go in this package builds
// instead, PeerClosed never reports a close, and this test does not build.)
//
// The sockets are real ones: when a byte or a FIN has reached the other end
// is the kernel's business, which no synctest bubble can hold, so the test
// polls for it with a deadline (realtime.Poll).
func TestPeerClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if PeerClosed(server) {
		t.Error("open connection reported closed")
	}
	client.Write([]byte("x"))
	realtime.Poll(t, 5*time.Second, "the client's byte to reach the server's socket", func() bool { return unread(t, server) == 1 })
	if PeerClosed(server) {
		t.Error("connection with unread bytes reported closed")
	}
	// (Unread bytes would hide the close from the peek: a parked stream's
	// client sends none, and Linux's epoll watch sees the close anyway.)
	server.Read(make([]byte, 1))
	client.Close()
	realtime.Poll(t, 5*time.Second, "a closed connection to be reported closed", func() bool { return PeerClosed(server) })
}

// unread is Unread, failing the test for a connection without a file
// descriptor.
func unread(t *testing.T, c net.Conn) int {
	t.Helper()
	n := Unread(c)
	if n == -2 {
		t.Fatal("no file descriptor")
	}
	return n
}
