//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mcp

import (
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/realtime"
)

// peerClosed tells a connection whose client closed it from an open one,
// without consuming what the client sent. (Where peek_other.go builds
// instead, peerClosed never reports a close, and this test does not build.)
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
	if peerClosed(server) {
		t.Error("open connection reported closed")
	}
	client.Write([]byte("x"))
	realtime.Poll(t, 5*time.Second, "the client's byte to reach the server's socket", func() bool { return unread(t, server) == 1 })
	if peerClosed(server) {
		t.Error("connection with unread bytes reported closed")
	}
	// (Unread bytes would hide the close from the peek: a parked stream's
	// client sends none, and Linux's epoll watch sees the close anyway.)
	server.Read(make([]byte, 1))
	client.Close()
	realtime.Poll(t, 5*time.Second, "a closed connection to be reported closed", func() bool { return peerClosed(server) })
}

// unread peeks at c's socket without blocking and returns how many bytes
// wait in it (up to 1), or -1 when the peer closed it.
func unread(t *testing.T, c net.Conn) int {
	t.Helper()
	rc, ok := syscallConn(c)
	if !ok {
		t.Fatal("no file descriptor")
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

// TestKeepAliveSlot checks when a new parked stream gets its first
// keep-alive comment: never in the round after it opened, always within
// one interval (keepAliveSlices rounds), and streams opened in a burst
// spread over half of the rounds.
func TestKeepAliveSlot(t *testing.T) {
	for pinged := range uint8(keepAliveSlices) {
		rounds := map[int]bool{}
		for n := range uint8(255) {
			slot := keepAliveSlot(pinged, n)
			if slot >= keepAliveSlices {
				t.Fatalf("keepAliveSlot(%d, %d) = %d, want < %d", pinged, n, slot, keepAliveSlices)
			}
			// The loop pings pinged+1 at the next round, pinged+k at the k-th.
			k := (int(slot)-int(pinged)+keepAliveSlices-1)%keepAliveSlices + 1
			if k < keepAliveSlices/2 || k > keepAliveSlices {
				t.Errorf("keepAliveSlot(%d, %d): first comment in round %d, want %d to %d", pinged, n, k, keepAliveSlices/2, keepAliveSlices)
			}
			rounds[k] = true
		}
		if len(rounds) != keepAliveSlices/2 {
			t.Errorf("after slice %d: streams spread over %d rounds, want %d", pinged, len(rounds), keepAliveSlices/2)
		}
	}
}
