package mcp_test

import (
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
)

// maxIdleStreamStack is the bound on the goroutine stack one idle listen
// stream held in Handle costs once the runtime shrank it (4 KiB today).
// The runtime halves an idle goroutine's stack at a collection only when
// its frames use less than a quarter of it: Server.handle keeps a small
// frame for that (handle.go), and a frame that grew past it would leave
// every idle stream at 8 KiB.
const maxIdleStreamStack = 6 << 10

// TestIdleListenStack opens idle listen streams through Handle and checks
// that after two collections their goroutine stacks cost at most
// maxIdleStreamStack each: the invariant handle.go's comment guards.
func TestIdleListenStack(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes stack sizes")
	}
	if testing.Short() {
		t.Skip("memory measurements need a quiet run")
	}
	const streams = 500
	s, _ := listenServer(t, &mcp.ServerOptions{Listen: mcp.ListenOptions{MaxSubscriptions: streams}})
	_, before := heapAndStacks()
	stop := openListens(t, s, streams, nil)
	_, after := heapAndStacks()
	stop()
	per := (int64(after) - int64(before)) / streams
	if per > maxIdleStreamStack {
		t.Errorf("an idle listen stream costs %d bytes of goroutine stack after two collections, want at most %d: a frame below Handle grew too large for the runtime to shrink the stack (handle.go)", per, maxIdleStreamStack)
	}
}
