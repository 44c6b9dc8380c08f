package mcp

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"sync"
	"testing"
)

// BenchmarkStdioPipelined serves requests over the stdio transport with
// 1, 16 and 64 of them in flight, as bench/load's stdio driver sends them:
// the client writes as many requests as responses came back, in one write,
// and every response is one line. It measures the transport's own cost per
// request (reading, decoding, handing off, writing) on top of Handle's.
func BenchmarkStdioPipelined(b *testing.B) {
	for _, method := range []string{"server/discover", "tools/call"} {
		for _, inflight := range []int{1, 16, 64} {
			b.Run(method+"/"+strconv.Itoa(inflight), func(b *testing.B) {
				benchStdio(b, method, inflight)
			})
		}
	}
}

// stdioWindow is the client side of a stdio benchmark: it counts the
// response lines written to it and lets the sender wait until fewer than
// inflight requests are outstanding.
type stdioWindow struct {
	mu   sync.Mutex
	cond sync.Cond
	got  int
}

func (w *stdioWindow) Write(p []byte) (int, error) {
	n := bytes.Count(p, []byte{'\n'})
	w.mu.Lock()
	w.got += n
	w.mu.Unlock()
	w.cond.Signal()
	return len(p), nil
}

// waitBelow waits until fewer than max of sent requests are unanswered
// and returns how many are.
func (w *stdioWindow) waitBelow(sent, max int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	for sent-w.got >= max {
		w.cond.Wait()
	}
	return sent - w.got
}

func benchStdio(b *testing.B, method string, inflight int) {
	s := echoServer()
	prefix := `{"jsonrpc":"2.0","id":`
	var suffix string
	switch method {
	case "server/discover":
		suffix = `,"method":"server/discover","params":{` + benchMeta + `}}` + "\n"
	case "tools/call":
		suffix = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},` + benchMeta + `}}` + "\n"
	}
	pr, pw := io.Pipe()
	out := &stdioWindow{}
	out.cond.L = &out.mu
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), pr, out) }()
	b.ReportAllocs()
	var buf []byte
	sent := 0
	id := 0
	for b.Loop() {
		// One request per iteration: write a batch when the window
		// allows one, as many requests as have room.
		if sent-id == 0 {
			room := inflight - out.waitBelow(sent, inflight)
			buf = buf[:0]
			for range room {
				buf = append(buf, prefix...)
				buf = strconv.AppendInt(buf, int64(sent), 10)
				buf = append(buf, suffix...)
				sent++
			}
			if _, err := pw.Write(buf); err != nil {
				b.Fatal(err)
			}
		}
		id++
	}
	out.waitBelow(sent, 1)
	pw.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if out.got != sent {
		b.Fatalf("got %d responses for %d requests", out.got, sent)
	}
}
