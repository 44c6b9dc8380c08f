package load_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bench/load"
	"github.com/mcpkit/mcpkit/bench/servers"
)

// TestOverloadToolsAnswer runs both overload tools on every implementation
// (as its own process) in a short open-loop run below capacity: every
// request is answered, correctly.
func TestOverloadToolsAnswer(t *testing.T) {
	argv := append(serverArgv(t), "-burn-iters", "1000")
	for _, impl := range []string{servers.Mcpkit, servers.GoSDK, servers.McpGo} {
		t.Run(impl, func(t *testing.T) {
			t.Parallel()
			p, err := load.Start(argv, impl, load.HTTP)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			for _, method := range []string{load.CallBurn, load.CallSleep} {
				r := load.RunOpenLoop(p.URL, impl, method, load.OpenLoop{Rate: 200, Poisson: true, Duration: 300 * time.Millisecond, CPU: p.CPU})
				if r.FirstErr != nil || r.Scheduled == 0 || r.OK != r.Scheduled {
					t.Errorf("%s: %d scheduled, %d OK, %d shed, %d errors, %d timeouts, %d missed; first error %v",
						method, r.Scheduled, r.OK, r.Shed, r.Errors, r.Timeouts, r.Missed, r.FirstErr)
				}
				if method == load.CallSleep && r.P50 < servers.SleepFor {
					t.Errorf("%s: p50 %v, less than the tool's sleep %v", method, r.P50, servers.SleepFor)
				}
			}
		})
	}
}

// TestOpenLoopCountsEveryOutcome drives a server that sheds some requests
// with 503 and Retry-After, fails some with 503 without it, never answers
// some, and answers the rest correctly (mcpkit's handler): every scheduled
// request is counted exactly once, and the client-side misses (every
// connection held by an unanswered request) are counted too.
func TestOpenLoopCountsEveryOutcome(t *testing.T) {
	real, err := servers.HTTPHandler(servers.Mcpkit)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		id := requestID(body)
		switch {
		case id == 987654321 || id%4 == 0: // the golden request, and a quarter
			real.ServeHTTP(w, r)
		case id%4 == 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		case id%4 == 2:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			<-stop // past the client's timeout
		}
	}))
	defer srv.Close()
	defer close(stop)
	r := load.RunOpenLoop(srv.URL+servers.Path, servers.Mcpkit, load.Call, load.OpenLoop{
		Rate: 400, Duration: 250 * time.Millisecond, Timeout: 100 * time.Millisecond, MaxConns: 8,
	})
	if got := r.OK + r.Shed + r.Errors + r.Timeouts + r.Missed; got != r.Scheduled || r.Scheduled == 0 {
		t.Errorf("outcomes add up to %d, scheduled %d", got, r.Scheduled)
	}
	if r.OK == 0 || r.Shed == 0 || r.Errors == 0 || r.Timeouts == 0 || r.Missed == 0 {
		t.Errorf("OK %d, shed %d, errors %d, timeouts %d, missed %d: want each > 0", r.OK, r.Shed, r.Errors, r.Timeouts, r.Missed)
	}
	if r.FirstErr == nil {
		t.Error("FirstErr is nil, want the first failure")
	}
	if r.Conns > 8 {
		t.Errorf("%d connections open at once, more than the cap 8", r.Conns)
	}
}

// requestID returns the id of a JSON-RPC request body (-1: none).
func requestID(body []byte) int64 {
	_, rest, ok := bytes.Cut(body, []byte(`"id":`))
	if !ok {
		return -1
	}
	end := bytes.IndexAny(rest, ",}")
	if end < 0 {
		return -1
	}
	n, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	if err != nil {
		return -1
	}
	return n
}
