package mcp

import (
	"testing"
	"unsafe"
)

// TestHotPathSizeClasses keeps the structs of the hot path in the
// allocation size classes their comments name (handle.go: "the exchange
// stays in its size class"; meta.go: RequestInfo.roots "keeps a
// tools/call's exchange in its size class"; intercept.go: Call.ran). A
// field added to one of them that crosses into the next class costs every
// request the larger allocation: this test fails with the sizes, so that
// the field goes into padding or the limit here is raised knowingly
// (and BENCHMARKS.md says why).
func TestHotPathSizeClasses(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the size classes below are those of 64-bit platforms")
	}
	for _, c := range []struct {
		name  string
		size  uintptr
		class uintptr // the runtime's size class the struct must fit
	}{
		{"exchange (every method but tools/call)", unsafe.Sizeof(exchange{}), 704},
		{"toolExchange (a tools/call's exchange and ToolRequest, one allocation)", unsafe.Sizeof(toolExchange{}), 896},
		{"RequestInfo (inside every exchange)", unsafe.Sizeof(RequestInfo{}), 320},
		{"exchangeCall (the Call of an exchange and its callState, on a server with interceptors)", unsafe.Sizeof(exchangeCall{}), 416},
	} {
		if c.size > c.class {
			t.Errorf("%s is %d bytes, past its size class of %d", c.name, c.size, c.class)
			continue
		}
		if sizeClassOf(c.size) != c.class {
			t.Errorf("%s is %d bytes, in the size class of %d: update this test's class %d", c.name, c.size, sizeClassOf(c.size), c.class)
		}
	}
}

// sizeClassOf returns the runtime's size class (64-bit, Go 1.21 and later)
// that an object of n bytes is allocated in, for n up to 1 KiB.
func sizeClassOf(n uintptr) uintptr {
	for _, c := range []uintptr{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024} {
		if n <= c {
			return c
		}
	}
	return n
}
