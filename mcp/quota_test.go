package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

var initBody = string(mcpwire.Initialize("", "").Bytes())

// quotaPost sends body, a legacy request outside a session, to s as a
// client at remote (with X-Forwarded-For xff when not empty).
func quotaPost(s *Server, remote, xff, body string) *httptest.ResponseRecorder {
	r := mcpwire.Request{Legacy: true, Body: []byte(body)}.ServerRequest()
	r.RemoteAddr = remote
	if xff != "" {
		r.Header.Set("X-Forwarded-For", xff)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// wantQuota checks a 429 quota answer naming quota and limit.
func wantQuota(t *testing.T, what string, w *httptest.ResponseRecorder, quota string, limit int) {
	t.Helper()
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("%s: status %d, Retry-After %q; want 429 with Retry-After: %s", what, w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	var resp struct {
		Error struct {
			Code int
			Data struct {
				Quota string
				Limit int
			}
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatalf("%s: %v: %s", what, err, w.Body)
	}
	if resp.Error.Code != -32603 || resp.Error.Data.Quota != quota || resp.Error.Data.Limit != limit {
		t.Errorf("%s: error %+v, want -32603 naming quota %s with limit %d", what, resp.Error, quota, limit)
	}
}

// TestQuotaLegacySessions: one address may open MaxSessionsPerClient
// legacy sessions; past it initialize gets 429, other addresses are not
// affected, and ending a session makes room again.
func TestQuotaLegacySessions(t *testing.T) {
	s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxSessionsPerClient: 2}})
	var ids []string
	for i := range 2 {
		w := quotaPost(s, "192.0.2.1:1000", "", initBody)
		if w.Code != 200 {
			t.Fatalf("initialize %d: %d %s", i, w.Code, w.Body)
		}
		ids = append(ids, w.Header().Get("Mcp-Session-Id"))
	}
	wantQuota(t, "third session", quotaPost(s, "192.0.2.1:1001", "", initBody), "maxSessionsPerClient", 2)
	// A client cannot escape its quota by claiming another address.
	wantQuota(t, "forged X-Forwarded-For", quotaPost(s, "192.0.2.1:1002", "198.51.100.9", initBody), "maxSessionsPerClient", 2)
	if w := quotaPost(s, "192.0.2.2:1000", "", initBody); w.Code != 200 {
		t.Errorf("another address: %d %s", w.Code, w.Body)
	}
	del := mcpwire.Request{Legacy: true, Session: ids[0], HTTPMethod: http.MethodDelete}.ServerRequest()
	del.RemoteAddr = "192.0.2.1:1000"
	dw := httptest.NewRecorder()
	s.ServeHTTP(dw, del)
	if dw.Code != 200 && dw.Code != 204 {
		t.Fatalf("DELETE: %d %s", dw.Code, dw.Body)
	}
	if w := quotaPost(s, "192.0.2.1:1000", "", initBody); w.Code != 200 {
		t.Errorf("after ending a session: %d %s", w.Code, w.Body)
	}
}

// TestQuotaTrustedProxies: behind a trusted proxy every client counts on
// the address the proxy reports, not on the proxy's.
func TestQuotaTrustedProxies(t *testing.T) {
	s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxSessionsPerClient: 1, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}})
	for _, client := range []string{"198.51.100.1", "198.51.100.2", "203.0.113.5, 198.51.100.3", "198.51.100.4, 10.0.0.7"} {
		if w := quotaPost(s, "10.0.0.1:5000", client, initBody); w.Code != 200 {
			t.Errorf("client %s behind the proxy: %d %s", client, w.Code, w.Body)
		}
	}
	wantQuota(t, "second session of 198.51.100.1", quotaPost(s, "10.0.0.2:5000", "198.51.100.1", initBody), "maxSessionsPerClient", 1)
	// The proxy's own requests without X-Forwarded-For count on it.
	if w := quotaPost(s, "10.0.0.1:5000", "", initBody); w.Code != 200 {
		t.Errorf("the proxy itself: %d %s", w.Code, w.Body)
	}
}

