package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

// srv is a backend server for the tests: tools that answer their own
// name and the server's, optional prompts, resources and templates.
type srv struct {
	name         string
	instructions string
	tools        []string
	prompt       string // with a completion of its "topic" argument
	resources    []string
	templates    []string
	pageSize     int
	reads        *atomic.Int32
	interceptors []mcp.Interceptor
}

func (s srv) build() *mcp.Server {
	m := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: s.name, Version: "1.0.0"}, Instructions: s.instructions, Logger: quiet, PageSize: s.pageSize, Interceptors: s.interceptors})
	for _, name := range s.tools {
		mcp.AddTool(m, &mcp.Tool{Name: name, Description: "Answers who it is."},
			func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
				return s.name + ":" + name, nil
			})
	}
	if s.prompt != "" {
		m.AddPrompt(&mcp.Prompt{Name: s.prompt, Description: "A prompt.", Arguments: []mcp.PromptArgument{{Name: "topic"}},
			Complete: mcp.CompleteFrom(map[string][]string{"topic": {s.name + "-topic"}})},
			func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: s.name + " prompt"}}}}, nil
			})
	}
	read := func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		if s.reads != nil {
			s.reads.Add(1)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: s.name + " read " + req.URI}}}, nil
	}
	for _, uri := range s.resources {
		m.AddResource(&mcp.Resource{URI: uri, Name: uri}, read)
	}
	for _, t := range s.templates {
		m.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: t, Name: t}, read)
	}
	return m
}

func (s srv) backend() gateway.Backend {
	m := s.build()
	return gateway.Backend{Name: s.name, Transport: func() client.Transport { return &client.MemoryTransport{Server: m} }}
}

// start starts a gateway over backends and a client of it.
func start(t *testing.T, backends []gateway.Backend, opts *gateway.Options) (*gateway.Gateway, *client.Client) {
	t.Helper()
	if opts == nil {
		opts = &gateway.Options{}
	}
	opts.Logger = quiet
	opts.Server.Logger = quiet
	opts.Server.State.Keys = testKeys
	g, err := gateway.New(context.Background(), backends, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g, connect(t, g)
}

func connect(t *testing.T, g *gateway.Gateway) *client.Client {
	t.Helper()
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: g.Server()}, &client.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	var out []string
	for tool, err := range c.ListTools(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tool.Name)
	}
	return out
}

