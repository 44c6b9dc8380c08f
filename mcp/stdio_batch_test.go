package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

func discoverLine(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{`+validMeta+`}}`+"\n", id)
}

// countingWriter counts Write calls and collects what is written.
type countingWriter struct {
	mu     sync.Mutex
	writes int
	b      strings.Builder
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return w.b.Write(p)
}

// TestStdioPipelinedDiscoverSharesWrites checks that a burst of pipelined
// requests is answered completely, with far fewer write calls (system
// calls on a real stdout) than responses.
func TestStdioPipelinedDiscoverSharesWrites(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "t", Version: "1"}})
	const n = 200
	var in strings.Builder
	for i := range n {
		in.WriteString(discoverLine(i))
	}
	var out countingWriter
	if err := s.ServeStdio(context.Background(), strings.NewReader(in.String()), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.b.String(), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("got %d response lines, want %d", len(lines), n)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{`, i)) {
			t.Fatalf("line %d = %.80s, want the result for id %d (in order)", i, l, i)
		}
	}
	if out.writes > n/10 {
		t.Errorf("%d responses took %d write calls, want at most %d", n, out.writes, n/10)
	}
}

// TestStdioDiscoverNotHeldByDrain checks that a response served by the
// reading goroutine is written at the end of input at once, not after the
// in-flight requests drain.
func TestStdioDiscoverNotHeldByDrain(t *testing.T) {
	s, _, started := blockingServer(t)
	pr, pw := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(ctx, pr, outW); outW.Close() }()
	io.WriteString(pw, `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"block",`+validMeta+`}}`+"\n")
	<-started
	// The last line has no newline: the reader serves it and meets the
	// end of input at once.
	io.WriteString(pw, strings.TrimSuffix(discoverLine(2), "\n"))
	pw.Close()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			select {
			case line <- sc.Text():
			default:
			}
		}
	}()
	select {
	case l := <-line:
		if !strings.Contains(l, `"id":2,"result"`) {
			t.Fatalf("first line = %s, want the discover result", l)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the discover response waited for the blocked request")
	}
	cancel()
	<-done
}

// TestStdioDiscoverNotHeldBySlots checks that a response served by the
// reading goroutine is written while reading waits for an in-flight slot.
func TestStdioDiscoverNotHeldBySlots(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "t", Version: "1"}})
	var running atomic.Int32
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "Blocks until cancelled."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			running.Add(1)
			<-ctx.Done()
			return "", ctx.Err()
		})
	var in strings.Builder
	call := func(id int) {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"b%d","method":"tools/call","params":{"name":"block",`+validMeta+`}}`+"\n", id)
	}
	for i := range 256 { // every in-flight slot
		call(i)
	}
	in.WriteString(discoverLine(1))
	call(256) // waits for a slot
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	pr, pw := io.Pipe()
	go func() { io.WriteString(pw, in.String()) }() // the input stays open
	go func() { done <- s.ServeStdio(ctx, pr, outW); outW.Close() }()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			select {
			case line <- sc.Text():
			default:
			}
		}
	}()
	select {
	case l := <-line:
		if !strings.Contains(l, `"id":1,"result"`) {
			t.Fatalf("first line = %s, want the discover result", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the discover response waited for an in-flight slot (%d calls running)", running.Load())
	}
	cancel()
	<-done
	pw.Close()
}

// blockedWriter blocks every Write until release is closed.
type blockedWriter struct{ release chan struct{} }

func (w blockedWriter) Write(p []byte) (int, error) {
	<-w.release
	return len(p), nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n.Add(int64(n))
	return n, err
}

// TestStdioStopsReadingWhenOutputBlocks checks that a client that does not
// read its output makes the server stop reading, instead of letting the
// responses pile up in memory. A tool's response comes first, so that a
// worker goroutine, not the reader, is the one blocked writing.
//
// It runs in a synctest bubble: "reading stopped" is checked once every
// goroutine is blocked, not when the count stopped moving for a while.
func TestStdioStopsReadingWhenOutputBlocks(t *testing.T) {
	synctest.Test(t, testStdioStopsReadingWhenOutputBlocks)
}

func testStdioStopsReadingWhenOutputBlocks(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "t", Version: "1"}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "hi", nil })
	first := `{"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"echo",` + validMeta + `}}` + "\n"
	line := discoverLine(7)
	const total = 60000 // about 13 MB of requests
	pr, pw := io.Pipe()
	cr := &countingReader{r: pr}
	w := blockedWriter{release: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), cr, w) }()
	io.WriteString(pw, first)
	synctest.Wait() // the tool's response is being written
	go func() {
		b := []byte(strings.Repeat(line, 100))
		for range total / 100 {
			if _, err := pw.Write(b); err != nil {
				return
			}
		}
		pw.Close()
	}()
	synctest.Wait() // reading stopped
	last := cr.n.Load()
	if limit := int64(8 << 20); last > limit {
		t.Errorf("read %d bytes of input while the output was blocked, want at most %d", last, limit)
	}
	close(w.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := cr.n.Load(), int64(len(first)+total*len(line)); got != want {
		t.Errorf("read %d bytes in all, want %d", got, want)
	}
}

