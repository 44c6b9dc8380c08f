package mcp

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

// everythingServer registers one or more items of every family.
func everythingServer(opts *ServerOptions) *Server {
	s := NewServer(opts)
	for _, name := range []string{"alpha", "beta", "gamma", "admin_reset"} {
		s.AddRawTool(&Tool{Name: name, Description: "Tool " + name, InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) {
				return &CallToolResult{Content: []Content{&TextContent{Text: req.Name}}}, nil
			})
	}
	noop := func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error) { return nil, nil }
	s.AddPrompt(&Prompt{Name: "hello", Description: "d", Complete: CompleteFrom(nil)}, noop)
	s.AddPrompt(&Prompt{Name: "admin_prompt", Description: "d", Arguments: []PromptArgument{{Name: "a"}}, Complete: CompleteFrom(map[string][]string{"a": {"x"}})}, noop)
	s.AddResource(&Resource{URI: "test://public", Name: "public"}, textResource("p"))
	s.AddResource(&Resource{URI: "test://admin", Name: "admin"}, textResource("a"))
	s.AddResourceTemplate(&ResourceTemplate{URITemplate: "admin://{x}", Name: "admin-template"}, textResource("t"))
	s.AddResourceTemplate(&ResourceTemplate{URITemplate: "public://{x}", Name: "public-template"}, textResource("t"))
	return s
}

func TestCacheHintsOnEveryCacheableResult(t *testing.T) {
	tests := []struct {
		name      string
		opts      *ServerOptions
		wantTTL   float64
		wantScope string
	}{
		{"defaults", nil, 3600000, "public"},
		{"configured", &ServerOptions{Cache: CacheOptions{TTL: 90 * time.Second, Scope: CachePrivate}}, 90000, "private"},
		{"ttl off", &ServerOptions{Cache: CacheOptions{TTL: Off}}, 0, "public"},
	}
	calls := []struct{ method, params string }{
		{"server/discover", `{}`},
		{"tools/list", `{}`},
		{"prompts/list", `{}`},
		{"resources/list", `{}`},
		{"resources/templates/list", `{}`},
		{"resources/read", `{"uri":"test://public"}`},
		{"resources/read", `{"uri":"public://x"}`},
	}
	for _, tt := range tests {
		s := everythingServer(tt.opts)
		for _, c := range calls {
			res := mustResult(t, s, c.method, c.params)
			if res["ttlMs"] != tt.wantTTL || res["cacheScope"] != tt.wantScope {
				t.Errorf("%s: %s: ttlMs %v cacheScope %v, want %v %v", tt.name, c.method, res["ttlMs"], res["cacheScope"], tt.wantTTL, tt.wantScope)
			}
		}
		// Results that are not cacheable carry no hints.
		for _, c := range []struct{ method, params string }{
			{"tools/call", `{"name":"alpha"}`},
			{"prompts/get", `{"name":"hello"}`},
			{"completion/complete", `{"ref":{"type":"ref/prompt","name":"hello"},"argument":{"name":"a","value":""}}`},
		} {
			r := call(t, s, c.method, c.params)
			if _, ok := r.Result["ttlMs"]; ok {
				t.Errorf("%s: %s result has ttlMs (error %v)", tt.name, c.method, r.Error)
			}
		}
	}
}

// roleFilters hide every item whose name or URI mentions "admin" unless the
// request's X-Role header (a stand-in for an authenticated identity) is
// admin.
func roleFilters() ListFilters {
	admin := func(info *RequestInfo) bool { return info.Header.Get("X-Role") == "admin" }
	return ListFilters{
		Tools: func(ctx context.Context, info *RequestInfo, t *Tool) bool {
			return admin(info) || !strings.Contains(t.Name, "admin")
		},
		Prompts: func(ctx context.Context, info *RequestInfo, p *Prompt) bool {
			return admin(info) || !strings.Contains(p.Name, "admin")
		},
		Resources: func(ctx context.Context, info *RequestInfo, r *Resource) bool {
			return admin(info) || !strings.Contains(r.URI, "admin")
		},
		ResourceTemplates: func(ctx context.Context, info *RequestInfo, t *ResourceTemplate) bool {
			return admin(info) || !strings.Contains(t.URITemplate, "admin")
		},
	}
}

// callAs sends a request with an X-Role header, through Handle as
// Streamable HTTP does (so header validation runs too).
func callAs(t *testing.T, s *Server, role, method, params string) rpcReply {
	t.Helper()
	r := mcpwire.Request{ID: "7", Method: method, Params: params, Header: http.Header{"X-Role": {role}}}
	h := r.Headers()
	msg := decodeMsg(t, r.Bytes())
	out, status := s.Handle(context.Background(), nil, &Incoming{Message: &msg, Header: h}, nil)
	var resp struct {
		Result map[string]any `json:"result"`
		Error  *rpcError      `json:"error"`
	}
	mustUnmarshal(t, out, &resp)
	return rpcReply{Status: status, Result: resp.Result, Error: resp.Error}
}

