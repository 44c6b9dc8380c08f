package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/realtime"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// countNotifier counts notifications and signals every count-th one.
type countNotifier struct {
	n    atomic.Int64
	each func()
}

func (c *countNotifier) Notify([]byte) {
	c.n.Add(1)
	if c.each != nil {
		c.each()
	}
}

// openListens runs n subscriptions/listen requests through Handle, each on
// its own goroutine as a transport would, and waits for their
// acknowledgements. The returned function ends them.
func openListens(tb testing.TB, s *mcp.Server, n int, each func()) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg, acked sync.WaitGroup
	acked.Add(n)
	for i := range n {
		body := []byte(`{"jsonrpc":"2.0","id":` + fmt.Sprint(i) + `,"method":"subscriptions/listen","params":{` + listenMeta + `,"notifications":{"toolsListChanged":true}}}`)
		msg, derr := jsonrpc.Decode(body)
		if derr != nil {
			tb.Fatal(derr.Message)
		}
		var once sync.Once
		cn := &countNotifier{}
		cn.each = func() {
			once.Do(acked.Done)
			if each != nil && cn.n.Load() > 1 {
				each()
			}
		}
		wg.Go(func() { s.Handle(ctx, nil, &mcp.Incoming{Message: &msg}, cn) })
	}
	acked.Wait()
	return func() {
		cancel()
		wg.Wait()
	}
}

// BenchmarkListenFanout1000 measures one tools/list_changed delivered to
// 1,000 open listen streams: from Publish until every stream's Notifier
// has the notification.
func BenchmarkListenFanout1000(b *testing.B) {
	const listeners = 1000
	bus := new(mcp.LocalBus)
	s, _ := listenServer(b, &mcp.ServerOptions{Bus: bus, Listen: mcp.ListenOptions{MaxSubscriptions: 2 * listeners}})
	var got sync.WaitGroup
	stop := openListens(b, s, listeners, got.Done)
	defer stop()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		got.Add(listeners)
		bus.Publish(mcp.Change{Kind: mcp.ToolsListChanged})
		got.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/listeners, "ns/delivery")
}

// BenchmarkListenFanoutParked measures one tools/list_changed delivered to
// parked listen streams over loopback TCP: from Publish until every
// client has read its notification (ns/delivery), the clients' reading
// included. The allocations are the whole process's, clients included.
func BenchmarkListenFanoutParked(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchParkedFanout(b, n) })
	}
}

func benchParkedFanout(b *testing.B, n int) {
	bus := new(mcp.LocalBus)
	s, _ := listenServer(b, &mcp.ServerOptions{Bus: bus, Listen: mcp.ListenOptions{MaxSubscriptions: n}, Quotas: mcp.QuotaOptions{MaxSubscriptionsPerClient: mcp.Off}})
	srv := serveHTTP(b, s)
	addr := srv.Listener.Addr().String()
	var acked, got sync.WaitGroup
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		benchWait(b, "the streams to end", func() bool { return mcp.OpenListenStreams(s) == 0 })
	}()
	for i := range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, rawListenRequest(addr, fmt.Sprint(i))); err != nil {
			b.Fatal(err)
		}
		acked.Add(1)
		go func() {
			br := bufio.NewReaderSize(c, 1024)
			first := true
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					if first {
						acked.Done() // the check below fails
					}
					return
				}
				if !bytes.HasPrefix(line, []byte("data:")) {
					continue
				}
				if first {
					first = false
					acked.Done()
				} else {
					got.Done()
				}
			}
		}()
	}
	acked.Wait()
	benchWait(b, "every stream parked", func() bool { return mcp.ParkedListenStreams(s) == n })
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		got.Add(n)
		bus.Publish(mcp.Change{Kind: mcp.ToolsListChanged})
		got.Wait()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/delivery")
}

// benchWait polls cond for up to 10 seconds, outside the timed part of a
// benchmark: the streams are real connections, whose state the kernel and
// net/http own (realtime.Poll).
func benchWait(b *testing.B, what string, cond func() bool) {
	b.Helper()
	realtime.Poll(b, 10*time.Second, what, cond)
}

