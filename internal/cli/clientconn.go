package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/mcpkit/mcpkit/internal/client"
)

// mcpClient is what the client commands need from a connection to a
// server. Results are the result objects as received.
type mcpClient interface {
	CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
	ReadResource(ctx context.Context, uri string) (json.RawMessage, error)
	GetPrompt(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
	// List returns every item of a list (following cursors): kind is
	// "tools", "resources", "resourceTemplates" or "prompts".
	List(ctx context.Context, kind string) ([]json.RawMessage, error)
	// Capabilities returns the server's capabilities object.
	Capabilities() json.RawMessage
	Close() error
}

// clientIO is the terminal side of a client command: where questions to
// the user (elicitation) are read from and asked on.
type clientIO struct {
	in  io.Reader
	err io.Writer
}

// connectClient connects to t as the client commands do. On failure it
// prints why to stderr and returns the exit code.
func connectClient(ctx context.Context, name string, f *clientFlags, t target, cio clientIO) (mcpClient, int) {
	stderr := cio.err
	httpOpts := &client.HTTPOptions{Header: f.headers.h}
	release := func() {}
	if t.url != "" && f.login.auth {
		hc, rel, err := f.login.httpClient(t.url, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "mcpkit %s: %v\n", name, err)
			return nil, exitUsage
		}
		httpOpts.Client, release = hc, rel
	}
	var conn client.Conn
	if t.url != "" {
		conn = client.DialHTTP(t.url, httpOpts)
	} else {
		sc, err := client.StartCommand(t.command, &client.CommandOptions{Stderr: nil})
		if err != nil {
			fmt.Fprintf(stderr, "mcpkit %s: %v\n", name, err)
			return nil, exitUnreachable
		}
		conn = sc
	}
	info := clientInfo()
	info.Name = "mcpkit-" + name
	s, err := client.Connect(ctx, conn, &client.Options{Version: f.version, ClientInfo: info, Timeout: f.timeout, HTTP: httpOpts})
	if err != nil {
		conn.Close()
		release()
		var ce *client.ConnectError
		if !errors.As(err, &ce) {
			fmt.Fprintf(stderr, "mcpkit %s: %s: %v\n", name, t, err)
			return nil, exitNotMCP
		}
		if msg, ok := didNotStart(conn, ce); ok {
			fmt.Fprintf(stderr, "mcpkit %s: %s: did not start: %s\n", name, t, msg)
			return nil, exitDidNotStart
		}
		fmt.Fprintf(stderr, "mcpkit %s: %s: %v\n", name, t, err)
		for _, st := range ce.Steps {
			if st.Status == http.StatusUnauthorized || st.Status == http.StatusForbidden {
				fmt.Fprintf(stderr, "(the server answered HTTP %d: if it needs credentials, log in with --auth or pass a token with --header \"Authorization: Bearer TOKEN\")\n", st.Status)
				break
			}
		}
		switch ce.Kind {
		case client.Unreachable:
			return nil, exitUnreachable
		case client.Incompatible:
			return nil, exitIncompatible
		}
		return nil, exitNotMCP
	}
	return &internalClient{s: s, release: release}, exitOK
}

// internalClient adapts internal/client's Session.
type internalClient struct {
	s       *client.Session
	release func()
}

func (c *internalClient) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	return c.s.Result(ctx, "tools/call", params)
}

func (c *internalClient) ReadResource(ctx context.Context, uri string) (json.RawMessage, error) {
	return c.s.Result(ctx, "resources/read", map[string]any{"uri": uri})
}

func (c *internalClient) GetPrompt(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	return c.s.Result(ctx, "prompts/get", params)
}

var listMethods = map[string]string{
	"tools":             "tools/list",
	"resources":         "resources/list",
	"resourceTemplates": "resources/templates/list",
	"prompts":           "prompts/list",
}

func (c *internalClient) List(ctx context.Context, kind string) ([]json.RawMessage, error) {
	return c.s.List(ctx, listMethods[kind], kind)
}

func (c *internalClient) Capabilities() json.RawMessage { return c.s.Server.Capabilities }

func (c *internalClient) Close() error {
	err := c.s.Close()
	if c.release != nil {
		c.release()
	}
	return err
}

// requestFailed prints why a request failed and returns the exit code:
// exitRPCError for a JSON-RPC error answer, exitRequestFails otherwise.
func requestFailed(name string, err error, stderr io.Writer) int {
	var re *client.RPCError
	if errors.As(err, &re) {
		fmt.Fprintf(stderr, "mcpkit %s: the server answered with error %d: %s\n", name, re.Err.Code, re.Err.Message)
		if len(re.Err.Data) > 0 && string(re.Err.Data) != "null" {
			fmt.Fprintf(stderr, "  data: %s\n", indentJSON(re.Err.Data, "  "))
		}
		return exitRPCError
	}
	fmt.Fprintf(stderr, "mcpkit %s: %v\n", name, err)
	return exitRequestFails
}
