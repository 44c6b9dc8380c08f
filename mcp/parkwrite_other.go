//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package mcp

import "net"

// rawWriter is not available here: parked streams write with a deadline,
// on the writer's goroutine.
type rawWriter struct{}

func newRawWriter(net.Conn) *rawWriter { return nil }

func (*rawWriter) tryWrite(b []byte) ([]byte, error) { return b, nil }
