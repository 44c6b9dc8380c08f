package client_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type askOut struct {
	Name string `json:"name"`
}

func testServer(t *testing.T) *mcp.Server {
	if t != nil {
		t.Helper()
	}
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "test", Version: "1.2.3"}, Instructions: "be nice", State: mcp.StateOptions{Keys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}}})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds."}, func(ctx context.Context, req *mcp.ToolRequest, in addIn) (addOut, error) {
		req.Progress(1, 2, "half")
		return addOut{Sum: in.A + in.B}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return "", errors.New("broken")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks a name."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (askOut, error) {
		v, action, err := mcp.ElicitForm[askOut](req, "who", "Who are you?")
		if err != nil {
			return askOut{}, err
		}
		if action != mcp.ElicitAccept {
			return askOut{Name: string(action)}, nil
		}
		return v, nil
	})
	s.AddResource(&mcp.Resource{URI: "test://a", Name: "a"}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "hello"}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "p", Description: "A prompt.", Arguments: []mcp.PromptArgument{{Name: "x"}}}, func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "x=" + req.Arguments["x"]}}}}, nil
	})
	return s
}

func transports(t *testing.T, s *mcp.Server) map[string]client.Transport {
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return map[string]client.Transport{
		"memory": &client.MemoryTransport{Server: s},
		"http":   &client.HTTPTransport{URL: hs.URL},
	}
}

func TestClientBothEras(t *testing.T) {
	s := testServer(t)
	for name, tr := range transports(t, s) {
		for _, era := range []mcp.Era{mcp.EraModern, mcp.EraLegacy} {
			t.Run(name+"/"+string(era), func(t *testing.T) {
				ctx := context.Background()
				c, err := client.Connect(ctx, tr, &client.Options{
					Eras: only(era),
					Elicit: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
						return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if c.Era() != era {
					t.Errorf("Era = %q, want %q", c.Era(), era)
				}
				if got := c.ServerInfo(); got == nil || got.Name != "test" {
					t.Errorf("ServerInfo = %+v", got)
				}
				if c.Instructions() != "be nice" {
					t.Errorf("Instructions = %q", c.Instructions())
				}
				if c.Capabilities().Tools == nil {
					t.Errorf("no tools capability")
				}
				var names []string
				for tool, err := range c.ListTools(ctx) {
					if err != nil {
						t.Fatal(err)
					}
					names = append(names, tool.Name)
				}
				if diff := cmp.Diff([]string{"add", "ask", "fail"}, names); diff != "" {
					t.Errorf("tools (-want +got):\n%s", diff)
				}
				var progress []client.Progress
				out, err := client.CallToolAs[addOut](ctx, c, "add", addIn{2, 3}, client.WithProgress(func(p client.Progress) { progress = append(progress, p) }))
				if err != nil || out.Sum != 5 {
					t.Fatalf("add = %+v, %v", out, err)
				}
				if diff := cmp.Diff([]client.Progress{{Progress: 1, Total: 2, Message: "half"}}, progress); diff != "" {
					t.Errorf("progress (-want +got):\n%s", diff)
				}
				_, err = c.CallTool(ctx, "fail", nil)
				var te *client.ToolError
				if !errors.As(err, &te) {
					t.Errorf("fail: err = %v, want a *ToolError", err)
				}
				_, err = c.CallTool(ctx, "nope", nil)
				var me *mcp.Error
				if !errors.As(err, &me) {
					t.Errorf("nope: err = %v, want an *mcp.Error", err)
				}
				who, err := client.CallToolAs[askOut](ctx, c, "ask", nil)
				if err != nil || who.Name != "Ada" {
					t.Errorf("ask = %+v, %v", who, err)
				}
				rr, err := c.ReadResource(ctx, "test://a")
				if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "hello" {
					t.Errorf("ReadResource = %+v, %v", rr, err)
				}
				pr, err := c.GetPrompt(ctx, "p", map[string]string{"x": "1"})
				if err != nil || len(pr.Messages) != 1 {
					t.Fatalf("GetPrompt = %+v, %v", pr, err)
				}
				if tc, ok := pr.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "x=1" {
					t.Errorf("prompt content = %#v", pr.Messages[0].Content)
				}
			})
		}
	}
}
