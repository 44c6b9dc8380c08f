package mcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/internal/demo"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

func TestDiscover(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{
		Info: mcp.Implementation{Name: "weather", Title: "Weather", Version: "2.1.0"}, Instructions: "Ask about the weather.",
		Cache:      mcp.CacheOptions{TTL: 90 * time.Second, Scope: mcp.CachePrivate},
		Extensions: map[string]any{"com.example/radar": map[string]any{"range": 50}},
	})
	mcp.AddTool(s, &mcp.Tool{Name: "forecast", Description: "Forecasts."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "sun", nil })
	d, err := mcptest.NewClient(t, s).Discover()
	if err != nil {
		t.Fatal(err)
	}
	want := &mcptest.Discovery{
		SupportedVersions: s.SupportedVersions(),
		Capabilities: mcp.ServerCapabilities{
			Tools:      &mcp.ListCapability{ListChanged: true}, // subscriptions/listen is on
			Logging:    &struct{}{},                            // tools may log
			Extensions: map[string]json.RawMessage{"com.example/radar": json.RawMessage(`{"range":50}`)},
		},
		ServerInfo:   mcp.Implementation{Name: "weather", Title: "Weather", Version: "2.1.0"},
		Instructions: "Ask about the weather.",
		TTL:          90 * time.Second,
		CacheScope:   mcp.CachePrivate,
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("Discover (-want +got):\n%s", diff)
	}
}

func TestToolsAndErrors(t *testing.T) {
	c := mcptest.NewClient(t, demo.New(&mcp.ServerOptions{PageSize: 2}))
	tools, err := c.ListTools()
	if err != nil {
		t.Fatal(err)
	}
	// The same tools as on one unpaginated page.
	onePage, err := mcptest.NewClient(t, demo.New(&mcp.ServerOptions{PageSize: 1000})).Request("tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	var page struct{ Tools []mcp.Tool }
	if err := json.Unmarshal(onePage, &page); err != nil {
		t.Fatal(err)
	}
	names := func(ts []mcp.Tool) (out []string) {
		for _, tl := range ts {
			out = append(out, tl.Name)
		}
		return out
	}
	if diff := cmp.Diff(names(page.Tools), names(tools)); diff != "" || len(tools) <= 2 {
		t.Errorf("tools over pages of 2 (-one page +paginated):\n%s", diff)
	}
	if !slices.Contains(names(tools), "shout") {
		t.Errorf("tools %v lack shout", names(tools))
	}

	res, err := c.CallTool("shout", map[string]any{"text": "hi"})
	if err != nil || res.Text() != "HI" || res.IsError {
		t.Errorf("shout = %+v, %v; want HI", res, err)
	}
	res, err = c.CallTool("test_image_content", nil)
	if err != nil || len(res.Content) != 1 || res.Content[0].Type != "image" || !strings.HasPrefix(string(res.Content[0].Data), "\x89PNG") {
		t.Errorf("test_image_content = %+v, %v; want a decoded PNG", res, err)
	}
	res, err = c.CallTool("test_error_handling", nil)
	if err != nil || !res.IsError {
		t.Errorf("test_error_handling = %+v, %v; want an isError result", res, err)
	}

	_, err = c.Request("no/such/method", nil)
	var e *mcp.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeMethodNotFound || e.HTTPStatus() != http.StatusNotFound {
		t.Errorf("unknown method: err = %v, want *mcp.Error -32601", err)
	}
	_, err = c.CallTool("test_missing_capability", nil)
	if !errors.As(err, &e) || e.Code != mcp.CodeMissingCapability || !strings.Contains(string(e.Data.(json.RawMessage)), "sampling") {
		t.Errorf("test_missing_capability: err = %v, want -32021 naming sampling", err)
	}
	// _meta given by the caller is merged with the required members.
	_, err = c.Request("tools/call", map[string]any{
		"name": "test_missing_capability",
		"_meta": map[string]any{
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"sampling": map[string]any{}},
		},
	})
	if err != nil {
		t.Errorf("with sampling declared: %v", err)
	}
}

// A tool that mirrors a parameter into an Mcp-Param-* header gets it over
// HTTP: CallTool learns the schema from tools/list after the server's
// -32020.
func TestCallToolParamHeaders(t *testing.T) {
	s := mcp.NewServer(nil)
	type in struct {
		Region string `json:"region"`
	}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "where",
		Description: "Says where it ran.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`),
	}, func(ctx context.Context, req *mcp.ToolRequest, in in) (string, error) {
		return in.Region + " via " + req.Info.Header.Get("Mcp-Param-Region"), nil
	})
	c := mcptest.NewClient(t, s, mcptest.HTTP()) // headers need HTTP
	res, err := c.CallTool("where", map[string]any{"region": "Zürich"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Text(), "Zürich via =?base64?WsO8cmljaA==?="; got != want {
		t.Errorf("where = %q, want %q", got, want)
	}
}

func TestToolResultDecodeStructured(t *testing.T) {
	type sum struct {
		Sum int `json:"sum"`
	}
	s := mcp.NewServer(nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{ A, B int }) (sum, error) {
		return sum{in.A + in.B}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "say", Description: "Says."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return "hi", nil
	})
	c := mcptest.NewClient(t, s)
	res, err := c.CallTool("add", map[string]any{"A": 2, "B": 3})
	if err != nil {
		t.Fatal(err)
	}
	var got sum
	if err := res.DecodeStructured(&got); err != nil || got.Sum != 5 {
		t.Errorf("DecodeStructured = %+v, %v; want {Sum:5}", got, err)
	}
	res, err = c.CallTool("say", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.DecodeStructured(&got); !errors.Is(err, mcp.ErrNoStructuredContent) {
		t.Errorf("DecodeStructured of a text-only result = %v, want ErrNoStructuredContent", err)
	}
}
