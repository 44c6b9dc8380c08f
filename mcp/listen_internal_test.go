package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// recorder is a Notifier that keeps every message. If stuck is set, every
// message after the first (the acknowledgement) blocks until abort is
// called, as a write to a client that stopped reading does.
type recorder struct {
	stuck bool

	mu       sync.Mutex
	msgs     []string
	released chan struct{}
	once     sync.Once
}

func newRecorder(stuck bool) *recorder {
	return &recorder{stuck: stuck, released: make(chan struct{})}
}

func (r *recorder) Notify(msg []byte) {
	r.mu.Lock()
	r.msgs = append(r.msgs, string(msg))
	n := len(r.msgs)
	r.mu.Unlock()
	if r.stuck && n > 1 {
		<-r.released
	}
}

func (r *recorder) abort() { r.once.Do(func() { close(r.released) }) }

func (r *recorder) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

// waitFor waits, in a synctest bubble, until cond holds (settle).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	settle(t, what, cond)
}

type listenResult struct {
	resp   string
	status int
}

// startListen runs a subscriptions/listen request through Handle in the
// background, as a transport would.
func startListen(s *Server, id string, n Notifier) (context.CancelFunc, chan listenResult) {
	return startListenFilter(s, id, `{"toolsListChanged":true}`, n)
}

// startListenFilter is startListen with another notifications filter.
func startListenFilter(s *Server, id, filter string, n Notifier) (context.CancelFunc, chan listenResult) {
	msg, derr := mcpwire.Request{ID: id, Method: "subscriptions/listen", Params: `{"notifications":` + filter + `}`}.Message()
	if derr != nil {
		panic(derr.Message)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan listenResult, 1)
	go func() {
		resp, status := s.Handle(ctx, nil, &Incoming{Message: &msg}, n)
		done <- listenResult{string(resp), status}
	}()
	return cancel, done
}

// A client that stops reading is dropped once its buffer is full, with a
// log line, and never holds up delivery to the others.
func TestListenSlowReaderDropped(t *testing.T) { synctest.Test(t, testListenSlowReaderDropped) }