// TestQuotaClientAddr checks which address a request counts on.
func TestQuotaClientAddr(t *testing.T) {
	var q quotas
	q.init(&QuotaOptions{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	tests := []struct {
		remote    string
		xff       []string
		want      string
		forwarded bool // want comes from X-Forwarded-For
	}{
		{"192.0.2.1:80", nil, "192.0.2.1", false},
		{"192.0.2.1:80", []string{"198.51.100.1"}, "192.0.2.1", false}, // untrusted peer: X-Forwarded-For ignored
		{"10.1.2.3:80", []string{"198.51.100.1"}, "198.51.100.1", true},
		{"10.1.2.3:80", []string{"6.6.6.6, 198.51.100.1"}, "198.51.100.1", true}, // the leftmost entries are the client's to forge
		{"10.1.2.3:80", []string{"198.51.100.1, 10.9.9.9"}, "198.51.100.1", true},
		{"10.1.2.3:80", []string{"198.51.100.1", "10.9.9.9"}, "198.51.100.1", true},
		{"10.1.2.3:80", []string{"garbage, 10.9.9.9"}, "10.9.9.9", true},
		{"10.1.2.3:80", []string{"garbage"}, "10.1.2.3", false},
		{"10.1.2.3:80", nil, "10.1.2.3", false},
		{"[::1]:80", []string{"2001:db8::1"}, "2001:db8::1", true},
		{"[::ffff:192.0.2.1]:80", nil, "192.0.2.1", false},
		{"not an address", nil, "invalid IP", false},
	}
	for _, tt := range tests {
		h := http.Header{}
		for _, v := range tt.xff {
			h.Add("X-Forwarded-For", v)
		}
		if got, fwd := q.clientAddr(tt.remote, h); got.String() != tt.want || fwd != tt.forwarded {
			t.Errorf("%s with %q: %s (forwarded %v), want %s (forwarded %v)", tt.remote, tt.xff, got, fwd, tt.want, tt.forwarded)
		}
	}
}

// TestQuotaListen: one client may hold MaxSubscriptionsPerClient listen
// streams; the next gets 429 and the quota is released when a stream ends.
func TestQuotaListen(t *testing.T) {
	for _, parking := range []bool{false, true} {
		t.Run(map[bool]string{false: "in the handler", true: "parked"}[parking], func(t *testing.T) { testQuotaListen(t, parking) })
	}
}

func testQuotaListen(t *testing.T, parking bool) {
	s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxSubscriptionsPerClient: 2}, HTTP: HTTPOptions{DisableListenParking: !parking}})
	AddTool(s, &Tool{Name: "a", Description: "A."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	open := func() *http.Response {
		return mcpwire.Send(t, context.Background(), srv.URL, mcpwire.Request{Method: "subscriptions/listen", Params: `{"notifications":{"toolsListChanged":true}}`})
	}
	var streams []*http.Response
	for range 2 {
		resp := open()
		if resp.StatusCode != 200 {
			t.Fatalf("stream: %d", resp.StatusCode)
		}
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the acknowledgement: %v", err)
			}
			if strings.HasPrefix(line, "data:") {
				break
			}
		}
		streams = append(streams, resp)
	}
	waitHeld := func(n int) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			released := s.quota.releasedChan()
			if s.quota.held(quotaSubscriptions, "a 127.0.0.1") == n {
				return
			}
			var nudge <-chan time.Time
			if parking {
				// A parked stream notices a hang-up at once where the
				// platform tells (internal/park.Watch), else at its next write:
				// give it one if no release came meanwhile.
				nudge = time.After(100 * time.Millisecond)
			}
			select {
			case <-released:
			case <-nudge:
				AddTool(s, &Tool{Name: "nudge", Description: "N."}, func(ctx context.Context, req *ToolRequest, in struct{}) (string, error) { return "", nil })
			case <-deadline:
				t.Fatalf("held %d streams, want %d", s.quota.held(quotaSubscriptions, "a 127.0.0.1"), n)
			}
		}
	}
	waitHeld(2)
	third := open()
	defer third.Body.Close()
	if third.StatusCode != http.StatusTooManyRequests || third.Header.Get("Retry-After") == "" {
		t.Fatalf("third stream: %d, Retry-After %q; want 429 with Retry-After", third.StatusCode, third.Header.Get("Retry-After"))
	}
	var e struct{ Error rpcError }
	json.NewDecoder(third.Body).Decode(&e)
	if diff := cmp.Diff(`{"quota":"maxSubscriptionsPerClient","limit":2}`, string(e.Error.Data)); diff != "" {
		t.Errorf("error data (-want +got):\n%s", diff)
	}
	streams[0].Body.Close()
	waitHeld(1)
	streams[1].Body.Close()
	waitHeld(0)
}

