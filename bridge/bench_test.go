package bridge_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/client"
)

// BenchmarkBridgeToolsCall is one tools/call through the bridge: a modern
// caller in memory, a legacy backend over an in-memory stdio pipe (one
// shared backend session), and the same call made directly to the backend
// as the reference.
func BenchmarkBridgeToolsCall(b *testing.B) {
	br, _, be := newBridgeBackend(&testing.T{}, nil)
	defer br.Close()
	ctx := context.Background()
	front, err := client.Connect(ctx, &client.MemoryTransport{Server: br.Server()}, &client.Options{NoCache: true})
	if err != nil {
		b.Fatal(err)
	}
	defer front.Close()
	direct, err := client.Connect(ctx, &client.MemoryTransport{Server: be}, &client.Options{Eras: client.LegacyOnly, NoCache: true})
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	args := map[string]any{"text": "hi"}
	for _, bc := range []struct {
		name string
		c    *client.Client
	}{{"bridge", front}, {"direct-legacy", direct}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(8) // 16 callers on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := bc.c.CallTool(ctx, "echo", args); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
