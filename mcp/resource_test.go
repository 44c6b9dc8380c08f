package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func textResource(text string) ResourceHandler {
	return func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{Text: text}}}, nil
	}
}

// resourceServer has static resources, templates and handlers that show
// every outcome of resources/read.
func resourceServer() *Server {
	s := NewServer(&ServerOptions{Cache: CacheOptions{TTL: 5 * time.Minute}})
	s.AddResource(&Resource{URI: "test://text", Name: "text", MIMEType: "text/plain"}, textResource("hello"))
	s.AddResource(&Resource{URI: "test://blob", Name: "blob", MIMEType: "image/png"},
		func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []*ResourceContents{{Blob: []byte{0x89, 'P', 'N', 'G'}}}}, nil
		})
	s.AddResource(&Resource{URI: "test://private", Name: "private", CacheTTL: time.Second, CacheScope: CachePrivate}, textResource("secret"))
	s.AddResource(&Resource{URI: "test://stale", Name: "stale", CacheTTL: Off}, textResource("stale"))
	s.AddResource(&Resource{URI: "test://per-result", Name: "per-result", CacheScope: CachePrivate},
		func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []*ResourceContents{{Text: "x"}}, CacheTTL: 2 * time.Second, CacheScope: CachePublic, Meta: Meta{"k": "v"}}, nil
		})
	s.AddResource(&Resource{URI: "test://multi", Name: "multi"},
		func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []*ResourceContents{
				{URI: "test://multi/a", MIMEType: "text/markdown", Text: "# a"},
				{URI: "test://multi/b", Text: "b"},
			}}, nil
		})
	s.AddResource(&Resource{URI: "test://gone", Name: "gone"},
		func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) { return nil, nil })
	s.AddResource(&Resource{URI: "test://empty", Name: "empty"},
		func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{}, nil
		})
	s.AddResource(&Resource{URI: "test://broken", Name: "broken"},
		func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
			return nil, errors.New("disk on fire")
		})
	s.AddResource(&Resource{URI: "test://denied", Name: "denied"},
		func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
			return nil, &Error{Code: -32001, Message: "Access denied"}
		})
	s.AddResourceTemplate(&ResourceTemplate{URITemplate: "test://items/{id}", Name: "item", MIMEType: "application/json"},
		func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
			if req.Params["id"] == "missing" {
				return nil, ResourceNotFound(req.URI)
			}
			b, _ := json.Marshal(map[string]any{"template": req.Template, "params": req.Params})
			return &ReadResourceResult{Contents: []*ResourceContents{{Text: string(b)}}}, nil
		})
	s.AddResourceTemplate(&ResourceTemplate{URITemplate: "test://files{/path*}", Name: "files", CacheScope: CachePrivate},
		func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []*ResourceContents{{Text: req.Params["path"]}}}, nil
		})
	// A static resource wins over a template that matches its URI.
	s.AddResource(&Resource{URI: "test://items/fixed", Name: "fixed"}, textResource("static"))
	return s
}

