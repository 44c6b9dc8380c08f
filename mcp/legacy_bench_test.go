package mcp_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

var legacyEchoBody = []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)

// BenchmarkLegacyToolsCallHTTP measures a tools/call of a 2025-11-25
// session on Streamable HTTP, next to BenchmarkToolsCallHTTP's modern one.
func BenchmarkLegacyToolsCallHTTP(b *testing.B) {
	s := benchServer()
	init := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)))
	init.Header.Set("Content-Type", "application/json")
	iw := httptest.NewRecorder()
	s.ServeHTTP(iw, init)
	sid := iw.Header().Get("Mcp-Session-Id")
	if sid == "" {
		b.Fatalf("initialize: %d %s", iw.Code, iw.Body)
	}
	rw := &rewinder{bytes.NewReader(legacyEchoBody)}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Body = rw
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	r.Header.Set("Mcp-Session-Id", sid)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	b.SetBytes(int64(len(legacyEchoBody)))
	for b.Loop() {
		rw.Reset(legacyEchoBody)
		w.reset()
		s.ServeHTTP(w, r)
		if w.code != http.StatusOK {
			b.Fatalf("status %d", w.code)
		}
	}
}
