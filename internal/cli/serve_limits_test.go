package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

func TestDeriveSubscriptionLimit(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name     string
		nofile   uint64
		mem      uint64
		wantN    int
		wantFrom string
	}{
		// This machine: 20,000 files, 24 GiB. The file limit wins and
		// leaves 5% (1,000) for everything else.
		{"files bind", 20000, 24 * gib, 19000, "file limit"},
		// A small file limit keeps at least 256 files back.
		{"small file limit", 1024, 24 * gib, 768, "file limit"},
		// A million files on 8 GiB: memory binds at a quarter of it
		// over 32 KiB per stream, not a million-stream default.
		{"million files", 1 << 20, 8 * gib, 65536, "memory"},
		{"unlimited files", 0, 8 * gib, 65536, "memory"},
		// A container limited to 256 MiB.
		{"small container", 65536, 256 << 20, 2048, "memory"},
		// A file limit below the headroom still leaves a few streams.
		{"tiny file limit", 100, 24 * gib, minDerivedSubscriptions, "file limit"},
		{"memory unknown", 20000, 0, 19000, "file limit"},
		{"nothing known", 0, 0, 10000, "fallback"},
		// Equal limits: the file limit is named.
		{"tie", 1103764, 128 * gib, 1 << 20, "file limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := deriveSubscriptionLimit(tt.nofile, tt.mem)
			got := [2]any{l.N, l.Source}
			if diff := cmp.Diff([2]any{tt.wantN, tt.wantFrom}, got); diff != "" {
				t.Errorf("deriveSubscriptionLimit(%d, %d) (-want +got):\n%s", tt.nofile, tt.mem, diff)
			}
			if l.N > 0 && l.N < minDerivedSubscriptions {
				t.Errorf("cap %d below the floor %d", l.N, minDerivedSubscriptions)
			}
		})
	}
}

// startServe runs `mcpkit serve args...` in the process and returns its
// base URL and the log lines it wrote before the URL.
func startServeCap(t *testing.T, args ...string) (string, []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- serveContext(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited with %d", code)
		}
	})
	urlRe := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)
	sc := bufio.NewScanner(pr)
	var lines []string
	for sc.Scan() {
		if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, pr)
			return m[1], lines
		}
		lines = append(lines, sc.Text())
	}
	t.Fatalf("serve did not log its URL; logs:\n%s", strings.Join(lines, "\n"))
	return "", nil
}

func openListen(t *testing.T, url string) *http.Response {
	t.Helper()
	return mcpwire.Send(t, context.Background(), url, mcpwire.Request{ID: "7", Method: "subscriptions/listen", Params: `{"notifications":{"toolsListChanged":true}}`})
}

// TestServeMaxSubscriptions checks that --max-subscriptions caps the
// listen streams: the third of a cap of 2 gets 503 naming the cap, and
// the log says which cap is in force.
func TestServeMaxSubscriptions(t *testing.T) {
	url, logs := startServeCap(t, "--max-subscriptions", "2")
	if !strings.Contains(strings.Join(logs, "\n"), "max_subscriptions=2") {
		t.Errorf("no log line names the cap:\n%s", strings.Join(logs, "\n"))
	}
	for i := range 2 {
		resp := openListen(t, url)
		defer resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("listen %d: status %d %q, want an event stream", i, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		// The stream counts once its acknowledgment is out.
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if err != nil {
			t.Fatalf("listen %d: %v (%q)", i, err, line)
		}
	}
	resp := openListen(t, url)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(b), `"maxSubscriptions":2`) {
		t.Errorf("listen past the cap: %d %s, want 503 with maxSubscriptions 2", resp.StatusCode, b)
	}
}

// TestServeDerivedSubscriptionCap checks the log line of the derived
// default, and that a bad value is refused.
func TestServeDerivedSubscriptionCap(t *testing.T) {
	_, logs := startServeCap(t)
	all := strings.Join(logs, "\n")
	if !regexp.MustCompile(`msg="listen streams capped" max_subscriptions=\d+ derived="from the (file limit|memory|fallback) `).MatchString(all) {
		t.Errorf("no log line of the derived cap:\n%s", all)
	}
	var stderr strings.Builder
	if code := serveContext(context.Background(), []string{"--max-subscriptions", "-2"}, strings.NewReader(""), io.Discard, &stderr); code != 2 {
		t.Errorf("--max-subscriptions -2: exit %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "--max-subscriptions -2") {
		t.Errorf("--max-subscriptions -2: stderr %q", stderr.String())
	}
}
