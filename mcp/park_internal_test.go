package mcp

import (
	"net"
	"runtime"
	"testing"
	"time"
)

// peerClosed tells a connection whose client closed it from an open one,
// without consuming what the client sent.
func TestPeerClosed(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no peek on this platform")
	}
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
	time.Sleep(20 * time.Millisecond)
	if peerClosed(server) {
		t.Error("connection with unread bytes reported closed")
	}
	// (Unread bytes would hide the close from the peek: a parked stream's
	// client sends none, and Linux's epoll watch sees the close anyway.)
	server.Read(make([]byte, 1))
	client.Close()
	deadline := time.Now().Add(5 * time.Second)
	for !peerClosed(server) {
		if time.Now().After(deadline) {
			t.Fatal("closed connection never reported closed")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
