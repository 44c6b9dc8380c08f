package bridge_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// modernBridge is a bridge in front of the modern era of backend.
func modernBridge(t *testing.T, be *mcp.Server) *bridge.Bridge {
	return startBridge(t, &bridge.Options{
		Backend: func() client.Transport { return &client.MemoryTransport{Server: be} },
		Eras:    client.ModernOnly,
	})
}

// A modern backend gets each caller's capabilities in the request itself:
// callers with different capabilities share one backend session.
func TestModernCapabilitiesPerRequest(t *testing.T) {
	b := modernBridge(t, backend(make(chan string, 4)))
	for _, tt := range []struct {
		caps, want string
	}{
		{`{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}`, `{"elicitation":{"form":{}}}`},
		{`{"sampling":{"tools":{}}}`, `{"sampling":{"tools":{}}}`},
		{`{}`, `{}`},
	} {
		r := mcpwire.Serve(t, b.Server(), mcpwire.Request{Method: "tools/call", Params: `{"name":"caps"}`, Caps: tt.caps})
		var resp struct {
			Result struct {
				Content []struct{ Text string }
			}
		}
		r.Decode(t, &resp)
		if len(resp.Result.Content) != 1 || resp.Result.Content[0].Text != tt.want {
			t.Errorf("caller %s: the backend saw %s, want %s", tt.caps, r.Last(), tt.want)
		}
	}
	if n := bridge.Sessions(b); n != 1 {
		t.Errorf("%d backend sessions, want 1 shared by every caller", n)
	}
}

// A modern backend's input_required becomes the front's with the same
// keys; the retry may reach another replica (nothing is held: the
// backend's requestState travels sealed in the front's), and a legacy
// caller of the front is asked in its session.
func TestModernInputRequiredRelayed(t *testing.T) {
	be := backend(make(chan string, 4))
	a, other := modernBridge(t, be), modernBridge(t, be)
	r := mcpwire.Serve(t, a.Server(), mcpwire.Request{Method: "tools/call", Params: `{"name":"sample"}`, Caps: `{"sampling":{}}`})
	var resp struct {
		Result struct {
			ResultType    string
			InputRequests map[string]struct{ Method string }
			RequestState  string
			Content       []struct{ Text string }
		}
	}
	r.Decode(t, &resp)
	if resp.Result.ResultType != "input_required" || resp.Result.InputRequests["a"].Method != "sampling/createMessage" || resp.Result.RequestState == "" {
		t.Fatalf("first round = %s, want input_required asking a", r.Last())
	}
	answer := func(text string) string {
		return `{"role":"assistant","model":"m","content":{"type":"text","text":"` + text + `"}}`
	}
	r = mcpwire.Serve(t, other.Server(), mcpwire.Request{Method: "tools/call", Caps: `{"sampling":{}}`,
		Params: `{"name":"sample","inputResponses":{"a":` + answer("x") + `},"requestState":` + quoteJSON(resp.Result.RequestState) + `}`})
	resp.Result.InputRequests = nil
	r.Decode(t, &resp)
	if _, ok := resp.Result.InputRequests["b"]; !ok {
		t.Fatalf("second round on the other replica = %s, want input_required asking b", r.Last())
	}
	r = mcpwire.Serve(t, a.Server(), mcpwire.Request{Method: "tools/call", Caps: `{"sampling":{}}`,
		Params: `{"name":"sample","inputResponses":{"b":` + answer("y") + `},"requestState":` + quoteJSON(resp.Result.RequestState) + `}`})
	r.Decode(t, &resp)
	if len(resp.Result.Content) != 1 || resp.Result.Content[0].Text != "x+y" {
		t.Fatalf("last round = %s, want x+y", r.Last())
	}

	for _, era := range []string{"modern", "legacy"} {
		t.Run(era+" caller", func(t *testing.T) {
			opts := []mcptest.Option{countingSampler()}
			if era == "legacy" {
				opts = append(opts, mcptest.Legacy())
			}
			c := mcptest.NewClient(t, a.Server(), opts...)
			res, err := c.Client().CallTool(context.Background(), "sample", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "ans1+ans2" {
				t.Errorf("sample = %q, want both answers relayed in order", got)
			}
		})
	}
}
