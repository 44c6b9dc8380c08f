package mcp

import "testing"

// BenchmarkScanMeta reads the _meta of a server/discover request's params.
func BenchmarkScanMeta(b *testing.B) {
	params := []byte(`{` + benchMeta + `}`)
	b.ReportAllocs()
	for b.Loop() {
		if rm, err := scanMeta(params); err != nil || rm.caps == nil {
			b.Fatal(err)
		}
	}
}
