package clients

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// TestClientsCall checks that every client, over every transport, gets
// the echo back from `mcpkit serve` at 2026-07-28: what the benchmarks
// measure is a correct call.
func TestClientsCall(t *testing.T) {
	srv, err := StartHTTP()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("mcpkit serve: %v", err)
		}
	}()
	for _, c := range Clients {
		for _, tr := range Transports {
			t.Run(c.Name+"/"+tr, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				caller, err := Connect(ctx, c, tr, srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				defer caller.Close()
				for range 3 {
					got, err := caller.Call(ctx)
					if err != nil || got != EchoText {
						t.Fatalf("Call = %q, %v; want %q", got, err, EchoText)
					}
				}
			})
		}
	}
}

// BenchmarkToolsCall measures one tools/call at a time, per client and
// transport; allocations are the client's (the server is another process).
func BenchmarkToolsCall(b *testing.B) {
	srv, err := StartHTTP()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	for _, c := range Clients {
		for _, tr := range Transports {
			b.Run(c.Name+"/"+tr, func(b *testing.B) {
				ctx := context.Background()
				caller, err := Connect(ctx, c, tr, srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				defer caller.Close()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := caller.Call(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkToolsCallMemory measures mcpkit's client in memory against a
// server in the same process: no transport at all; allocations are the
// client's and the server's together.
func BenchmarkToolsCallMemory(b *testing.B) {
	ctx := context.Background()
	caller, err := MemoryCaller(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer caller.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := caller.Call(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMemoryCall(t *testing.T) {
	caller, err := MemoryCaller(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer caller.Close()
	if got, err := caller.Call(t.Context()); err != nil || got != EchoText {
		t.Fatalf("Call = %q, %v", got, err)
	}
}
