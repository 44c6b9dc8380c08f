//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package mcp

import (
	"net"
	"syscall"
)

// Parked streams write with a deadline here, on the writer's goroutine.

func rawConn(net.Conn) syscall.RawConn { return nil }

type rawWrite struct{}

func (*rawWrite) try(_ syscall.RawConn, b []byte) ([]byte, error) { return b, nil }
