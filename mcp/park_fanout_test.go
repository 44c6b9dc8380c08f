package mcp_test

import (
	"io"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// A parked stream whose client stops reading does not hold up the others:
// with more stalled streams than there are writers, each with a write
// waiting for its client (for up to a minute here, so that none is dropped
// meanwhile), changes still reach a client that reads, and the stalled
// streams end when their clients go away.
func TestListenParkedStalledReaders(t *testing.T) {
	bus := new(mcp.LocalBus)
	s, _ := listenServer(t, &mcp.ServerOptions{Bus: bus})
	mcp.SetParkedWriteTimeout(s, time.Minute)
	srv := serveHTTP(t, s)
	addr := srv.Listener.Addr().String()
	d := net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024) })
	}}
	stalled := 2 * mcp.MaxParkWriters
	for i := range stalled {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, rawListenRequest(addr, strconv.Itoa(100+i))); err != nil {
			t.Fatal(err)
		}
	}
	fast := openRaw(t, addr, `1`, "")
	fast.next(t)
	waitUntil(t, "every stream parked", func() bool { return mcp.ParkedListenStreams(s) == stalled+1 })

	change := func() {
		t.Helper()
		bus.Publish(mcp.Change{Kind: mcp.ToolsListChanged})
		if f := fast.next(t); f["method"] != "notifications/tools/list_changed" {
			t.Fatalf("the reading listener got %v", f)
		}
	}
	// Each change adds a notification to every stalled client's socket
	// buffers, until they are full.
	for i := 0; mcp.StalledListenStreams(s) < stalled; i++ {
		if i == 100000 {
			t.Fatalf("%d of %d streams have a write waiting after %d changes", mcp.StalledListenStreams(s), stalled, i)
		}
		change()
	}
	// Every writer would be stuck now if a stalled stream held one.
	for range 3 {
		change()
	}
	if n := mcp.OpenListenStreams(s); n != stalled+1 {
		t.Errorf("%d listen streams open, want %d", n, stalled+1)
	}
}

// Keep-alive comments of parked streams go out in slices, one slice per
// part of the interval, so that a change never waits for a round over
// every stream; each stream still gets its comments.
func TestListenParkedKeepAliveSlices(t *testing.T) {
	s, _ := listenServer(t, &mcp.ServerOptions{HTTP: mcp.HTTPOptions{KeepAlive: 32 * time.Millisecond}})
	srv := serveHTTP(t, s)
	addr := srv.Listener.Addr().String()
	var streams []*rawStream
	for i := range 2 * mcp.KeepAliveSlices {
		rs := openRaw(t, addr, strconv.Itoa(i+1), "")
		rs.next(t)
		streams = append(streams, rs)
	}
	waitUntil(t, "every stream parked", func() bool { return mcp.ParkedListenStreams(s) == len(streams) })
	for i, rs := range streams {
		for comments := 0; comments < 2; {
			select {
			case l := <-rs.lines:
				if l == ":" {
					comments++
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("stream %d: %d keep-alive comments within 5s, want 2", i+1, comments)
			}
		}
	}
}
