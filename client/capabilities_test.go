package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// capsServer has a tool that reports the capabilities its request declared
// and one that samples.
func capsServer() *mcp.Server {
	s := mcp.NewServer(&mcp.ServerOptions{State: mcp.StateOptions{Keys: [][]byte{make([]byte, 32)}}})
	mcp.AddTool(s, &mcp.Tool{Name: "caps", Description: "Reports the declared capabilities."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			b, err := json.Marshal(req.Info.ClientCapabilities)
			return string(b), err
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Samples."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			r, err := req.Sample("s", &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}}, MaxTokens: 3})
			if err != nil {
				return "", err
			}
			return r.Model + ":" + r.Text(), nil
		})
	return s
}

func TestOptionsCapabilitiesExact(t *testing.T) {
	want := mcp.ClientCapabilities{
		Roots:       &mcp.RootsCapability{ListChanged: true},
		Sampling:    &mcp.SamplingCapability{Tools: json.RawMessage("{}"), Context: json.RawMessage("{}")},
		Elicitation: &mcp.ElicitationCapability{URL: json.RawMessage("{}")},
		Extensions:  map[string]json.RawMessage{"x.example/ext": json.RawMessage(`{"a":1}`)},
	}
	for _, era := range []client.EraPreference{client.ModernOnly, client.LegacyOnly} {
		t.Run(era.String(), func(t *testing.T) {
			c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: capsServer()}, &client.Options{Eras: era, Capabilities: &want})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := c.CallTool(context.Background(), "caps", nil)
			if err != nil {
				t.Fatal(err)
			}
			var got mcp.ClientCapabilities
			if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
				t.Fatal(err)
			}
			// A legacy session keeps the extensions its initialize declared
			// (all but tasks), as MCP Apps hosts need.
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the server saw (-declared +seen):\n%s", diff)
			}
		})
	}
}

// Options.Input answers input requests raw, in both eras (a legacy
// server's real request, a modern server's input_required round); a
// *mcp.Error it returns reaches a legacy server as that error.
func TestOptionsInputRaw(t *testing.T) {
	for _, era := range []client.EraPreference{client.ModernOnly, client.LegacyOnly} {
		t.Run(era.String(), func(t *testing.T) {
			var mu sync.Mutex
			var methods []string
			fail := false
			in := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
				mu.Lock()
				defer mu.Unlock()
				methods = append(methods, method)
				if fail {
					return nil, &mcp.Error{Code: -32600, Message: "no caller to ask"}
				}
				return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"yo"},"model":"m1"}`), nil
			}
			caps := mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}
			c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: capsServer()}, &client.Options{Eras: era, Capabilities: &caps, Input: in})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := c.CallTool(context.Background(), "sample", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "m1:yo" {
				t.Errorf("tool said %q, want the raw answer used", got)
			}
			if diff := cmp.Diff([]string{"sampling/createMessage"}, methods); diff != "" {
				t.Error(diff)
			}
			if era != client.LegacyOnly {
				return
			}
			fail = true
			_, err = c.CallTool(context.Background(), "sample", nil)
			if err == nil {
				t.Fatal("call succeeded although the input handler failed")
			}
			var me *mcp.Error
			var te *client.ToolError
			if !errors.As(err, &te) && !errors.As(err, &me) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// A legacy session keeps the extensions its initialize declared, but not
// tasks: the legacy era runs no tool as a task.
func TestLegacySessionExtensionsWithoutTasks(t *testing.T) {
	declared := mcp.ClientCapabilities{Extensions: map[string]json.RawMessage{
		"io.modelcontextprotocol/ui": json.RawMessage(`{"mimeTypes":["text/html;profile=mcp-app"]}`),
		mcp.TasksExtension:           json.RawMessage(`{}`),
	}}
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: capsServer()}, &client.Options{Eras: client.LegacyOnly, Capabilities: &declared})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(context.Background(), "caps", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got mcp.ClientCapabilities
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]json.RawMessage{"io.modelcontextprotocol/ui": json.RawMessage(`{"mimeTypes":["text/html;profile=mcp-app"]}`)}
	if diff := cmp.Diff(want, got.Extensions); diff != "" {
		t.Errorf("the legacy session's extensions (-want +got):\n%s", diff)
	}
}

// A legacy server's input requests of one round are answered concurrently:
// a handler that waits (for a user) does not keep the client from reading
// the next request. Without that, this handler waits for a second request
// that the reading goroutine never reads.
func TestInputRequestsConcurrent(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{State: mcp.StateOptions{Keys: [][]byte{make([]byte, 32)}}})
	mcp.AddTool(s, &mcp.Tool{Name: "two", Description: "Asks two questions at once."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			_, e1 := req.ListRoots("a")
			_, e2 := req.Elicit("b", &mcp.ElicitParams{Message: "ok?"})
			if err := errors.Join(e1, e2); err != nil {
				return "", err
			}
			return "both", nil
		})
	both := make(chan struct{})
	var n sync.WaitGroup
	n.Add(2)
	go func() { n.Wait(); close(both) }()
	in := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		n.Done()
		select {
		case <-both:
		case <-time.After(5 * time.Second):
			return nil, errors.New("the other request never came")
		}
		if method == "roots/list" {
			return json.RawMessage(`{"roots":[]}`), nil
		}
		return json.RawMessage(`{"action":"accept","content":{}}`), nil
	}
	caps := mcp.ClientCapabilities{Roots: &mcp.RootsCapability{}, Elicitation: &mcp.ElicitationCapability{}}
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, &client.Options{Eras: client.LegacyOnly, Capabilities: &caps, Input: in})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(context.Background(), "two", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "both" {
		t.Errorf("got %q", got)
	}
}
