package client_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

func TestLogAndURLElicitation(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "n"}, State: stateKeys})
	mcp.AddTool(s, &mcp.Tool{Name: "logs", Description: "Logs."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		req.Log(mcp.LevelDebug, "t", "too low")
		req.Log(mcp.LevelWarning, "t", "careful")
		return "ok", nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "signin", Description: "Signs in."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		r, err := req.Elicit("login", &mcp.ElicitParams{Mode: mcp.ElicitModeURL, Message: "Sign in", URL: "https://example.com/login"})
		if err != nil {
			return "", err
		}
		return "signed in: " + string(r.Action), nil
	})
	for name, tr := range transports(t, s) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var asked []string
			c, err := client.Connect(ctx, tr, &client.Options{
				ElicitURL: true,
				Elicit: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					asked = append(asked, string(p.Mode)+" "+p.URL)
					return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var logs []string
			_, err = c.CallTool(ctx, "logs", nil, client.WithLogLevel(mcp.LevelInfo), client.WithLog(func(m *client.LogMessage) {
				logs = append(logs, string(m.Level)+" "+string(m.Data))
			}))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{`warning "careful"`}, logs); diff != "" {
				t.Errorf("log messages at info and above (-want +got):\n%s", diff)
			}
			if got := text(t)(c.CallTool(ctx, "signin", nil)); got != "signed in: accept" {
				t.Errorf("signin = %q", got)
			}
			if diff := cmp.Diff([]string{"url https://example.com/login"}, asked); diff != "" {
				t.Errorf("elicitations (-want +got):\n%s", diff)
			}
		})
	}
}

// Cancelling the context of a call aborts it, and the server's handler
// sees its own context end, on HTTP (the request is closed) as in memory.
func TestCancelAbortsRequest(t *testing.T) {
	s := mcp.NewServer(nil)
	stopped := make(chan struct{}, 4)
	started := make(chan struct{}, 4)
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "Blocks."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		stopped <- struct{}{}
		return "", ctx.Err()
	})
	for name, tr := range transports(t, s) {
		t.Run(name, func(t *testing.T) {
			c, err := client.Connect(context.Background(), tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-started; cancel() }()
			if _, err := c.CallTool(ctx, "block", nil); !errors.Is(err, context.Canceled) {
				t.Errorf("CallTool = %v, want context.Canceled", err)
			}
			select {
			case <-stopped:
			case <-time.After(10 * time.Second):
				t.Fatal("the server's handler did not see the cancellation")
			}
		})
	}
}

// A transport failure is a *client.TransportError.
func TestTransportError(t *testing.T) {
	_, err := client.Connect(context.Background(), &client.HTTPTransport{URL: "http://127.0.0.1:1/mcp"}, nil)
	var te *client.TransportError
	if !errors.As(err, &te) {
		t.Errorf("Connect to a closed port = %v (%T), want a *client.TransportError inside", err, err)
	}
}

// A call whose server went away fails with one "client:" prefix, the
// *client.TransportError in its chain.
func TestCallTransportErrorMessage(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "n"}, State: stateKeys})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return "ok", nil
	})
	srv := httptest.NewServer(s)
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv.Close()
	_, err = c.CallTool(context.Background(), "echo", nil)
	var te *client.TransportError
	if !errors.As(err, &te) {
		t.Fatalf("CallTool after the server closed = %v (%T), want a *client.TransportError inside", err, err)
	}
	if n := strings.Count(err.Error(), "client:"); n != 1 || !strings.HasPrefix(err.Error(), "client: tools/call: ") {
		t.Errorf("error %q: want one \"client:\", at the start, then the method", err)
	}
}