func testListenSlowReaderDropped(t *testing.T) {
	var logs strings.Builder
	var logMu sync.Mutex
	s := NewServer(&ServerOptions{Logger: slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))})
	AddTool(s, &Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })

	s.AddResource(&Resource{URI: "file:///r", Name: "r"}, func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) { return nil, nil })

	// Equal changes coalesce (TestListenCoalesces): the slow stream also
	// subscribes to resources, each updated once, so that distinct changes
	// pile up for it.
	const events = 3 * listenBuffer
	uris := make([]string, events)
	for i := range uris {
		uris[i] = "file:///" + strconv.Itoa(i)
	}
	filter, _ := json.Marshal(map[string]any{"toolsListChanged": true, "resourceSubscriptions": uris})
	slow, fast := newRecorder(true), newRecorder(false)
	cancelSlow, slowDone := startListenFilter(s, `1`, string(filter), slow)
	defer cancelSlow()
	cancelFast, fastDone := startListen(s, `2`, fast)
	waitFor(t, "both acknowledgements", func() bool { return len(slow.messages()) == 1 && len(fast.messages()) == 1 })

	for i := 1; i <= events; i++ {
		s.bus.Publish(Change{Kind: ResourceUpdated, URI: uris[i-1]})
		s.bus.Publish(Change{Kind: ToolsListChanged})
		waitFor(t, "the fast reader to get the change", func() bool { return len(fast.messages()) == 1+i })
	}

	select {
	case r := <-slowDone:
		if r.resp != "" || r.status != 0 {
			t.Errorf("dropped stream answered %q (status %d); want no response", r.resp, r.status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the slow stream was not dropped")
	}
	msgs := slow.messages()
	last := msgs[len(msgs)-1]
	want := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"requestId":1,"reason":"the client did not keep up with notifications"}}`
	if last != want {
		t.Errorf("last message to the slow stream:\ngot  %s\nwant %s", last, want)
	}
	logMu.Lock()
	logged := logs.String()
	logMu.Unlock()
	if !strings.Contains(logged, "dropping a subscriptions/listen stream") {
		t.Errorf("no log line about the dropped stream; logs: %q", logged)
	}
	if n := s.listen.count(); n != 1 {
		t.Errorf("%d open subscriptions, want 1", n)
	}
	cancelFast()
	<-fastDone
	for i, m := range fast.messages()[1:] {
		var f struct{ Method string }
		if err := json.Unmarshal([]byte(m), &f); err != nil || f.Method != "notifications/tools/list_changed" {
			t.Fatalf("fast message %d: %s", i, m)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// Shutdown waits for listen handlers, and gives up when its context ends.
func TestShutdownWaits(t *testing.T) { synctest.Test(t, testShutdownWaits) }

func testShutdownWaits(t *testing.T) {
	s := NewServer(nil)
	AddTool(s, &Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
	stuck := newRecorder(true)
	cancel, done := startListen(s, `1`, stuck)
	defer cancel()
	waitFor(t, "the acknowledgement", func() bool { return len(stuck.messages()) == 1 })
	// A change the stuck stream cannot deliver keeps its handler busy.
	s.bus.Publish(Change{Kind: ToolsListChanged})
	waitFor(t, "the change to be written", func() bool { return len(stuck.messages()) == 2 })

	ctx, cancelCtx := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelCtx()
	if err := s.Shutdown(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Shutdown with a stuck stream: %v, want context.DeadlineExceeded", err)
	}
	stuck.abort()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	r := <-done
	if !strings.Contains(r.resp, `"io.modelcontextprotocol/subscriptionId":1`) {
		t.Errorf("graceful result: %s", r.resp)
	}
}

// countingBus counts what is published on it.
type countingBus struct {
	LocalBus
	mu sync.Mutex
	n  map[Change]int
}

func (b *countingBus) Publish(c Change) {
	b.mu.Lock()
	if b.n == nil {
		b.n = map[Change]int{}
	}
	b.n[c]++
	b.mu.Unlock()
	b.LocalBus.Publish(c)
}

func (b *countingBus) counts() map[Change]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.n)
}

// longWindow makes s gather list changes for an hour after each
// publication (until endWindow), so that a test sees which publications
// were made at once.
func longWindow(t *testing.T, s *Server) {
	s.changeDelay = time.Hour
	t.Cleanup(func() {
		s.mu.Lock()
		if s.flush != nil {
			s.flush.Stop()
		}
		s.mu.Unlock()
	})
}

// endWindow makes the window that the last publication of list changes
// opened end now: what waits is published at once.
func endWindow(s *Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quietUntil = time.Time{}
	if s.flushing {
		s.flush.Reset(0)
	}
}

// Registrations before anything was served publish nothing. Later, a change
// after a quiet spell is published at once; the changes made in the window
// after a publication (registering many tools in a row) are published
// together, once, when the window ends; a change in the window that this
// publication opens is not lost either.
//
// It runs in a synctest bubble, so that "nothing was published" is checked
// once every goroutine of the server is idle, not after a guessed pause.
func TestChangesCoalesce(t *testing.T) { synctest.Test(t, testChangesCoalesce) }

func testChangesCoalesce(t *testing.T) {
	bus := new(countingBus)
	s := NewServer(&ServerOptions{Bus: bus})
	// A window far longer than any wait below: a publication seen before
	// endWindow was made at once, not at the window's end.
	longWindow(t, s)
	tools := Change{Kind: ToolsListChanged}
	published := func() int { return bus.counts()[tools] }
	settle := synctest.Wait // until every goroutine of the bubble is blocked
	addTool := func(name string) {
		AddTool(s, &Tool{Name: name, Description: "One of many."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
	}

	addTool("first")
	settle()
	if n := len(bus.counts()); n != 0 {
		t.Fatalf("registrations before anything was served published %v", bus.counts())
	}
	s.snapshot() // a request is served

	// A change is published at once; the 51 that follow it within the
	// window wait.
	addTool("t0")
	waitFor(t, "the first list change", func() bool { return published() > 0 })
	for i := 1; i < 50; i++ {
		addTool("t" + strconv.Itoa(i))
	}
	s.RemoveTools("t0", "t1")
	settle()
	if diff := cmp.Diff(map[Change]int{tools: 1}, bus.counts()); diff != "" {
		t.Errorf("published within the window of 52 registrations (-want +got):\n%s", diff)
	}
	endWindow(s)
	waitFor(t, "the burst's list change", func() bool { return published() == 2 })

	// A change in the window the burst's publication opened.
	s.RemoveTools("t2")
	settle()
	if n := published(); n != 2 {
		t.Errorf("%d list changes published before the window ended, want 2", n)
	}
	endWindow(s)
	waitFor(t, "the third list change", func() bool { return published() == 3 })

	// After a quiet spell: at once.
	endWindow(s)
	s.RemoveTools("t3")
	waitFor(t, "the fourth list change", func() bool { return published() == 4 })
	s.RemoveTools("no such tool") // no change, nothing published
	endWindow(s)
	settle()
	if diff := cmp.Diff(map[Change]int{tools: 4}, bus.counts()); diff != "" {
		t.Errorf("published in all (-want +got):\n%s", diff)
	}
}

// FuzzListenParams sends arbitrary params to subscriptions/listen (on a
// context that is already cancelled, so a valid request ends at once):
// the answer is an error, or an acknowledgement whose honoured filter is a
// subset of what was asked.
func FuzzListenParams(f *testing.F) {
	f.Add([]byte(`{"toolsListChanged":true,"resourceSubscriptions":["a","b"]}`))
	f.Add([]byte(`{"promptsListChanged":1}`))
	f.Add([]byte(`null`))
	s := NewServer(nil)
	AddTool(s, &Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
	s.AddResource(&Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) { return nil, nil })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.Fuzz(func(t *testing.T, filter []byte) {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":` + string(filter) + `}}`)
		msg, derr := jsonrpc.Decode(body)
		if derr != nil {
			return
		}
		rec := newRecorder(false)
		resp, _ := s.Handle(ctx, nil, &Incoming{Message: &msg}, rec)
		if !json.Valid(resp) {
			t.Fatalf("response is not JSON: %s", resp)
		}
		msgs := rec.messages()
		if len(msgs) == 0 {
			if !strings.Contains(string(resp), `"error"`) {
				t.Fatalf("no acknowledgement and no error: %s", resp)
			}
			return
		}
		var ack struct {
			Method string
			Params struct {
				Notifications map[string]json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(msgs[0]), &ack); err != nil || ack.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("first message %s", msgs[0])
		}
		var asked map[string]json.RawMessage // exact keys, the last duplicate wins
		if err := json.Unmarshal(filter, &asked); err != nil {
			t.Fatalf("acknowledged a filter that is not an object: %s", filter)
		}
		for k, v := range ack.Params.Notifications {
			want := "true"
			if k == "resourceSubscriptions" {
				var a, b []string
				if json.Unmarshal(v, &a) != nil || json.Unmarshal(asked[k], &b) != nil || !slices.Equal(a, b) {
					t.Fatalf("honoured %s=%s, asked %s", k, v, asked[k])
				}
				continue
			}
			if string(v) != want || string(asked[k]) != "true" {
				t.Fatalf("honoured %s=%s, asked %s in %s", k, v, asked[k], filter)
			}
		}
	})
}

