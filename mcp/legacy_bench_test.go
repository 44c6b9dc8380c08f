package mcp

import (
	"bytes"
	"testing"
)

// BenchmarkLegacyToolsCall calls the echo tool in a 2025-11-25 session over
// in-process Streamable HTTP. Compare with BenchmarkToolsCall, the same call
// by a modern client.
func BenchmarkLegacyToolsCall(b *testing.B) {
	s := echoServer()
	init := newInProcessHTTP(b, s, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	init.do()
	sid := init.w.h.Get("Mcp-Session-Id")
	if sid == "" {
		b.Fatalf("initialize: status %d, body %s", init.w.status, init.w.body)
	}
	p := newInProcessHTTP(b, s, "", "", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	p.req.Header.Del("Mcp-Method")
	p.req.Header.Set("Mcp-Protocol-Version", LegacyVersion)
	p.req.Header.Set("Mcp-Session-Id", sid)
	p.do()
	if p.w.status != 200 || !bytes.Contains(p.w.body, []byte(`"text":"hello"`)) {
		b.Fatalf("status %d, body %s", p.w.status, p.w.body)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.do()
	}
}