func TestResourcesRead(t *testing.T) {
	s := resourceServer()
	tests := []struct {
		uri  string
		want map[string]any // the result without _meta
		err  *rpcError
	}{
		{uri: "test://text", want: map[string]any{
			"resultType": "complete", "ttlMs": 300000.0, "cacheScope": "public",
			"contents": []any{map[string]any{"uri": "test://text", "mimeType": "text/plain", "text": "hello"}},
		}},
		{uri: "test://blob", want: map[string]any{
			"resultType": "complete", "ttlMs": 300000.0, "cacheScope": "public",
			"contents": []any{map[string]any{"uri": "test://blob", "mimeType": "image/png", "blob": "iVBORw=="}},
		}},
		{uri: "test://private", want: map[string]any{
			"resultType": "complete", "ttlMs": 1000.0, "cacheScope": "private",
			"contents": []any{map[string]any{"uri": "test://private", "text": "secret"}},
		}},
		{uri: "test://stale", want: map[string]any{
			"resultType": "complete", "ttlMs": 0.0, "cacheScope": "public",
			"contents": []any{map[string]any{"uri": "test://stale", "text": "stale"}},
		}},
		{uri: "test://per-result", want: map[string]any{
			"resultType": "complete", "ttlMs": 2000.0, "cacheScope": "public",
			"contents": []any{map[string]any{"uri": "test://per-result", "text": "x"}},
		}},
		{uri: "test://multi", want: map[string]any{
			"resultType": "complete", "ttlMs": 300000.0, "cacheScope": "public",
			"contents": []any{
				map[string]any{"uri": "test://multi/a", "mimeType": "text/markdown", "text": "# a"},
				map[string]any{"uri": "test://multi/b", "text": "b"},
			},
		}},
		{uri: "test://items/42", want: map[string]any{
			"resultType": "complete", "ttlMs": 300000.0, "cacheScope": "public",
			"contents": []any{map[string]any{"uri": "test://items/42", "mimeType": "application/json",
				"text": `{"params":{"id":"42"},"template":"test://items/{id}"}`}},
		}},
		{uri: "test://items/a%20b", want: map[string]any{
			"resultType": "complete", "ttlMs": 300000.0, "cacheScope": "public",
			"contents": []any{map[string]any{"uri": "test://items/a%20b", "mimeType": "application/json",
				"text": `{"params":{"id":"a b"},"template":"test://items/{id}"}`}},
		}},
		{uri: "test://items/fixed", want: map[string]any{
			"resultType": "complete", "ttlMs": 300000.0, "cacheScope": "public",
			"contents": []any{map[string]any{"uri": "test://items/fixed", "text": "static"}},
		}},
		{uri: "test://files/a/b", want: map[string]any{
			"resultType": "complete", "ttlMs": 300000.0, "cacheScope": "private",
			"contents": []any{map[string]any{"uri": "test://files/a/b", "text": "a,b"}},
		}},
		{uri: "test://nope", err: &rpcError{Code: -32602, Message: "Resource not found: test://nope", Data: json.RawMessage(`{"uri":"test://nope"}`)}},
		{uri: "test://items/missing", err: &rpcError{Code: -32602, Message: "Resource not found: test://items/missing", Data: json.RawMessage(`{"uri":"test://items/missing"}`)}},
		{uri: "test://items/1/2", err: &rpcError{Code: -32602, Message: "Resource not found: test://items/1/2", Data: json.RawMessage(`{"uri":"test://items/1/2"}`)}},
		{uri: "test://gone", err: &rpcError{Code: -32602, Message: "Resource not found: test://gone", Data: json.RawMessage(`{"uri":"test://gone"}`)}},
		{uri: "test://empty", err: &rpcError{Code: -32602, Message: "Resource not found: test://empty", Data: json.RawMessage(`{"uri":"test://empty"}`)}},
		{uri: "test://broken", err: &rpcError{Code: -32603, Message: "Internal error"}},
		{uri: "test://denied", err: &rpcError{Code: -32001, Message: "Access denied"}},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			r := call(t, s, "resources/read", `{"uri":`+string(mustJSON(tt.uri))+`}`)
			if tt.err != nil {
				if diff := cmp.Diff(tt.err, r.Error); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if r.Error != nil {
				t.Fatalf("error %+v", r.Error)
			}
			meta, _ := r.Result["_meta"].(map[string]any)
			if _, ok := meta["io.modelcontextprotocol/serverInfo"]; !ok {
				t.Errorf("_meta %v lacks serverInfo", meta)
			}
			delete(r.Result, "_meta")
			if diff := cmp.Diff(tt.want, r.Result); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResourcesReadUserMeta(t *testing.T) {
	r := call(t, resourceServer(), "resources/read", `{"uri":"test://per-result"}`)
	if got := r.Result["_meta"].(map[string]any)["k"]; got != "v" {
		t.Errorf("_meta.k = %v, want v", got)
	}
}

func TestResourcesReadBadParams(t *testing.T) {
	s := resourceServer()
	for _, params := range []string{`{}`, `{"uri":42}`, `{"uri":null}`} {
		if e := mustError(t, s, "resources/read", params); e.Code != -32602 {
			t.Errorf("%s: code %d, want -32602", params, e.Code)
		}
	}
}

func TestResourcesList(t *testing.T) {
	s := NewServer(&ServerOptions{PageSize: 2})
	for _, u := range []string{"z://last", "a://first", "m://middle"} {
		s.AddResource(&Resource{URI: u, Name: u}, textResource(u))
	}
	for _, u := range []string{"t://{b}", "t://{a}"} {
		s.AddResourceTemplate(&ResourceTemplate{URITemplate: u, Name: u}, textResource(u))
	}
	page1 := mustResult(t, s, "resources/list", `{}`)
	if diff := cmp.Diff([]string{"a://first", "m://middle"}, names(page1, "resources", "uri")); diff != "" {
		t.Errorf("page 1 (-want +got):\n%s", diff)
	}
	next, _ := page1["nextCursor"].(string)
	page2 := mustResult(t, s, "resources/list", cursorParams(next))
	if diff := cmp.Diff([]string{"z://last"}, names(page2, "resources", "uri")); diff != "" {
		t.Errorf("page 2 (-want +got):\n%s", diff)
	}
	if _, ok := page2["nextCursor"]; ok {
		t.Errorf("last page has a nextCursor")
	}
	for _, p := range []map[string]any{page1, page2} {
		if p["ttlMs"] != 3600000.0 || p["cacheScope"] != "public" {
			t.Errorf("cache hints %v %v, want 3600000 public", p["ttlMs"], p["cacheScope"])
		}
	}
	tl := mustResult(t, s, "resources/templates/list", `{}`)
	if diff := cmp.Diff([]string{"t://{a}", "t://{b}"}, names(tl, "resourceTemplates", "uriTemplate")); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	if tl["ttlMs"] != 3600000.0 || tl["cacheScope"] != "public" {
		t.Errorf("template list cache hints %v %v", tl["ttlMs"], tl["cacheScope"])
	}
	if e := mustError(t, s, "resources/list", `{"cursor":"bogus"}`); e.Code != -32602 {
		t.Errorf("invalid cursor: code %d, want -32602", e.Code)
	}
}

func TestResourceFieldsListed(t *testing.T) {
	s := NewServer(nil)
	size := int64(12)
	prio := 0.5
	s.AddResource(&Resource{
		URI: "file:///a.txt", Name: "a.txt", Title: "A", Description: "d", MIMEType: "text/plain", Size: &size,
		Annotations: &Annotations{Audience: []Role{RoleUser}, Priority: &prio, LastModified: "2025-01-12T15:00:58Z"},
		Icons:       []Icon{{Src: "https://example.com/i.png"}}, Meta: Meta{"x": 1}, CacheTTL: time.Minute,
	}, textResource("a"))
	res := mustResult(t, s, "resources/list", `{}`)
	want := []any{map[string]any{
		"uri": "file:///a.txt", "name": "a.txt", "title": "A", "description": "d", "mimeType": "text/plain", "size": 12.0,
		"annotations": map[string]any{"audience": []any{"user"}, "priority": 0.5, "lastModified": "2025-01-12T15:00:58Z"},
		"icons":       []any{map[string]any{"src": "https://example.com/i.png"}}, "_meta": map[string]any{"x": 1.0},
	}}
	if diff := cmp.Diff(want, res["resources"]); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
}

func TestResourcesNotRegistered(t *testing.T) {
	s := NewServer(nil)
	for _, m := range []string{"resources/list", "resources/templates/list", "resources/read"} {
		if e := mustError(t, s, m, `{"uri":"x://y"}`); e.Code != -32601 {
			t.Errorf("%s: code %d, want -32601", m, e.Code)
		}
	}
	caps := mustResult(t, s, "server/discover", `{}`)["capabilities"].(map[string]any)
	if _, ok := caps["resources"]; ok {
		t.Errorf("capabilities %v declare resources without any", caps)
	}
	s.AddResourceTemplate(&ResourceTemplate{URITemplate: "x://{y}", Name: "y"}, textResource("y"))
	caps = mustResult(t, s, "server/discover", `{}`)["capabilities"].(map[string]any)
	if _, ok := caps["resources"]; !ok {
		t.Errorf("capabilities %v lack resources", caps)
	}
	if got := mustResult(t, s, "resources/list", `{}`)["resources"]; !cmp.Equal(got, []any{}) {
		t.Errorf("resources = %v, want []", got)
	}
}

func TestRemoveResources(t *testing.T) {
	s := resourceServer()
	s.RemoveResources("test://text", "test://items/{id}", "test://unknown")
	if e := mustError(t, s, "resources/read", `{"uri":"test://text"}`); e.Code != -32602 {
		t.Errorf("removed resource: code %d", e.Code)
	}
	if e := mustError(t, s, "resources/read", `{"uri":"test://items/1"}`); e.Code != -32602 {
		t.Errorf("removed template: code %d", e.Code)
	}
	if uris := names(mustResult(t, s, "resources/list", `{}`), "resources", "uri"); strings.Contains(strings.Join(uris, " "), "test://text") {
		t.Errorf("list still has test://text: %v", uris)
	}
}

func TestAddResourcePanics(t *testing.T) {
	h := textResource("x")
	tests := []struct {
		name string
		add  func(s *Server)
		want string
	}{
		{"relative", func(s *Server) { s.AddResource(&Resource{URI: "no-scheme", Name: "n"}, h) }, `AddResource "no-scheme": the URI must be absolute, with a scheme`},
		{"no name", func(s *Server) { s.AddResource(&Resource{URI: "a://b"}, h) }, `AddResource "a://b": missing name`},
		{"no handler", func(s *Server) { s.AddResource(&Resource{URI: "a://b", Name: "b"}, nil) }, `AddResource "a://b": missing handler`},
		{"bad scope", func(s *Server) { s.AddResource(&Resource{URI: "a://b", Name: "b", CacheScope: "shared"}, h) }, `AddResource "a://b": CacheScope must be CachePublic or CachePrivate, not "shared"`},
		{"bad template", func(s *Server) { s.AddResourceTemplate(&ResourceTemplate{URITemplate: "a://{b", Name: "b"}, h) }, `AddResourceTemplate "a://{b": `},
		{"template no name", func(s *Server) { s.AddResourceTemplate(&ResourceTemplate{URITemplate: "a://{b}"}, h) }, `AddResourceTemplate "a://{b}": missing name`},
		{"template no handler", func(s *Server) { s.AddResourceTemplate(&ResourceTemplate{URITemplate: "a://{b}", Name: "b"}, nil) }, `AddResourceTemplate "a://{b}": missing handler`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := panicMessage(func() { tt.add(NewServer(nil)) })
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("panic %q, want prefix %q", got, tt.want)
			}
		})
	}
}

// panicMessage runs f and returns what it panicked with, or "".
func panicMessage(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