// TestInFlightBytes: a request that would take the request bytes in flight
// past MaxInFlightBytes is shed with 503 and Retry-After (bodies of 64 KiB
// or more are counted).
func TestInFlightBytes(t *testing.T) {
	s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxInFlightBytes: 100 << 10}})
	if w := mcpwire.Serve(t, s, mcpwire.Request{Method: "server/discover"}); w.Status != 200 {
		t.Fatalf("small request: %d %s", w.Status, w.Raw)
	}
	big := mcpwire.Request{Method: "server/discover", Params: `{"pad":"` + strings.Repeat("x", 120<<10) + `"}`}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, big.ServerRequest())
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), `"quota":"maxInFlightBytes"`) {
		t.Errorf("big request: %d, Retry-After %q, %s; want 503 with Retry-After naming maxInFlightBytes", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if n := s.quota.inFlight.Load(); n != 0 {
		t.Errorf("%d bytes still counted in flight", n)
	}
}

// TestQuotaTasks: one principal may run MaxTasksPerClient tasks at once;
// past it a task call gets 429 naming the quota, while other principals
// still start tasks, and the quota is released when a task's handler ends.
func TestQuotaTasks(t *testing.T) {
	s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxTasksPerClient: 1}})
	g := newGate()
	AddTool(s, &Tool{Name: "optional", Description: "d", TaskSupport: TaskOptional}, g.handler)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	ada := &Principal{Issuer: "https://as.example", Subject: "ada"}
	bob := &Principal{Issuer: "https://as.example", Subject: "bob"}
	start := func(p *Principal) rpcReply {
		return taskCall(t, context.Background(), s, p, extCaps, "tools/call", `{"name":"optional","arguments":{}}`)
	}
	if r := start(ada); r.Error != nil {
		t.Fatalf("ada's first task: %+v", r.Error)
	}
	<-g.started
	r := start(ada)
	if r.Error == nil || r.Status != http.StatusTooManyRequests || string(r.Error.Data) != `{"quota":"maxTasksPerClient","limit":1}` {
		t.Fatalf("ada's second task: %+v (HTTP %d), want 429 naming maxTasksPerClient", r.Error, r.Status)
	}
	if r := start(bob); r.Error != nil {
		t.Fatalf("bob's task: %+v", r.Error)
	}
	<-g.started
	g.release <- "done"
	g.release <- "done"
	deadline := time.After(10 * time.Second)
	for {
		released := s.quota.releasedChan()
		if s.quota.held(quotaTasks, "p https://as.example ada") == 0 && s.quota.held(quotaTasks, "p https://as.example bob") == 0 {
			return
		}
		select {
		case <-released:
		case <-deadline:
			t.Fatal("the task quota was not released when the handlers returned")
		}
	}
}

