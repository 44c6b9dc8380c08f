package mcp

import (
	"bytes"
	"testing"
)

// newLegacyCallHTTP opens a 2025-11-25 session on the echo server over
// in-process Streamable HTTP and returns the POST of a tools/call in it,
// checked once.
func newLegacyCallHTTP(tb testing.TB) *inProcessHTTP {
	s := echoServer()
	init := newInProcessHTTP(tb, s, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	init.do()
	sid := init.w.h.Get("Mcp-Session-Id")
	if sid == "" {
		tb.Fatalf("initialize: status %d, body %s", init.w.status, init.w.body)
	}
	p := newInProcessHTTP(tb, s, "", "", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	p.req.Header.Del("Mcp-Method")
	p.req.Header.Set("Mcp-Protocol-Version", LegacyVersion)
	p.req.Header.Set("Mcp-Session-Id", sid)
	p.do()
	if p.w.status != 200 || !bytes.Contains(p.w.body, []byte(`"text":"hello"`)) {
		tb.Fatalf("status %d, body %s", p.w.status, p.w.body)
	}
	return p
}

// BenchmarkLegacyToolsCall calls the echo tool in a 2025-11-25 session over
// in-process Streamable HTTP. Compare with BenchmarkToolsCall, the same call
// by a modern client.
func BenchmarkLegacyToolsCall(b *testing.B) {
	p := newLegacyCallHTTP(b)
	b.ReportAllocs()
	for b.Loop() {
		p.do()
	}
}

// TestLegacyToolsCallAllocs pins a legacy tools/call at most 7 allocations
// beyond the net/http floor's (TestNoInterceptorsNoAllocs allows a modern
// one 5): the call's state, its connection's channel, its context (two),
// its entry in the session's table of requests in flight, and what the
// echo tool's call allocates in either era.
func TestLegacyToolsCallAllocs(t *testing.T) {
	if testing.Short() || raceOn {
		// The race detector slows the worker down: the next request
		// often finds none waiting and starts one.
		t.Skip("allocation counts need a quiet run without the race detector")
	}
	floor := testing.AllocsPerRun(200, newInProcessHTTP(t, floorHandler{}, "tools/call", "echo", echoCallBody).do)
	got := testing.AllocsPerRun(200, newLegacyCallHTTP(t).do)
	if got > floor+7 {
		t.Errorf("a legacy tools/call allocates %v times per request, want at most the floor's %v plus 7", got, floor)
	}
}