// heapAndStacks is the memory a stream costs: live heap plus goroutine
// stacks, and the stacks alone. Two collections: stacks shrink at the
// first.
func heapAndStacks() (total, stacks uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse, m.StackInuse
}

// reportStreamMemory reports the growth from before to after per stream:
// bytes/stream in all, stack-bytes/stream of it in goroutine stacks.
func reportStreamMemory(b *testing.B, before, beforeStacks, after, afterStacks uint64, streams int) {
	b.ReportMetric(float64(after-before)/float64(streams), "bytes/stream")
	b.ReportMetric(float64(afterStacks-beforeStacks)/float64(streams), "stack-bytes/stream")
}

// BenchmarkListenIdleMemory reports the memory one idle listen stream
// costs the library (its subscription and the goroutine blocked in Handle),
// without a transport: bytes/stream.
func BenchmarkListenIdleMemory(b *testing.B) {
	const streams = 2000
	s, _ := listenServer(b, &mcp.ServerOptions{Listen: mcp.ListenOptions{MaxSubscriptions: streams}})
	for range b.N {
		before, beforeStacks := heapAndStacks()
		stop := openListens(b, s, streams, nil)
		after, afterStacks := heapAndStacks()
		stop()
		reportStreamMemory(b, before, beforeStacks, after, afterStacks, streams)
	}
}

// BenchmarkListenIdleMemoryHTTP reports the memory one idle listen stream
// costs a server over Streamable HTTP, net/http included (its connection,
// buffers and goroutines): bytes/stream. The clients are raw connections
// whose own cost is a few hundred bytes each. The floor is a net/http
// handler that writes the acknowledgement and blocks until the client goes
// away: what any library pays for one connection per stream.
func BenchmarkListenIdleMemoryHTTP(b *testing.B) {
	const streams = 500
	s, _ := listenServer(b, &mcp.ServerOptions{Listen: mcp.ListenOptions{MaxSubscriptions: streams}})
	b.Run("mcpkit", func(b *testing.B) { benchIdleStreams(b, s, streams) })
	b.Run("floor", func(b *testing.B) {
		benchIdleStreams(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{}}\n\n")
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
		}), streams)
	})
}

func benchIdleStreams(b *testing.B, h http.Handler, streams int) {
	srv := serveHTTP(b, h)
	addr := srv.Listener.Addr().String()
	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + listenMeta + `,"notifications":{"toolsListChanged":true}}}`
	req := fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body)
	for range b.N {
		before, beforeStacks := heapAndStacks()
		conns := make([]net.Conn, 0, streams)
		for range streams {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			c.Write([]byte(req))
			// Read until the acknowledgement has arrived.
			br := bufio.NewReaderSize(c, 512)
			for {
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				line, err := br.ReadString('\n')
				if err != nil {
					b.Fatal(err)
				}
				if strings.Contains(line, "acknowledged") {
					break
				}
			}
			conns = append(conns, c)
		}
		after, afterStacks := heapAndStacks()
		reportStreamMemory(b, before, beforeStacks, after, afterStacks, streams)
		for _, c := range conns {
			c.Close()
		}
	}
}

// Delivering a change to open listen streams allocates nothing per stream:
// the notification is encoded into buffers the stream reuses.
func TestListenFanoutAllocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts need a normal build")
	}
	const listeners = 100
	bus := new(mcp.LocalBus)
	s, _ := listenServer(t, &mcp.ServerOptions{Bus: bus})
	var got sync.WaitGroup
	stop := openListens(t, s, listeners, got.Done)
	defer stop()
	allocs := testing.AllocsPerRun(200, func() {
		got.Add(listeners)
		bus.Publish(mcp.Change{Kind: mcp.ToolsListChanged})
		got.Wait()
	})
	t.Logf("%v allocations per change to %d streams", allocs, listeners)
	if allocs > 2 {
		t.Errorf("%v allocations to deliver one change to %d streams, want at most 2 in all", allocs, listeners)
	}
}