// TestMaxResponseBytes: a result that encodes to more than
// MaxResponseBytes (here invalid UTF-8, which grows sixfold as \ufffd
// escapes) is replaced with an error naming the bound, in both eras, with
// and without interceptors (which see the error as the call's outcome).
func TestMaxResponseBytes(t *testing.T) {
	for _, tt := range []struct {
		name                string
		legacy, intercepted bool
	}{
		{"modern", false, false},
		{"modern intercepted", false, true},
		{"legacy", true, false},
		{"legacy intercepted", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := &ServerOptions{Quotas: QuotaOptions{MaxResponseBytes: 4000}}
			var mu sync.Mutex
			var outcomes []Outcome
			if tt.intercepted {
				opts.Interceptors = []Interceptor{func(ctx context.Context, c *Call, next CallHandler) Outcome {
					o := next(ctx, c)
					if c.Method == "tools/call" {
						mu.Lock()
						outcomes = append(outcomes, o)
						mu.Unlock()
					}
					return o
				}}
			}
			s := NewServer(opts)
			type in struct {
				N int `json:"n"`
			}
			AddTool(s, &Tool{Name: "junk", Description: "Invalid UTF-8."}, func(ctx context.Context, req *ToolRequest, in in) (string, error) {
				return strings.Repeat("\xff", in.N), nil
			})
			var lc *legacyClient
			if tt.legacy {
				lc = newLegacyHTTP(t, s)
			}
			junk := func(n int) *rpcError {
				t.Helper()
				params := `{"name":"junk","arguments":{"n":` + strconv.Itoa(n) + `}}`
				if !tt.legacy {
					return call(t, s, "tools/call", params).Error
				}
				resp := lc.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`)
				defer resp.Body.Close()
				var m rpcMessage
				if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
					for ev := range readEvents(resp.Body) {
						if ev.data != "" {
							if m = decodeEvent(t, ev); m.Method == "" {
								break
							}
						}
					}
				} else if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
					t.Fatalf("status %d: %v", resp.StatusCode, err)
				}
				if m.Error == nil {
					return nil
				}
				e := new(rpcError)
				if err := json.Unmarshal(m.Error, e); err != nil {
					t.Fatal(err)
				}
				return e
			}
			if e := junk(100); e != nil {
				t.Fatalf("small result: %+v", e)
			}
			e := junk(1000)
			if e == nil || e.Code != -32603 || string(e.Data) != `{"quota":"maxResponseBytes","limit":4000}` {
				t.Errorf("1000 invalid bytes: %+v, want -32603 naming maxResponseBytes", e)
			}
			if tt.intercepted {
				mu.Lock()
				defer mu.Unlock()
				if len(outcomes) != 2 || outcomes[0].Err != nil || outcomes[1].Err == nil || outcomes[1].Err.Code != -32603 {
					t.Errorf("outcomes the interceptor saw: %+v, want no error and then -32603", outcomes)
				}
			}
		})
	}
}

// failInitialize is an interceptor that fails the first n initialize
// calls after the handshake ran, with "not today".
func failInitialize(n int32) Interceptor {
	var fails atomic.Int32
	fails.Store(n)
	return func(ctx context.Context, c *Call, next CallHandler) Outcome {
		o := next(ctx, c)
		if c.Method == "initialize" && fails.Add(-1) >= 0 {
			return Outcome{Err: &Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: not today"}}
		}
		return o
	}
}

// TestQuotaFailedInitialize: an initialize that an interceptor fails (here
// after the handshake ran) opens no session: the error names none in
// Mcp-Session-Id, the session quota is not held, and three failures do
// not lock the client out.
func TestQuotaFailedInitialize(t *testing.T) {
	s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxSessionsPerClient: 2}, Interceptors: []Interceptor{failInitialize(3)}})
	for i := range 3 {
		w := quotaPost(s, "192.0.2.1:1000", "", initBody)
		if id := w.Header().Get("Mcp-Session-Id"); id != "" || !strings.Contains(w.Body.String(), "not today") {
			t.Errorf("failed initialize %d: %d, Mcp-Session-Id %q, body %s", i, w.Code, id, w.Body)
		}
	}
	if n := s.quota.held(quotaSessions, "a 192.0.2.1"); n != 0 {
		t.Errorf("after three failed initializes the client holds %d sessions, want 0", n)
	}
	for i := range 2 {
		w := quotaPost(s, "192.0.2.1:1000", "", initBody)
		if w.Code != 200 || w.Header().Get("Mcp-Session-Id") == "" {
			t.Errorf("initialize %d after the failures: %d %q %s", i, w.Code, w.Header().Get("Mcp-Session-Id"), w.Body)
		}
	}
}

// TestFailedInitializeStdio: on stdio, an initialize that an interceptor
// fails leaves the connection uninitialized, so that the client may try
// again (it was "already initialized" before).
func TestFailedInitializeStdio(t *testing.T) {
	s := NewServer(&ServerOptions{Interceptors: []Interceptor{failInitialize(1)}, Logger: discardLogger()})
	init2 := mcpwire.Initialize("", "")
	init2.ID = "2"
	in := initBody + "\n" + string(init2.Bytes()) + "\n"
	var out strings.Builder
	if err := s.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "not today") || !strings.Contains(lines[1], `"protocolVersion"`) {
		t.Errorf("answers:\n%s\nwant the refusal, then an initialize result", out.String())
	}
}

// TestQuotaIPv6Prefix: the addresses (and zones) of one IPv6 /64 are one
// client by default, so that a host cannot multiply its quota by using
// more of its addresses; other /64s, and each address with IPv6Prefix
// Off, count apart.
func TestQuotaIPv6Prefix(t *testing.T) {
	tests := []struct {
		name   string
		prefix int
		addrs  []string // the peers of the initializes, in order
		want   []int    // the status of each
	}{
		{"one /64 by default", 0, []string{"[2001:db8::1]:1000", "[2001:db8::2]:1000", "[2001:db8::ffff:1]:1000", "[fe80::1%eth0]:1", "[2001:db8:0:1::1]:1000"},
			[]int{200, 200, 429, 200, 200}},
		{"zones are one address", 0, []string{"[fe80::1%eth0]:1", "[fe80::1%eth1]:1", "[fe80::1%eth2]:1"}, []int{200, 200, 429}},
		{"a /48", 48, []string{"[2001:db8::1]:1000", "[2001:db8:0:1::1]:1000", "[2001:db8:0:2::1]:1000"}, []int{200, 200, 429}},
		{"each address with Off", Off, []string{"[2001:db8::1]:1000", "[2001:db8::2]:1000", "[2001:db8::3]:1000"}, []int{200, 200, 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxSessionsPerClient: 2, IPv6Prefix: tt.prefix}})
			var got []int
			for _, a := range tt.addrs {
				got = append(got, quotaPost(s, a, "", initBody).Code)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestQuotaIPv6PrefixTooLong(t *testing.T) {
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "IPv6Prefix") {
			t.Errorf("panic %v, want one naming IPv6Prefix", p)
		}
	}()
	NewServer(&ServerOptions{Quotas: QuotaOptions{IPv6Prefix: 129}})
}
