//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package park

import "net"

// Raw is never valid on this platform: parked streams write with a
// deadline, on the writer's goroutine.
type Raw struct{ _ *int }

// RawOf returns the zero Raw.
func RawOf(net.Conn) Raw { return Raw{} }

// Valid reports false.
func (Raw) Valid() bool { return false }

// Writer is unused on this platform.
type Writer struct{}

// Try writes nothing and returns b.
func (*Writer) Try(_ Raw, b []byte) ([]byte, error) { return b, nil }
