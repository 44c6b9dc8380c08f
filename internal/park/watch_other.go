//go:build !linux

package park

import "net"

// Hanger is told that the peer of a watched connection hung up.
type Hanger interface {
	// Hangup is called once, without locks held; it must not block.
	Hangup()
}

// Watch watches nothing on this platform: a connection whose peer went
// away is noticed at the next write. The zero Watch is ready to use.
type Watch struct{}

// Add returns 0: c is not watched.
func (*Watch) Add(net.Conn, Hanger) uint64 { return 0 }

// Remove does nothing.
func (*Watch) Remove(net.Conn, uint64) {}
