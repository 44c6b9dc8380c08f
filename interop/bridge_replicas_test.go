package interop

// Two bridge replicas in front of the npm reference server, configured as
// the full build's `mcpkit bridge --redis URL --advertise-url URL` is: one
// requestState key, the Redis bus, task store and session store on a real
// redis-server. The retry of a held call that reaches the other replica
// is forwarded to its owner and never run again; a backend's list_changed
// on one replica reaches the other's listen streams through Redis.

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/redis"
)

// startRedis starts redis-server on a free loopback port with its own
// temporary directory, killed when the test ends, and returns its address.
// It skips the test when redis-server is not installed (scripts/test.sh
// installs Debian's redis-server for the interop step).
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (Debian package redis-server); skipping the replicas test, which needs a real Redis")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	rdb := goredis.NewClient(&goredis.Options{Addr: addr})
	defer rdb.Close()
	// redis-server (a child process) owns the time it takes to listen:
	// poll it with PING, with a deadline.
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return addr
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server did not answer PING on %s within 10 s: %v\n%s", addr, err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replica is one bridge with its HTTP front on a loopback port.
type replica struct {
	b   *bridge.Bridge
	url string
	// posts and forwarded count the POSTs the front got, and those of them
	// another replica forwarded.
	posts, forwarded atomic.Int32
}

// startReplica starts a bridge in front of server-everything, its front
// served on a loopback port with AdvertiseURL set to it, sharing keys and
// Redis (bus, task store, legacy session store) with the other replicas,
// as the full build's dialRedis sets them.
func startReplica(t *testing.T, command []string, keys [][]byte, redisAddr string) *replica {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := &replica{}
	var front atomic.Pointer[mcp.Server]
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost {
			r.posts.Add(1)
			if req.Header.Get("Mcpkit-Bridge-Forwarded") != "" {
				r.forwarded.Add(1)
			}
		}
		front.Load().ServeHTTP(w, req)
	}))
	t.Cleanup(ts.Close)
	r.url = ts.URL + "/mcp"

	rdb := goredis.NewClient(&goredis.Options{Addr: redisAddr})
	bus := redis.NewBus(rdb, &redis.BusOptions{Logger: quiet})
	tasks := redis.NewTaskStore(rdb, &redis.TaskStoreOptions{Logger: quiet})
	so := mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: keys}, Bus: bus}
	so.Tasks.Store = tasks
	so.Legacy.SessionStore = redis.NewSessionStore(rdb, nil)
	b, err := bridge.New(context.Background(), &bridge.Options{
		Backend: func() client.Transport {
			return &client.CommandTransport{Command: command[0], Args: command[1:], Stderr: io.Discard}
		},
		Server:       so,
		Logger:       quiet,
		MinBackoff:   10 * time.Millisecond,
		AdvertiseURL: r.url,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: the bridge, then Redis's users, then the
	// HTTP server.
	t.Cleanup(func() {
		tasks.Close()
		bus.Close()
		rdb.Close()
	})
	t.Cleanup(func() { b.Close() })
	front.Store(b.Server())
	r.b = b
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bus.Ready(ctx); err != nil {
		t.Fatalf("the Redis bus is not ready: %v", err)
	}
	return r
}

// splitRoundTripper sends the POSTs that carry inputResponses (the
// retries of input_required) to retry, everything else to first: a load
// balancer that happens to pick another replica for the retry.
type splitRoundTripper struct {
	first, retry *url.URL
	mu           sync.Mutex
	retries      int
}

func (s *splitRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	target := s.first
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if bytes.Contains(body, []byte(`"inputResponses"`)) {
			target = s.retry
			s.mu.Lock()
			s.retries++
			s.mu.Unlock()
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
	} else {
		req = req.Clone(req.Context())
	}
	req.URL.Scheme, req.URL.Host = target.Scheme, target.Host
	req.Host = ""
	return http.DefaultTransport.RoundTrip(req)
}

// TestBridgeReplicasRedis runs two replicas over a real Redis: a sampling
// call starts on replica A, its retry (with inputResponses) reaches
// replica B, which forwards it to A (the owner sealed in the
// requestState); the call completes and the backend asked for sampling
// once, so it ran the tool once. Then a backend's
// notifications/resources/list_changed on A reaches a listen stream on B
// through the Redis bus.
func TestBridgeReplicasRedis(t *testing.T) {
	command := everythingServer(t)
	addr := startRedis(t)
	keys := [][]byte{bytes.Repeat([]byte{9}, 32)}
	a := startReplica(t, command, keys, addr)
	b := startReplica(t, command, keys, addr)

	t.Run("retry on the other replica", func(t *testing.T) {
		ua, _ := url.Parse(a.url)
		ub, _ := url.Parse(b.url)
		split := &splitRoundTripper{first: ua, retry: ub}
		var s sampleAnswer
		c, err := client.Connect(context.Background(),
			&client.HTTPTransport{URL: a.url, HTTPClient: &http.Client{Transport: split}},
			&client.Options{Sample: s.sample})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if c.Era() != mcp.EraModern {
			t.Fatalf("era %s, want modern", c.Era())
		}
		postsB := b.posts.Load()
		res, err := c.CallTool(context.Background(), "trigger-sampling-request", map[string]any{"prompt": "replicas"})
		if err != nil {
			t.Fatal(err)
		}
		if text := resultText(res); !strings.Contains(text, "a sampled answer") {
			t.Errorf("result %q lacks the sampled answer", text)
		}
		// One sampling request: the backend ran the tool once (a second
		// run, on B's backend, would have asked again).
		if got := s.asked(); len(got) != 1 || !strings.Contains(got[0], "replicas") {
			t.Errorf("the front client was asked %q, want one sampling", got)
		}
		split.mu.Lock()
		retries := split.retries
		split.mu.Unlock()
		if retries != 1 || b.posts.Load()-postsB != 1 || a.forwarded.Load() != 1 {
			t.Errorf("%d retries, %d POSTs to B, %d forwarded to A; want the one retry on B forwarded to A",
				retries, b.posts.Load()-postsB, a.forwarded.Load())
		}
	})

	t.Run("list_changed through Redis", func(t *testing.T) {
		onB, err := client.Connect(context.Background(), &client.HTTPTransport{URL: b.url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer onB.Close()
		onA, err := client.Connect(context.Background(), &client.HTTPTransport{URL: a.url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer onA.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for ev, err := range onB.Listen(ctx, client.ListenFilter{ResourcesListChanged: true}) {
			if err != nil {
				t.Fatalf("listen on B: %v", err)
			}
			if ev.Acknowledged != nil {
				if !ev.Acknowledged.ResourcesListChanged {
					t.Fatalf("B acknowledged %+v, want resourcesListChanged", ev.Acknowledged)
				}
				// gzip-file-as-resource adds a session resource to A's
				// backend, which says resources/list_changed.
				data := "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte("hello replicas"))
				res, err := onA.CallTool(ctx, "gzip-file-as-resource", map[string]any{"name": "hello.txt.gz", "data": data})
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError {
					t.Fatalf("gzip-file-as-resource on A: %q", resultText(res))
				}
				continue
			}
			if ev.Notification.Method == "notifications/resources/list_changed" {
				return
			}
		}
		t.Fatalf("B's listen stream ended without notifications/resources/list_changed (%v)", ctx.Err())
	})
}