func TestListFilters(t *testing.T) {
	s := everythingServer(&ServerOptions{ListFilters: roleFilters(), PageSize: 1})
	lists := []struct{ method, field, member string }{
		{"tools/list", "tools", "name"},
		{"prompts/list", "prompts", "name"},
		{"resources/list", "resources", "uri"},
		{"resources/templates/list", "resourceTemplates", "uriTemplate"},
	}
	want := map[string]map[string][]string{
		"user": {
			"tools/list":               {"alpha", "beta", "gamma"},
			"prompts/list":             {"hello"},
			"resources/list":           {"test://public"},
			"resources/templates/list": {"public://{x}"},
		},
		"admin": {
			"tools/list":               {"admin_reset", "alpha", "beta", "gamma"},
			"prompts/list":             {"admin_prompt", "hello"},
			"resources/list":           {"test://admin", "test://public"},
			"resources/templates/list": {"admin://{x}", "public://{x}"},
		},
	}
	for role, lists2 := range want {
		for _, l := range lists {
			// Walk every page (one item each) and collect the names.
			var got []string
			cursor := ""
			for range 10 {
				r := callAs(t, s, role, l.method, cursorParams(cursor))
				if r.Error != nil {
					t.Fatalf("%s %s: %+v", role, l.method, r.Error)
				}
				if r.Result["cacheScope"] != "private" || r.Result["ttlMs"] != 3600000.0 {
					t.Errorf("%s %s: cacheScope %v ttlMs %v, want private 3600000", role, l.method, r.Result["cacheScope"], r.Result["ttlMs"])
				}
				got = append(got, names(r.Result, l.field, l.member)...)
				next, _ := r.Result["nextCursor"].(string)
				if next == "" {
					break
				}
				cursor = next
			}
			if diff := cmp.Diff(lists2[l.method], got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", role, l.method, diff)
			}
		}
	}

	// Hidden items cannot be used either; visible ones can.
	hidden := []struct{ method, params string }{
		{"tools/call", `{"name":"admin_reset"}`},
		{"prompts/get", `{"name":"admin_prompt"}`},
		{"resources/read", `{"uri":"test://admin"}`},
		{"resources/read", `{"uri":"admin://x"}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"admin_prompt"},"argument":{"name":"a","value":""}}`},
		{"completion/complete", `{"ref":{"type":"ref/resource","uri":"admin://{x}"},"argument":{"name":"x","value":""}}`},
	}
	for _, h := range hidden {
		if r := callAs(t, s, "user", h.method, h.params); r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("user %s %s: got %+v %v, want -32602", h.method, h.params, r.Error, r.Result)
		}
		if r := callAs(t, s, "admin", h.method, h.params); r.Error != nil {
			t.Errorf("admin %s %s: %+v", h.method, h.params, r.Error)
		}
	}
}

func TestListFilterOnlyPrivatizesItsFamily(t *testing.T) {
	f := roleFilters()
	s := everythingServer(&ServerOptions{ListFilters: ListFilters{Tools: f.Tools}})
	if got := callAs(t, s, "user", "tools/list", `{}`).Result["cacheScope"]; got != "private" {
		t.Errorf("filtered tools/list cacheScope %v, want private", got)
	}
	for _, m := range []string{"prompts/list", "resources/list", "resources/templates/list"} {
		if got := callAs(t, s, "user", m, `{}`).Result["cacheScope"]; got != "public" {
			t.Errorf("unfiltered %s cacheScope %v, want public", m, got)
		}
	}
	if e := callAs(t, s, "user", "tools/list", `{"cursor":"nope"}`).Error; e == nil || e.Code != -32602 {
		t.Errorf("invalid cursor on a filtered list: %+v, want -32602", e)
	}
}

// TestToolsListPagesAll walks 10,000 tools page by page: every tool once,
// in name order, the same on every walk.
func TestToolsListPagesAll(t *testing.T) {
	s := NewServer(nil)
	for i := range 10000 {
		addNumberedTool(s, i)
	}
	walk := func() []string {
		var all []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 100 {
				t.Fatal("more than 100 pages")
			}
			res := mustResult(t, s, "tools/list", cursorParams(cursor))
			got := names(res, "tools", "name")
			if len(got) != 100 {
				t.Fatalf("page %d has %d tools, want 100", pages, len(got))
			}
			all = append(all, got...)
			next, _ := res["nextCursor"].(string)
			if next == "" {
				return all
			}
			cursor = next
		}
	}
	first := walk()
	if len(first) != 10000 {
		t.Fatalf("%d tools, want 10000", len(first))
	}
	for i, name := range first {
		if want := fmt.Sprintf("tool_%d", 100000+i); name != want {
			t.Fatalf("tool %d is %s, want %s", i, name, want)
		}
	}
	if diff := cmp.Diff(first, walk()); diff != "" {
		t.Errorf("second walk differs (-first +second):\n%s", diff)
	}
}
