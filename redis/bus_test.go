package redis

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	mcpclient "github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/internal/realtime"
	"github.com/mcpkit/mcpkit/mcp"
)

// recorder collects the changes a subscriber gets.
type recorder struct {
	mu sync.Mutex
	cs []mcp.Change
}

func (r *recorder) add(c mcp.Change) {
	r.mu.Lock()
	r.cs = append(r.cs, c)
	r.mu.Unlock()
}

func (r *recorder) got() []mcp.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]mcp.Change(nil), r.cs...)
}

// waitFor polls cond for up to d. Every wait of this package's tests is on
// a real Redis server (its pub/sub delivery, its TTLs, its restart) or a
// child process, whose time no synctest bubble can hold: they poll, with a
// deadline, through the one helper realtime.Poll.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	realtime.Poll(t, d, what, cond)
}

func dial(t *testing.T, url string, lb *logBuffer) *Bus {
	t.Helper()
	o := &BusOptions{Channel: "test:" + t.Name()}
	if lb != nil {
		o.Logger = slog.New(slog.NewTextHandler(lb, nil))
	}
	b, err := Dial(url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Ready(ctx); err != nil {
		t.Fatalf("bus not subscribed: %v", err)
	}
	return b
}

// A change published on one replica reaches the subscribers of every
// replica exactly once, its own included.
func TestBusAcrossReplicas(t *testing.T) {
	r := startRedis(t)
	a, b := dial(t, r.URL(), nil), dial(t, r.URL(), nil)
	var ra, rb recorder
	a.Subscribe(ra.add)
	b.Subscribe(rb.add)

	changes := []mcp.Change{
		{Kind: mcp.ToolsListChanged},
		{Kind: mcp.ResourceUpdated, URI: "file:///a b/ü.txt"},
		{Kind: mcp.PromptsListChanged},
	}
	for _, c := range changes {
		a.Publish(c)
	}
	b.Publish(mcp.Change{Kind: mcp.ResourcesListChanged})
	want := append(append([]mcp.Change(nil), changes...), mcp.Change{Kind: mcp.ResourcesListChanged})
	for _, rec := range []*recorder{&ra, &rb} {
		waitFor(t, 5*time.Second, "every change", func() bool { return len(rec.got()) >= len(want) })
	}
	// Duplicates would be published before a marker published now, and
	// each subscriber receives the channel's messages in order: once the
	// markers arrived, so did any duplicate.
	end := mcp.Change{Kind: mcp.ResourceUpdated, URI: "test:end"}
	a.Publish(end)
	b.Publish(end)
	for _, rec := range []*recorder{&ra, &rb} {
		waitFor(t, 5*time.Second, "the end markers", func() bool { return count(rec.got(), end) >= 2 })
	}
	sortChanges := cmp.Transformer("sort", func(in []mcp.Change) map[mcp.Change]int {
		m := map[mcp.Change]int{}
		for _, c := range in {
			m[c]++
		}
		return m
	})
	want = append(want, end, end)
	if diff := cmp.Diff(want, ra.got(), sortChanges); diff != "" {
		t.Errorf("replica a got (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, rb.got(), sortChanges); diff != "" {
		t.Errorf("replica b got (-want +got):\n%s", diff)
	}
}

// Redis restarts: both replicas say so in their logs, keep their
// subscribers, deliver local changes meanwhile, publish what they kept
// once Redis is back, and tell listeners to re-list.
func TestBusSurvivesRedisRestart(t *testing.T) {
	defer func(d time.Duration) { maxBackoff = d }(maxBackoff)
	maxBackoff = 200 * time.Millisecond
	r := startRedis(t)
	var la, lb logBuffer
	a, b := dial(t, r.URL(), &la), dial(t, r.URL(), &lb)
	var ra, rb recorder
	a.Subscribe(ra.add)
	b.Subscribe(rb.add)

	r.Stop()
	waitFor(t, 5*time.Second, "b to log the outage", func() bool { return strings.Contains(lb.String(), "Redis unreachable") })
	updated := mcp.Change{Kind: mcp.ResourceUpdated, URI: "test://during-outage"}
	a.Publish(updated)
	if got := ra.got(); len(got) != 1 || got[0] != updated {
		t.Fatalf("a's own subscriber got %v during the outage, want the change at once", got)
	}
	waitFor(t, 5*time.Second, "a to log that it cannot publish", func() bool { return strings.Contains(la.String(), "cannot publish") })

	r.Start()
	// What a kept during the outage goes out once Redis is back. (Whether
	// b hears it depends on which of the two reconnects first: pub/sub
	// keeps nothing for a subscriber that is not there yet. That is what
	// the re-list notifications below are for.)
	waitFor(t, 10*time.Second, "a to publish what it kept", func() bool { return strings.Contains(la.String(), "publishing the changes kept meanwhile") })
	waitFor(t, 5*time.Second, "b to log the recovery", func() bool { return strings.Contains(lb.String(), "Redis reachable again") })
	relist := map[mcp.ChangeKind]bool{}
	for _, c := range rb.got() {
		relist[c.Kind] = true
	}
	for _, k := range []mcp.ChangeKind{mcp.ToolsListChanged, mcp.PromptsListChanged, mcp.ResourcesListChanged} {
		if !relist[k] {
			t.Errorf("b's subscribers were not told %v after the outage; got %v", k, rb.got())
		}
	}

	// Business as usual afterwards, in both directions.
	n := len(ra.got())
	b.Publish(mcp.Change{Kind: mcp.ToolsListChanged})
	waitFor(t, 5*time.Second, "a to get b's change after the restart", func() bool { return len(ra.got()) > n })
}

// A bus whose Redis is not there says so, and serves local subscribers.
func TestBusRedisUnreachable(t *testing.T) {
	var lb logBuffer
	b, err := Dial("redis://127.0.0.1:"+itoa(freePort(t))+"/0", &BusOptions{Logger: slog.New(slog.NewTextHandler(&lb, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var rec recorder
	b.Subscribe(rec.add)
	b.Publish(mcp.Change{Kind: mcp.ToolsListChanged})
	if len(rec.got()) != 1 {
		t.Errorf("local subscriber got %v", rec.got())
	}
	waitFor(t, 5*time.Second, "the outage log line", func() bool { return strings.Contains(lb.String(), "Redis unreachable") })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.Ready(ctx); err == nil {
		t.Error("Ready without Redis")
	}
}

func TestDialBadURL(t *testing.T) {
	if _, err := Dial("http://127.0.0.1:1", nil); err == nil {
		t.Error("Dial accepted a URL that is not redis://")
	}
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + jsonNumber(n)) }

func jsonNumber(n int) string { b, _ := json.Marshal(n); return string(b) }

// Two mcp.Servers, each with its own Redis bus: a tool registered on one
// and a resource reported updated on one reach a listen stream on the
// other.
func TestServersShareChanges(t *testing.T) {
	r := startRedis(t)
	newServer := func() (*mcp.Server, string) {
		s := mcp.NewServer(&mcp.ServerOptions{Bus: dial(t, r.URL(), nil)})
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."},
			func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
		s.AddResource(&mcp.Resource{URI: "test://watched", Name: "watched"},
			func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "x"}}}, nil
			})
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		return s, srv.URL
	}
	a, aURL := newServer()
	_, bURL := newServer()
	// a has served (the client'"'"'s server/discover): its changes are published.
	ac, err := mcpclient.Connect(context.Background(), &mcpclient.HTTPTransport{URL: aURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ac.Close()

	// The frames are compared as they go on the wire, subscription id and
	// all: a raw listen request, not the client'"'"'s Listen.
	resp := mcpwire.Send(t, context.Background(), bURL, mcpwire.Request{ID: `"L"`, Method: "subscriptions/listen",
		Params: `{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["test://watched"]}}`})
	t.Cleanup(func() { resp.Body.Close() })
	frames := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				frames <- d
			}
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case f := <-frames:
			return f
		case <-time.After(5 * time.Second):
			t.Fatal("no frame within 5s")
		}
		return ""
	}
	if f := next(); !strings.Contains(f, "notifications/subscriptions/acknowledged") {
		t.Fatalf("first frame %s", f)
	}
	mcp.AddTool(a, &mcp.Tool{Name: "new", Description: "Registered at run time on replica a."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
	tag := `"_meta":{"io.modelcontextprotocol/subscriptionId":"L"}`
	if got, want := next(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{`+tag+`}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	a.NotifyResourceUpdated("test://other") // nobody asked for it
	a.NotifyResourceUpdated("test://watched")
	if got, want := next(), `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{`+tag+`,"uri":"test://watched"}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// count is how many times c is in cs.
func count(cs []mcp.Change, c mcp.Change) int {
	n := 0
	for _, x := range cs {
		if x == c {
			n++
		}
	}
	return n
}
