package gateway_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

// BenchmarkGateway compares, in memory, what a gateway adds to the
// bridge under it (bench/gateway.sh measures the same over HTTP with
// processes): tools/call through the bridge alone and through a gateway
// of that one backend, at 16 callers on 2 cores; and a whole tools/list
// through the bridge (one backend of 50 tools) against a gateway of 1 and
// of 10 such backends (the merged list, 500 tools); and the first page
// alone, of the bridge and of the gateway of 10. Each backend is a
// legacy session over client.MemoryTransport, as a bridged stdio server
// is legacy.
func BenchmarkGateway(b *testing.B) {
	ctx := context.Background()
	names := make([]string, 50)
	for i := range names {
		names[i] = fmt.Sprintf("tool%02d", i)
	}
	server := func(name string) *mcp.Server { return srv{name: name, tools: names}.build() }
	legacy := bridge.Options{Eras: client.LegacyOnly}

	br, err := bridge.New(ctx, &bridge.Options{Eras: client.LegacyOnly, Logger: quiet,
		Backend: func() client.Transport { return &client.MemoryTransport{Server: server("b")} },
		Server:  mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: testKeys}}})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	newGateway := func(n int) *gateway.Gateway {
		var backends []gateway.Backend
		for i := range n {
			m := server(fmt.Sprintf("s%d", i))
			backends = append(backends, gateway.Backend{Name: fmt.Sprintf("s%d", i),
				Transport: func() client.Transport { return &client.MemoryTransport{Server: m} }})
		}
		g, err := gateway.New(ctx, backends, &gateway.Options{Logger: quiet, Bridge: legacy,
			Server: mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: testKeys}}})
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	g1, g10 := newGateway(1), newGateway(10)
	defer g1.Close()
	defer g10.Close()
	clientOf := func(s *mcp.Server) *client.Client {
		c, err := client.Connect(ctx, &client.MemoryTransport{Server: s}, &client.Options{NoCache: true})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	cb, c1, c10 := clientOf(br.Server()), clientOf(g1.Server()), clientOf(g10.Server())
	defer cb.Close()
	defer c1.Close()
	defer c10.Close()

	for _, bc := range []struct {
		name string
		c    *client.Client
		tool string
	}{{"call/bridge", cb, "tool00"}, {"call/gateway", c1, "s0_tool00"}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(8) // 16 callers on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := bc.c.CallTool(ctx, bc.tool, nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
	for _, bc := range []struct {
		name  string
		c     *client.Client
		items int
	}{{"list/bridge", cb, 50}, {"list/gateway-1", c1, 50}, {"list/gateway-10", c10, 500}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for _, err := range bc.c.ListTools(ctx) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != bc.items {
					b.Fatalf("listed %d tools, want %d", n, bc.items)
				}
			}
		})
	}
	for _, bc := range []struct {
		name string
		c    *client.Client
	}{{"page/bridge", cb}, {"page/gateway-10", c10}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.c.Call(ctx, "tools/list", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