// snapshot returns what was written so far and in how many calls.
func (w *countingWriter) snapshot() (string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String(), w.writes
}

// TestStdioFlushesWhenInputIdle checks that the responses the reading
// goroutine serves (server/discover) are written as soon as no more input
// is waiting, while the input stays open: the server does not hold them
// until more input or the end of input comes, nor while the start of the
// next line waits for its end. Three lines that arrive in one read are
// answered in one write.
//
// It runs in a synctest bubble: "written" is checked once every goroutine
// is blocked (the server in its next read), without a timeout.
func TestStdioFlushesWhenInputIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "t", Version: "1"}})
		pr, pw := io.Pipe()
		var out countingWriter
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.ServeStdio(ctx, pr, &out) }()
		// Round 2 ends with the start of the line of id 5, which waits
		// for its end (round 3) and must not hold back the responses
		// before it.
		five := discoverLine(5)
		rounds := []struct {
			in    string
			lines int
		}{
			{discoverLine(1), 1},
			{discoverLine(2) + discoverLine(3) + discoverLine(4) + five[:20], 4},
			{five[20:], 5},
		}
		for round, r := range rounds {
			in := r.in
			go io.WriteString(pw, in)
			synctest.Wait() // the server waits for more input
			got, writes := out.snapshot()
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if len(lines) != r.lines {
				t.Fatalf("round %d: %d response lines written while the input is idle, want %d:\n%s", round, len(lines), r.lines, got)
			}
			for i, l := range lines {
				if !strings.HasPrefix(l, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{`, i+1)) {
					t.Fatalf("round %d: line %d = %.80s, want the result for id %d", round, i, l, i+1)
				}
			}
			if writes != round+1 {
				t.Errorf("round %d: %d write calls in all, want %d (one per burst of input)", round, writes, round+1)
			}
		}
		cancel()
		<-done
		pw.Close()
	})
}

// TestStdioRequestOutlivesReadBuffer checks that a request handed to a
// worker does not refer to the reader's buffer, which later input
// overwrites: a tool that reads its arguments and sends progress (with the
// request's progress token) only after more than the buffer's size of
// input was read and answered sees its own request.
func TestStdioRequestOutlivesReadBuffer(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "t", Version: "1"}})
	started, proceed := make(chan struct{}), make(chan struct{})
	mcp.AddTool(s, &mcp.Tool{Name: "later", Description: "Answers with its arguments once told to."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct {
			Text string `json:"text"`
		}) (string, error) {
			close(started)
			<-proceed
			req.Progress(1, 2, "half")
			return string(req.Arguments) + "|" + req.Info.ClientInfo.Name + "|" + req.Info.Meta.String("trace"), nil
		})
	pr, pw := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), pr, outW); outW.Close() }()
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	io.WriteString(pw, `{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"later","arguments":{"text":"mine"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"me","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":"tok","trace":"t1"}}}`+"\n")
	<-started
	// More than the reader's 64 KiB buffer of other requests, all
	// answered: the bytes the call was read into are overwritten.
	const n = 1000
	go func() {
		var b strings.Builder
		for i := range n {
			b.WriteString(discoverLine(i))
		}
		io.WriteString(pw, b.String())
	}()
	for i := range n {
		if l := <-lines; !strings.HasPrefix(l, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{`, i)) {
			t.Fatalf("line %d = %.100s, want the discover result for id %d", i, l, i)
		}
	}
	close(proceed)
	progress, result := <-lines, <-lines
	if want := `"progressToken":"tok"`; !strings.Contains(progress, want) {
		t.Errorf("progress notification %s, want %s", progress, want)
	}
	if want := `{"type":"text","text":"{\"text\":\"mine\"}|me|t1"}`; !strings.Contains(result, want) || !strings.Contains(result, `"id":"call"`) {
		t.Errorf("result %s, want id \"call\" and content %s", result, want)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
