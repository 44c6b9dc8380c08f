package mcp

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// TestInFlightRequests: with MaxInFlightRequests 2 and two calls held in
// their handler, a third request of any method is shed with 503,
// Retry-After and data naming the limit, before its handler runs; a
// listen stream (parked or in its handler) does not hold a slot; once the
// calls end, requests are admitted again and nothing stays counted.
func TestInFlightRequests(t *testing.T) {
	for _, parking := range []bool{false, true} {
		t.Run(map[bool]string{false: "listen in the handler", true: "listen parked"}[parking], func(t *testing.T) { testInFlightRequests(t, parking) })
	}
}

func testInFlightRequests(t *testing.T, parking bool) {
	s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxInFlightRequests: 2}, HTTP: HTTPOptions{DisableListenParking: !parking}})
	g := newGate()
	AddTool(s, &Tool{Name: "held", Description: "d"}, g.handler)
	srv := httptest.NewServer(s)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s.Shutdown(ctx)
		srv.Close()
	})
	do := func(method, params string) (*http.Response, string) {
		// params are members with a trailing comma.
		resp := mcpwire.Send(t, context.Background(), srv.URL, mcpwire.Request{Method: method, Params: "{" + strings.TrimSuffix(params, ",") + "}"})
		if method == "subscriptions/listen" {
			return resp, ""
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}

	// A listen stream first: it gives its slot back once it is one.
	lresp, _ := do("subscriptions/listen", `"notifications":{"toolsListChanged":true},`)
	defer lresp.Body.Close()
	if lresp.StatusCode != 200 {
		t.Fatalf("listen: %d", lresp.StatusCode)
	}
	br := bufio.NewReader(lresp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the acknowledgement: %v", err)
		}
		if strings.HasPrefix(line, "data:") {
			break
		}
	}

	var wg sync.WaitGroup
	codes := make([]int, 2)
	ended := make(chan string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := do("tools/call", `"name":"held","arguments":{},`)
			codes[i] = resp.StatusCode
			ended <- body
		}()
	}
	for range 2 { // both calls hold their slot
		select {
		case <-g.started:
		case body := <-ended:
			t.Fatalf("a call ended before its handler was released: %s", body)
		}
	}

	for _, m := range []string{"tools/call", "server/discover"} {
		resp, body := do(m, `"name":"held","arguments":{},`)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
			!strings.Contains(body, `"data":{"quota":"maxInFlightRequests","limit":2}`) {
			t.Errorf("%s with 2 in flight: %d, Retry-After %q, %s; want 503 with Retry-After naming maxInFlightRequests 2",
				m, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	select {
	case <-g.started:
		t.Error("a shed call reached its handler")
	default:
	}

	g.release <- "a"
	g.release <- "b"
	wg.Wait()
	if codes[0] != 200 || codes[1] != 200 {
		t.Errorf("held calls: %v, want 200 200", codes)
	}
	if resp, body := do("server/discover", ""); resp.StatusCode != 200 {
		t.Errorf("discover after the calls ended: %d %s", resp.StatusCode, body)
	}
	if n := s.quota.requests.Load(); n != 0 {
		t.Errorf("%d requests still counted in flight", n)
	}
}

// TestInFlightRequestsOff: Off removes the limit.
func TestInFlightRequestsOff(t *testing.T) {
	s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxInFlightRequests: Off}})
	if !s.quota.enter() || s.quota.requests.Load() != 0 {
		t.Error("Off still counts requests")
	}
	d := NewServer(nil)
	if d.quota.maxRequests != defaultMaxInFlightRequests {
		t.Errorf("default limit %d, want %d", d.quota.maxRequests, defaultMaxInFlightRequests)
	}
}
