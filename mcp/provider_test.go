package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// backendTools is a tool list as a backend might send it: no description,
// a name AddTool refuses, a schema it could not compile. A provider passes
// it through verbatim.
const backendTools = `{"tools":[{"name":"odd name!","inputSchema":{"type":"object","properties":{"x":{"$ref":"#/nowhere"}}}}]}`

// provider serves a fixed tool list and a tools/call that asks the client
// for a sampling message (raw, as a bridge relays it) before answering.
func testProvider(t *testing.T) mcp.Provider {
	return mcp.ProviderFunc(func(ctx context.Context, req *mcp.MethodRequest) (*mcp.ProvidedResult, error) {
		switch req.Method {
		case "tools/list":
			scope := mcp.CachePublic
			if req.Info.ClientCapabilities.Sampling != nil {
				scope = mcp.CachePrivate
			}
			return &mcp.ProvidedResult{Body: json.RawMessage(backendTools), Cache: &mcp.CacheHint{Scope: scope}}, nil
		case "tools/call":
			ans, err := req.RequestInput("r1", "sampling/createMessage", json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5,"x-unknown":1}`))
			if err != nil {
				return nil, err
			}
			var a struct {
				Content struct{ Text string } `json:"content"`
			}
			if err := json.Unmarshal(ans, &a); err != nil {
				return nil, err
			}
			return &mcp.ProvidedResult{Body: json.RawMessage(`{"content":[{"type":"text","text":"model said ` + a.Content.Text + `"}],"resultType":"complete","ttlMs":5,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"backend"},"k":"v"}}`)}, nil
		}
		return nil, &mcp.Error{Code: -32601, Message: "Method not found: " + req.Method}
	})
}

func newProvided(t *testing.T) *mcp.Server {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "front"}, Provider: testProvider(t)})
	s.Advertise(&mcp.Advertisement{
		Capabilities: mcp.ServerCapabilities{Tools: &mcp.ListCapability{ListChanged: true}},
		Instructions: "from the backend",
	})
	return s
}

func TestProviderBothEras(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []mcptest.Option
	}{
		{"modern", nil},
		{"legacy", []mcptest.Option{mcptest.Legacy()}},
		{"http", []mcptest.Option{mcptest.HTTP()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mcptest.NewClient(t, newProvided(t), append(tc.opts, mcptest.Sample("four"))...)
			tools, err := c.ListTools()
			if err != nil {
				t.Fatal(err)
			}
			if len(tools) != 1 || tools[0].Name != "odd name!" {
				t.Fatalf("tools = %+v, want the backend's one tool verbatim", tools)
			}
			got, err := c.Client().CallTool(context.Background(), "odd name!", nil)
			if err != nil {
				t.Fatal(err)
			}
			if text := got.Content[0].(*mcp.TextContent).Text; text != "model said four" {
				t.Errorf("call = %q, want the sampled answer relayed", text)
			}
			if got := len(c.SamplingRequests()); got != 1 {
				t.Errorf("%d sampling requests, want 1", got)
			}
			if d := c.Client().Instructions(); d != "from the backend" {
				t.Errorf("instructions = %q", d)
			}
			if caps := c.Client().Capabilities(); caps.Tools == nil || caps.Prompts != nil || caps.Resources != nil {
				t.Errorf("capabilities = %+v, want only the advertised tools", caps)
			}
		})
	}
}

// The provided result's own resultType, cache hints and serverInfo are the
// front's, never the provider's; other _meta members are kept. Lists carry
// the hints the provider chose.
func TestProviderResultEncoding(t *testing.T) {
	s := newProvided(t)
	c := mcptest.NewClient(t, s, mcptest.Sample("x"))
	list, err := c.Request("tools/list", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		CacheScope string `json:"cacheScope"`
		TTL        *int   `json:"ttlMs"`
	}
	json.Unmarshal(list, &l)
	if l.CacheScope != "private" || l.TTL == nil {
		t.Errorf("tools/list hints = %s, want cacheScope private with a ttl", list)
	}
	// The client answers the round itself; the relayed answer reaches the provider.
	raw, err := c.Request("tools/call", map[string]any{"name": "odd name!"})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		ResultType string
		TTL        *int `json:"ttlMs"`
	}
	json.Unmarshal(raw, &r)
	if r.ResultType != "complete" || r.TTL != nil {
		t.Fatalf("call = %s, want complete without the provider's ttlMs", raw)
	}
}

func TestProviderResultMeta(t *testing.T) {
	s := newProvided(t)
	c := mcptest.NewClient(t, s, mcptest.Sample("x"))
	res, err := c.Client().CallTool(context.Background(), "odd name!", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Meta)
	var m map[string]any
	json.Unmarshal(b, &m)
	if m["k"] != "v" {
		t.Errorf("_meta = %s, want the provider's k kept", b)
	}
	if si, _ := m["io.modelcontextprotocol/serverInfo"].(map[string]any); si != nil && si["name"] != "front" {
		t.Errorf("serverInfo = %v, want the front's", si)
	}
}

// RequestInput refuses what the caller did not declare, with -32021.
func TestProviderRequestInputCapability(t *testing.T) {
	c := mcptest.NewClient(t, newProvided(t)) // no sampling
	_, err := c.Client().CallTool(context.Background(), "odd name!", nil)
	var e *mcp.Error
	if !errors.As(err, &e) || e.Code != mcp.CodeMissingCapability {
		t.Fatalf("err = %v, want -32021", err)
	}
}

// Without Advertise, a Provider server declares what its registry implies;
// Advertise(nil) goes back to that.
func TestAdvertiseReset(t *testing.T) {
	s := newProvided(t)
	s.Advertise(nil)
	c := mcptest.NewClient(t, s)
	if caps := c.Client().Capabilities(); caps.Tools != nil {
		t.Errorf("caps = %+v, want none after Advertise(nil)", caps)
	}
}

func TestReadyChecks(t *testing.T) {
	down := errors.New("backend down")
	var fail bool
	s := mcp.NewServer(&mcp.ServerOptions{ReadyChecks: []mcp.ReadyChecker{mcp.ReadyFunc(func(context.Context) error {
		if fail {
			return down
		}
		return nil
	})}})
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	fail = true
	if err := s.Ready(context.Background()); !errors.Is(err, down) {
		t.Fatalf("Ready = %v, want the check's error", err)
	}
}

func TestUnavailable(t *testing.T) {
	e := mcp.Unavailable("busy")
	if diff := cmp.Diff([]int{-32603, 503}, []int{e.Code, e.HTTPStatus()}); diff != "" {
		t.Error(diff)
	}
}

var _ = client.Connect

// Advertise's Info replaces ServerOptions.Info in server/discover, in
// every result's _meta and in a legacy initialize, while serving;
// Advertise(nil) goes back to ServerOptions.Info.
func TestAdvertiseInfo(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "configured", Version: "1"}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return "", nil
	})
	discovered := func() string {
		t.Helper()
		r := mcpwire.Serve(t, s, mcpwire.Request{Method: "server/discover"})
		var d struct {
			Result struct {
				Meta struct {
					Info mcp.Implementation `json:"io.modelcontextprotocol/serverInfo"`
				} `json:"_meta"`
			}
		}
		r.Decode(t, &d)
		return d.Result.Meta.Info.Name + " " + d.Result.Meta.Info.Version
	}
	if got := discovered(); got != "configured 1" {
		t.Errorf("before Advertise: %q", got)
	}
	s.Advertise(&mcp.Advertisement{Info: &mcp.Implementation{Name: "backend", Version: "2"}, Capabilities: mcp.ServerCapabilities{Tools: &mcp.ListCapability{}}})
	if got := discovered(); got != "backend 2" {
		t.Errorf("after Advertise: %q, want the advertised identity", got)
	}
	c := mcptest.NewClient(t, s, mcptest.Legacy())
	if info := c.Client().ServerInfo(); info.Name != "backend" || info.Version != "2" {
		t.Errorf("legacy initialize: serverInfo %+v", info)
	}
	s.Advertise(nil)
	if got := discovered(); got != "configured 1" {
		t.Errorf("after Advertise(nil): %q, want ServerOptions.Info", got)
	}
}