// TestListenCoalesces: a burst of changes while a stream's handler is
// busy queues each distinct change once, so a client that keeps up is not
// dropped however many list changes arrive (3,000 in 0.5 s dropped a
// reading listener in 2 of 5 runs with one buffer slot per change).
func TestListenCoalesces(t *testing.T) {
	sub := &subscription{wake: make(chan struct{}, 1), kinds: 1<<ToolsListChanged | 1<<PromptsListChanged | 1<<ResourceUpdated}
	for i := range 3000 {
		for _, c := range []Change{{Kind: ToolsListChanged}, {Kind: PromptsListChanged}, {Kind: ResourceUpdated, URI: "file:///" + strconv.Itoa(i%5)}} {
			if ok, _ := sub.queue(c); !ok {
				t.Fatalf("dropped at change %d", i)
			}
		}
	}
	if len(sub.pending) != 7 {
		t.Errorf("%d changes pending, want 7 (one per list, one per URI): %v", len(sub.pending), sub.pending)
	}
	// Distinct changes still bound the buffer.
	for i := range listenBuffer {
		sub.queue(Change{Kind: ResourceUpdated, URI: "file:///other/" + strconv.Itoa(i)})
	}
	if sub.end != subDropped {
		t.Error("more distinct changes than the buffer holds did not drop the stream")
	}
}
