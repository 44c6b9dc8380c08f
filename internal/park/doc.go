// Package park holds the system-level mechanisms behind mcp's parked
// subscriptions/listen streams (idle streams that left net/http): writes
// that never wait (Raw, Writer), noticing that a client went away without
// reading from its connection (PeerClosed), and being told at once when it
// hangs up (Watch, on Linux with epoll).
//
// Every system call that serving listen streams needs is here, so that
// package mcp imports no syscall. Where a platform lacks a mechanism the
// package degrades, and says how: no Raw (every write waits under a
// deadline), PeerClosed always false, a Watch that watches nothing (a
// client that went away is noticed at the next write).
package park