func callText(t *testing.T, c *client.Client, name string) string {
	t.Helper()
	res, err := c.CallTool(context.Background(), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func TestDiscoverUnion(t *testing.T) {
	_, c := start(t, []gateway.Backend{
		srv{name: "a", instructions: "Use a for apples.", tools: []string{"t"}}.backend(),
		srv{name: "b", instructions: "Use b for bananas.", resources: []string{"b://x"}, prompt: "p"}.backend(),
	}, &gateway.Options{Server: mcp.ServerOptions{Instructions: "Fruit, from two servers."}})
	caps := c.Capabilities()
	if caps.Tools == nil || caps.Resources == nil || caps.Prompts == nil || caps.Completions == nil {
		t.Errorf("capabilities = %+v, want the union: tools, resources, prompts, completions", caps)
	}
	want := "Fruit, from two servers.\n\n## a\n\nUse a for apples.\n\n## b\n\nUse b for bananas."
	if got := c.Instructions(); got != want {
		t.Errorf("instructions = %q, want %q", got, want)
	}
	if got := c.ServerInfo().Name; got != "mcpkit-gateway" {
		t.Errorf("serverInfo.name = %q, want the gateway's own", got)
	}
}

func TestToolsPrefixedAndRouted(t *testing.T) {
	long := strings.Repeat("x", gateway.MaxNameLen-1)
	_, c := start(t, []gateway.Backend{
		srv{name: "a", tools: []string{"one", "two", long}}.backend(),
		srv{name: "b-2", tools: []string{"one", "with_under"}}.backend(),
	}, nil)
	got := toolNames(t, c)
	want := []string{"a_one", "a_two", "b-2_one", "b-2_with_under"} // a_xxx... is over 64: left out
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	ctx := context.Background()
	for name, wantText := range map[string]string{"a_one": "a:one", "b-2_one": "b-2:one", "b-2_with_under": "b-2:with_under"} {
		if got := callText(t, c, name); got != wantText {
			t.Errorf("call %s = %q, want %q", name, got, wantText)
		}
	}
	for _, name := range []string{"c_one", "one", "a_" + long, "_one"} {
		_, err := c.CallTool(ctx, name, nil)
		var e *mcp.Error
		if !errors.As(err, &e) || e.Code != -32602 || !strings.Contains(e.Message, "Unknown tool") {
			t.Errorf("call %q: err = %v, want -32602 Unknown tool", name, err)
		}
	}
}

// TestNoPrefix checks the backend without a prefix: its names pass as they
// are, except one whose part before "_" names another backend.
func TestNoPrefix(t *testing.T) {
	bare := srv{name: "main", tools: []string{"search", "docs_fetch", "other_thing"}}.backend()
	bare.NoPrefix = true
	_, c := start(t, []gateway.Backend{bare, srv{name: "docs", tools: []string{"fetch"}}.backend()}, nil)
	want := []string{"other_thing", "search", "docs_fetch"} // main's docs_fetch would route to docs
	if d := cmp.Diff(want, toolNames(t, c)); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if got := callText(t, c, "other_thing"); got != "main:other_thing" {
		t.Errorf("other_thing = %q", got)
	}
	if got := callText(t, c, "docs_fetch"); got != "docs:fetch" {
		t.Errorf("docs_fetch = %q, want docs's", got)
	}
}

// TestPagingAcrossBackendsAndReplicas pages a merged list whose backends
// page too, continuing every page on a second gateway (another replica
// with the same state keys); a tampered cursor is -32602.
func TestPagingAcrossBackendsAndReplicas(t *testing.T) {
	mk := func() []gateway.Backend {
		return []gateway.Backend{
			srv{name: "a", tools: []string{"t1", "t2", "t3"}, pageSize: 2}.backend(),
			srv{name: "empty"}.backend(), // no tools capability: skipped
			srv{name: "b", tools: []string{"u1", "u2"}, pageSize: 2}.backend(),
		}
	}
	g1, _ := start(t, mk(), nil)
	g2, _ := start(t, mk(), nil)
	replicas := []*client.Client{connect(t, g1), connect(t, g2)}
	ctx := context.Background()
	var got []string
	cursor := ""
	for i := 0; ; i++ {
		if i > 10 {
			t.Fatal("the list does not end")
		}
		p := map[string]any{}
		if cursor != "" {
			p["cursor"] = cursor
		}
		var page struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		raw, err := replicas[i%2].Call(ctx, "tools/list", p)
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatal(err)
		}
		for _, tool := range page.Tools {
			got = append(got, tool.Name)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	want := []string{"a_t1", "a_t2", "a_t3", "b_u1", "b_u2"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("merged pages (-want +got):\n%s", d)
	}
	for _, bad := range []string{"nope", cursor + "x"} {
		_, err := replicas[0].Call(ctx, "tools/list", map[string]any{"cursor": bad})
		var e *mcp.Error
		if !errors.As(err, &e) || e.Code != -32602 {
			t.Errorf("cursor %q: err = %v, want -32602", bad, err)
		}
	}
}

func TestResourceRouting(t *testing.T) {
	var reads [3]atomic.Int32
	_, c := start(t, []gateway.Backend{
		srv{name: "a", resources: []string{"file:///shared", "file:///a"}, templates: []string{"user://{id}"}, reads: &reads[0]}.backend(),
		srv{name: "b", resources: []string{"file:///shared"}, templates: []string{"user://{id}", "repo://{name}"}, reads: &reads[1]}.backend(),
		srv{name: "c", tools: []string{"t"}, reads: &reads[2]}.backend(),
	}, nil)
	ctx := context.Background()
	read := func(uri string) (string, error) {
		r, err := c.ReadResource(ctx, uri)
		if err != nil {
			return "", err
		}
		return r.Contents[0].Text, nil
	}
	// Before any list: the gateway builds its index itself.
	for uri, want := range map[string]string{
		"file:///a":      "a read file:///a",
		"file:///shared": "a read file:///shared", // the first in config order
		"repo://mcpkit":  "b read repo://mcpkit",  // the only matching template
	} {
		if got, err := read(uri); err != nil || got != want {
			t.Errorf("read %s = %q, %v; want %q", uri, got, err, want)
		}
	}
	before := reads[0].Load() + reads[1].Load() + reads[2].Load()
	_, err := read("file:///nowhere")
	var e *mcp.Error
	if !errors.As(err, &e) || e.Code != -32602 || !strings.Contains(e.Message, "file:///nowhere") {
		t.Errorf("unknown URI: err = %v, want ResourceNotFound", err)
	}
	if after := reads[0].Load() + reads[1].Load() + reads[2].Load(); after != before {
		t.Errorf("an unknown URI reached a backend's read (%d reads, want %d)", after, before)
	}
	_, err = read("user://7")
	if !errors.As(err, &e) || e.Code != -32602 || !strings.Contains(e.Message, "a, b") {
		t.Errorf("URI of two templates: err = %v, want -32602 naming a and b", err)
	}
	var uris []string
	for r, err := range c.ListResources(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	if want := []string{"file:///a", "file:///shared", "file:///shared"}; !cmp.Equal(uris, want) {
		t.Errorf("resources = %q, want %q (URIs as the backends list them)", uris, want)
	}
}

func TestResourcePrefer(t *testing.T) {
	_, c := start(t, []gateway.Backend{
		srv{name: "a", templates: []string{"user://{id}"}}.backend(),
		srv{name: "b", templates: []string{"user://{id}"}}.backend(),
	}, &gateway.Options{Prefer: "b"})
	r, err := c.ReadResource(context.Background(), "user://7")
	if err != nil || r.Contents[0].Text != "b read user://7" {
		t.Fatalf("read = %v, %v; want b's", r, err)
	}
}

func TestPromptsAndCompletion(t *testing.T) {
	_, c := start(t, []gateway.Backend{
		srv{name: "a", prompt: "greet"}.backend(),
		srv{name: "b", prompt: "greet", templates: []string{"b://{x}"}}.backend(),
	}, nil)
	ctx := context.Background()
	var names []string
	for p, err := range c.ListPrompts(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, p.Name)
	}
	if want := []string{"a_greet", "b_greet"}; !slices.Equal(names, want) {
		t.Errorf("prompts = %q, want %q", names, want)
	}
	r, err := c.GetPrompt(ctx, "b_greet", nil)
	if err != nil || r.Messages[0].Content.(*mcp.TextContent).Text != "b prompt" {
		t.Errorf("get b_greet = %v, %v", r, err)
	}
	cr, err := c.Complete(ctx, &client.CompleteParams{Ref: client.Ref{Type: "ref/prompt", Name: "b_greet"}, Argument: "topic", Value: ""})
	if err != nil || !slices.Equal(cr.Values, []string{"b-topic"}) {
		t.Errorf("complete b_greet = %v, %v; want b's suggestion", cr, err)
	}
}

// TestBackendErrorNamesIt checks that a backend that fails a call is named
// in the error, and that the others keep working.
func TestBackendErrorNamesIt(t *testing.T) {
	flaky := srv{name: "flaky", tools: []string{"t"}}.build()
	var sessions atomic.Int32
	_, c := start(t, []gateway.Backend{
		{Name: "flaky", Transport: func() client.Transport {
			if sessions.Add(1) == 1 { // the bridge's probe session
				return &client.MemoryTransport{Server: flaky}
			}
			return &client.CommandTransport{Command: "/nonexistent/mcp-backend"} // later sessions cannot start
		}},
		srv{name: "ok", tools: []string{"t"}}.backend(),
	}, nil)
	ctx := context.Background()
	_, err := c.CallTool(ctx, "flaky_t", nil)
	var e *mcp.Error
	if !errors.As(err, &e) || e.Code != -32603 || !strings.Contains(e.Message, "backend flaky") {
		t.Errorf("call flaky_t: err = %v, want -32603 naming backend flaky", err)
	}
	if got := callText(t, c, "ok_t"); got != "ok:t" {
		t.Errorf("ok_t = %q", got)
	}
}

func TestNewRefuses(t *testing.T) {
	tr := func() client.Transport {
		return &client.MemoryTransport{Server: mcp.NewServer(&mcp.ServerOptions{Logger: quiet})}
	}
	for _, tc := range []struct {
		name     string
		backends []gateway.Backend
		opts     gateway.Options
		want     string
	}{
		{"none", nil, gateway.Options{}, "no backends"},
		{"bad name", []gateway.Backend{{Name: "a_b", Transport: tr}}, gateway.Options{}, `backend name "a_b"`},
		{"twice", []gateway.Backend{{Name: "a", Transport: tr}, {Name: "a", Transport: tr}}, gateway.Options{}, `two backends are named "a"`},
		{"two bare", []gateway.Backend{{Name: "a", NoPrefix: true, Transport: tr}, {Name: "b", NoPrefix: true, Transport: tr}}, gateway.Options{}, "both have NoPrefix"},
		{"prefer", []gateway.Backend{{Name: "a", Transport: tr}}, gateway.Options{Prefer: "z"}, `Prefer names no backend: "z"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Logger = quiet
			g, err := gateway.New(context.Background(), tc.backends, &tc.opts)
			if err == nil {
				g.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestToolPolicy checks the allow and deny lists: a tool not let through
// is neither listed nor callable.
func TestToolPolicy(t *testing.T) {
	a := srv{name: "a", tools: []string{"read", "write", "delete"}}.backend()
	a.AllowTools = []string{"read", "write"}
	a.DenyTools = []string{"write"}
	b := srv{name: "b", tools: []string{"read", "write"}}.backend()
	b.DenyTools = []string{"write"}
	_, c := start(t, []gateway.Backend{a, b}, nil)
	if d := cmp.Diff([]string{"a_read", "b_read"}, toolNames(t, c)); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	for _, name := range []string{"a_write", "a_delete", "b_write"} {
		_, err := c.CallTool(context.Background(), name, nil)
		var e *mcp.Error
		if !errors.As(err, &e) || !strings.Contains(e.Message, "Unknown tool") {
			t.Errorf("call %s: err = %v, want Unknown tool", name, err)
		}
	}
	if got := callText(t, c, "a_read"); got != "a:read" {
		t.Errorf("a_read = %q", got)
	}
}

// TestCallTimeout checks a backend's per-call timeout: past it the caller
// gets -32603 naming the backend, and the backend's handler is cancelled.
func TestCallTimeout(t *testing.T) {
	slow := mcp.NewServer(&mcp.ServerOptions{Logger: quiet})
	cancelled := make(chan struct{})
	mcp.AddTool(slow, &mcp.Tool{Name: "wait", Description: "Waits for its cancellation."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			<-ctx.Done()
			close(cancelled)
			return "", ctx.Err()
		})
	_, c := start(t, []gateway.Backend{{Name: "slow", Timeout: 50 * time.Millisecond,
		Transport: func() client.Transport { return &client.MemoryTransport{Server: slow} }}}, nil)
	_, err := c.CallTool(context.Background(), "slow_wait", nil)
	var e *mcp.Error
	if !errors.As(err, &e) || e.Code != -32603 || !strings.Contains(e.Message, "backend slow") || !strings.Contains(e.Message, "timeout (50ms)") {
		t.Errorf("call past the timeout: err = %v, want -32603 naming backend slow and the timeout", err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Error("the backend's handler was never cancelled")
	}
}

// TestMergedPage checks that backends without more pages are joined into
// one page: a single tools/list answers both, without a nextCursor.
func TestMergedPage(t *testing.T) {
	_, c := start(t, []gateway.Backend{
		srv{name: "a", tools: []string{"x", "y"}}.backend(),
		srv{name: "b", tools: []string{"z"}}.backend(),
	}, nil)
	raw, err := c.Call(context.Background(), "tools/list", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		NextCursor *string `json:"nextCursor"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Tools) != 3 || page.NextCursor != nil {
		t.Errorf("one tools/list = %s, want the three tools and no nextCursor", raw)
	}
}
