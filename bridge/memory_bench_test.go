package bridge_test

import (
	"context"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
)

// maxMemSessions bounds the idle sessions a run of
// BenchmarkIdleSessionMemory opens: on stdio each is a process.
const maxMemSessions = 48

// BenchmarkIdleSessionMemory reports the heap and goroutine stack the
// bridge holds per idle backend session (B/session, goroutines/session):
// it opens n = min(b.N, 48) sessions of distinct keys (one extension each),
// lets them go idle, and compares the memory after a GC with the memory
// before. On stdio the backend is a child process, not counted: the number
// is the bridge's own. In memory the backend's legacy sessions (of one
// server) live in this process and are counted too. The goal (issue 26) is at most 64 KiB
// per idle session, bridge-side. Run it with -benchtime=48x.
func BenchmarkIdleSessionMemory(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	shared := backend(nil)
	for _, bc := range []struct {
		name    string
		backend func() client.Transport
	}{
		{"stdio", func() client.Transport {
			return &client.CommandTransport{Command: exe, Env: []string{"BRIDGE_TEST_BACKEND=1"}, Stderr: io.Discard}
		}},
		{"memory", func() client.Transport { return &client.MemoryTransport{Server: shared} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			n := min(b.N, maxMemSessions)
			exts := make([]string, n)
			for i := range exts {
				exts[i] = "x.test/e" + strconv.Itoa(i)
			}
			br, err := bridge.New(context.Background(), &bridge.Options{
				Backend: bc.backend, Eras: client.LegacyOnly, Extensions: exts, MaxSessions: n, Logger: quiet,
				Server: mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: testKeys}},
			})
			if err != nil {
				b.Fatal(err)
			}
			defer br.Close()
			list := func(i int) {
				r := mcpwire.Serve(b, br.Server(), mcpwire.Request{Method: "tools/list", Caps: `{"extensions":{"` + exts[i] + `":{}}}`})
				if r.Status != 200 || !strings.Contains(string(r.Last()), `"tools"`) {
					b.Fatalf("tools/list: %d %s", r.Status, r.Last())
				}
			}
			list(0) // the front's own first-request costs, not a session's
			before := memNow()
			b.ResetTimer()
			for i := 1; i < n; i++ {
				list(i)
			}
			b.StopTimer()
			if got := bridge.Sessions(br); got != n {
				b.Fatalf("%d sessions open, want %d", got, n)
			}
			after := memNow()
			if n > 1 {
				per := func(a, b uint64) float64 { return float64(int64(a)-int64(b)) / float64(n-1) }
				b.ReportMetric(per(after.heap+after.stack, before.heap+before.stack), "B/session")
				b.ReportMetric(per(after.heap, before.heap), "heapB/session")
				b.ReportMetric(per(after.stack, before.stack), "stackB/session")
				b.ReportMetric(float64(after.goroutines-before.goroutines)/float64(n-1), "goroutines/session")
				b.ReportMetric(float64(after.threads-before.threads)/float64(n-1), "threads/session")
			}
			runtime.KeepAlive(br)
		})
	}
}

// memStats is what BenchmarkIdleSessionMemory compares.
type memStats struct {
	heap, stack         uint64 // live heap; stacks (goroutines' and threads' signal stacks)
	goroutines, threads int
}

// memNow returns the memory in use after a GC.
func memNow() memStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	threads, _ := runtime.ThreadCreateProfile(nil)
	return memStats{heap: m.HeapAlloc, stack: m.StackInuse, goroutines: runtime.NumGoroutine(), threads: threads}
}
