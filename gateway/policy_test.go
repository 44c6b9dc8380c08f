package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

// resource is the canonical URI of the protected gateways of these tests.
const resource = "https://gw.example/mcp"

// protected starts a gateway over backends whose front requires tokens of
// as (with the front's required scopes), served in-process.
func protected(t *testing.T, as *oauthtest.Server, required []string, backends []gateway.Backend) *gateway.Gateway {
	t.Helper()
	g, err := gateway.New(context.Background(), backends, &gateway.Options{Logger: quiet, Server: mcp.ServerOptions{Logger: quiet, State: mcp.StateOptions{Keys: testKeys},
		Auth: &mcp.AuthOptions{Verifier: as.Verifier(resource), Resource: resource, AuthorizationServers: []string{as.URL}, RequiredScopes: required}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// serve sends r to h with token ("" for none) and returns the response.
func serve(t *testing.T, h http.Handler, r mcpwire.Request, token string) *mcpwire.Response {
	t.Helper()
	req := r.ServerRequest()
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	resp, err := mcpwire.Read(w.Result())
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func callReq(name string) mcpwire.Request {
	return mcpwire.Request{Method: "tools/call", Params: `{"name":"` + name + `","arguments":{}}`}
}

// listed returns the tool names of a tools/list response and its
// cacheScope.
func listed(t *testing.T, resp *mcpwire.Response) ([]string, string) {
	t.Helper()
	var m struct {
		Result struct {
			Tools      []struct{ Name string }
			CacheScope string
		}
	}
	resp.Decode(t, &m)
	var names []string
	for _, tool := range m.Result.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names, m.Result.CacheScope
}

func TestScopes(t *testing.T) {
	as := oauthtest.NewServer(t, nil)
	files := srv{name: "files", tools: []string{"read", "write"}, resources: []string{"file:///a"}}.backend()
	files.Scopes = []string{"files:read"}
	files.ToolScopes = map[string][]string{"write": {"files:write"}}
	g := protected(t, as, []string{"mcp"}, []gateway.Backend{files, srv{name: "open", tools: []string{"t"}}.backend()})
	h := g.Server()
	for _, tc := range []struct {
		name      string
		scopes    []string
		tools     []string
		forbidden map[string]string // a tool whose call is 403, and the scope its challenge names
	}{
		{"only the front's scope", []string{"mcp"}, []string{"open_t"},
			map[string]string{"files_read": "mcp files:read", "files_write": "mcp files:read files:write"}},
		{"the server's scope", []string{"mcp", "files:read"}, []string{"files_read", "open_t"},
			map[string]string{"files_write": "mcp files:read files:write"}},
		{"every scope", []string{"mcp", "files:read", "files:write"}, []string{"files_read", "files_write", "open_t"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token := as.Token(&oauthtest.TokenOptions{Scopes: tc.scopes, Audience: resource})
			resp := serve(t, h, mcpwire.Request{Method: "tools/list"}, token)
			names, scope := listed(t, resp)
			if diff := cmp.Diff(tc.tools, names); diff != "" || scope != "private" {
				t.Errorf("tools/list: %s (-want +got):\n%s cacheScope %q, want private", resp.Raw, diff, scope)
			}
			for _, tool := range []string{"files_read", "files_write", "open_t"} {
				resp := serve(t, h, callReq(tool), token)
				want, forbidden := tc.forbidden[tool]
				if !forbidden {
					if resp.Status != 200 || !strings.Contains(string(resp.Raw), `:`+strings.TrimPrefix(strings.TrimPrefix(tool, "files_"), "open_")) {
						t.Errorf("call %s: %d %s, want its answer", tool, resp.Status, resp.Raw)
					}
					continue
				}
				challenge := resp.Header.Get("WWW-Authenticate")
				if resp.Status != 403 || !strings.Contains(challenge, `error="insufficient_scope"`) || !strings.Contains(challenge, `scope="`+want+`"`) ||
					!strings.Contains(string(resp.Raw), `"error":"insufficient_scope"`) {
					t.Errorf("call %s: %d %q %s\nwant 403 insufficient_scope with scope=%q", tool, resp.Status, challenge, resp.Raw, want)
				}
			}
		})
	}
	// Resources of the scoped server are hidden and forbidden the same way.
	token := as.Token(&oauthtest.TokenOptions{Scopes: []string{"mcp"}, Audience: resource})
	resp := serve(t, h, mcpwire.Request{Method: "resources/list"}, token)
	if strings.Contains(string(resp.Raw), "file:///a") {
		t.Errorf("resources/list without files:read lists the server's resource: %s", resp.Raw)
	}
	resp = serve(t, h, mcpwire.Request{Method: "resources/read", Params: `{"uri":"file:///a"}`}, token)
	if resp.Status != 403 {
		t.Errorf("resources/read without files:read: %d %s, want 403", resp.Status, resp.Raw)
	}
}

func TestScopesNeedAuth(t *testing.T) {
	files := srv{name: "files", tools: []string{"read"}}.backend()
	files.ToolScopes = map[string][]string{"read": {"files:read"}}
	_, err := gateway.New(context.Background(), []gateway.Backend{files}, &gateway.Options{Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), `backend "files" has scopes`) || !strings.Contains(err.Error(), "no Auth") {
		t.Errorf("New with scopes and no Auth = %v, want an error naming the backend", err)
	}
}

func TestRateLimit(t *testing.T) {
	limited := srv{name: "slow", tools: []string{"t"}}.backend()
	limited.RateLimit = &gateway.RateLimit{Count: 1, Per: 3600e9, Burst: 2}
	g, _ := start(t, []gateway.Backend{limited, srv{name: "free", tools: []string{"t"}}.backend()}, nil)
	h := g.Server()
	for i := range 2 {
		if resp := serve(t, h, callReq("slow_t"), ""); resp.Status != 200 {
			t.Fatalf("call %d within the burst: %d %s", i, resp.Status, resp.Raw)
		}
	}
	resp := serve(t, h, callReq("slow_t"), "")
	var m struct {
		Error struct {
			Code    int
			Message string
			Data    map[string]any
		}
	}
	resp.Decode(t, &m)
	wantData := map[string]any{"quota": "rateLimit", "backend": "slow", "limit": "1/h", "burst": 2.0}
	if resp.Status != 429 || resp.Header.Get("Retry-After") == "" || m.Error.Code != -32603 ||
		!strings.HasPrefix(m.Error.Message, "Rate limit exceeded") || !cmp.Equal(m.Error.Data, wantData) {
		t.Errorf("past the burst: %d Retry-After %q %s\nwant 429 with Retry-After, -32603 and data %v", resp.Status, resp.Header.Get("Retry-After"), resp.Raw, wantData)
	}
	if ra := resp.Header.Get("Retry-After"); ra != "3600" && !strings.HasPrefix(ra, "35") {
		t.Errorf("Retry-After %q, want an hour: the bucket gets one token an hour", ra)
	}
	if resp := serve(t, h, callReq("free_t"), ""); resp.Status != 200 {
		t.Errorf("a backend without a limit: %d %s", resp.Status, resp.Raw)
	}
	// Lists do not count.
	if resp := serve(t, h, mcpwire.Request{Method: "tools/list"}, ""); resp.Status != 200 {
		t.Errorf("tools/list past the limit: %d %s", resp.Status, resp.Raw)
	}
	// A reload keeps the buckets of an unchanged limit, and starts new ones
	// for a changed limit.
	free := srv{name: "free", tools: []string{"t"}}.backend()
	if err := g.Reload(context.Background(), []gateway.Backend{limited, free}, ""); err != nil {
		t.Fatal(err)
	}
	if resp := serve(t, h, callReq("slow_t"), ""); resp.Status != 429 {
		t.Errorf("after a reload with the same limit: %d %s, want 429", resp.Status, resp.Raw)
	}
	limited.RateLimit = &gateway.RateLimit{Count: 2, Per: 3600e9}
	if err := g.Reload(context.Background(), []gateway.Backend{limited, free}, ""); err != nil {
		t.Fatal(err)
	}
	if resp := serve(t, h, callReq("slow_t"), ""); resp.Status != 200 {
		t.Errorf("after a reload with a new limit: %d %s, want 200", resp.Status, resp.Raw)
	}
}

// TestBackendAttribute checks that interceptors see the backend a call was
// routed to (mcp.backend), also when the gateway answered for it, and no
// backend on a merged list or an unknown tool.
func TestBackendAttribute(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	record := func(ctx context.Context, c *mcp.Call, next mcp.CallHandler) mcp.Outcome {
		o := next(ctx, c)
		mu.Lock()
		defer mu.Unlock()
		seen[c.Method+" "+c.Name] = c.Attribute(gateway.BackendAttribute)
		return o
	}
	limited := srv{name: "slow", tools: []string{"t"}}.backend()
	limited.RateLimit = &gateway.RateLimit{Count: 1, Per: time.Hour}
	g, _ := start(t, []gateway.Backend{srv{name: "files", tools: []string{"read"}}.backend(), limited},
		&gateway.Options{Server: mcp.ServerOptions{Interceptors: []mcp.Interceptor{record}}})
	h := g.Server()
	serve(t, h, callReq("files_read"), "")
	serve(t, h, callReq("slow_t"), "")
	if resp := serve(t, h, callReq("slow_t"), ""); resp.Status != 429 || !strings.HasPrefix(resp.Header.Get("Retry-After"), "35") && resp.Header.Get("Retry-After") != "3600" {
		t.Fatalf("second call: %d Retry-After %q, want 429 and 3600 (with interceptors too)", resp.Status, resp.Header.Get("Retry-After"))
	}
	serve(t, h, callReq("nobody_t"), "")
	serve(t, h, mcpwire.Request{Method: "tools/list"}, "")
	mu.Lock()
	defer mu.Unlock()
	want := map[string]string{"server/discover ": "", "tools/call files_read": "files", "tools/call slow_t": "slow", "tools/call nobody_t": "", "tools/list ": ""}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("mcp.backend by call (-want +got):\n%s", diff)
	}
}

// TestScopesBeforeDown checks that a caller without a server's scopes gets
// 403 from a server that has not started, not the 503 that says it is
// down, and one with them the 503.
func TestScopesBeforeDown(t *testing.T) {
	as := oauthtest.NewServer(t, nil)
	down := late(srv{name: "files", tools: []string{"read"}}, &atomic.Bool{})
	down.Scopes = []string{"files:read"}
	g := protected(t, as, nil, []gateway.Backend{down, srv{name: "open", tools: []string{"t"}}.backend()})
	for _, tc := range []struct {
		scopes []string
		status int
	}{{nil, 403}, {[]string{"files:read"}, 503}} {
		resp := serve(t, g.Server(), callReq("files_read"), as.Token(&oauthtest.TokenOptions{Scopes: tc.scopes, Audience: resource}))
		if resp.Status != tc.status {
			t.Errorf("scopes %v: %d %s, want %d", tc.scopes, resp.Status, resp.Raw, tc.status)
		}
	}
}
