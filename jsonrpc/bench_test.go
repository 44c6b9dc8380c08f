package jsonrpc_test

import (
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// BenchmarkDecode decodes a server/discover request as clients send it.
func BenchmarkDecode(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsonrpc.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
