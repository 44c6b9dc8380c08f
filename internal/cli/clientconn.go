package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"

	"github.com/mcpkit/mcpkit/client"
	iclient "github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/internal/clip"
	"github.com/mcpkit/mcpkit/mcp"
)

// clientIO is the terminal side of a client command: where questions to
// the user (elicitation) are read from and asked on.
type clientIO struct {
	in  io.Reader
	err io.Writer
}

// connectClient connects to t with the public client, as the client
// commands do. On a terminal (stdin and stderr both) it answers
// elicitation by asking the user; elsewhere it declares no elicitation.
// On failure it prints why to stderr and returns the exit code.
func connectClient(ctx context.Context, name string, f *clientFlags, t target, cio clientIO) (*conn, int) {
	stderr := cio.err
	release := func() {}
	var tr client.Transport
	if t.url != "" {
		var hc *http.Client
		if f.login.auth {
			var err error
			if hc, release, err = f.login.httpClient(t.url, stderr); err != nil {
				fmt.Fprintf(stderr, "mcpkit %s: %v\n", name, err)
				return nil, exitUsage
			}
		}
		tr = &client.HTTPTransport{URL: t.url, Header: f.headers.h, HTTPClient: hc}
	} else {
		tr = &client.CommandTransport{Command: t.command[0], Args: t.command[1:]}
	}
	info := clientInfo()
	opts := &client.Options{
		ClientInfo:     mcp.Implementation{Name: "mcpkit-" + name, Version: info.Version},
		Version:        f.version,
		Timeout:        f.timeout,
		ConnectTimeout: f.timeout,
		Extensions:     f.extensions,
	}
	if f.elicit != nil {
		opts.Elicit = f.elicit
	} else if interactive(cio.in, cio.err) {
		asker := newFormAsker(cio.in, cio.err)
		opts.Elicit = terminalElicit(asker)
		opts.ElicitURL = true
	}
	c, err := client.Connect(ctx, tr, opts)
	if err != nil {
		release()
		var ce *client.ConnectError
		if errors.As(err, &ce) {
			if msg, ok := didNotStart(ce); ok {
				fmt.Fprintf(stderr, "mcpkit %s: %s: did not start: %s\n", name, t, termSafe(clipLen(msg, maxErrorText), true))
				return nil, exitDidNotStart
			}
		}
		fmt.Fprintf(stderr, "mcpkit %s: %s: %s\n", name, t, errText(err))
		return nil, connectExitCode(err, stderr)
	}
	return &conn{Client: c, release: release}, exitOK
}

// conn is a connected client and what to release when it closes (the
// --auth token store).
type conn struct {
	*client.Client
	release func()
}

func (c *conn) Close() error {
	err := c.Client.Close()
	c.release()
	return err
}

// interactive decides whether the client commands ask the user; tests
// replace it.
var interactive = isTerminal

// connectExitCode maps a failure of client.Connect to discover's exit
// codes, with a hint when the server wants credentials.
func connectExitCode(err error, stderr io.Writer) int {
	var ce *client.ConnectError
	if !errors.As(err, &ce) {
		var te *client.TransportError
		if errors.As(err, &te) {
			return exitUnreachable // the command did not start, say
		}
		return exitNotMCP
	}
	for _, st := range ce.Steps {
		if st.Status == http.StatusUnauthorized || st.Status == http.StatusForbidden {
			fmt.Fprintf(stderr, "(the server answered HTTP %d: if it needs credentials, log in with --auth or pass a token with --header \"Authorization: Bearer TOKEN\")\n", st.Status)
			break
		}
	}
	switch ce.Kind {
	case client.Unreachable:
		return exitUnreachable
	case client.Incompatible:
		return exitIncompatible
	}
	return exitNotMCP
}

// terminalElicit answers elicitation requests by asking on the terminal.
func terminalElicit(a *formAsker) client.ElicitHandler {
	return func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		if p.Mode == mcp.ElicitModeURL {
			return &mcp.ElicitResult{Action: mcp.ElicitAction(a.askURL(p.Message, p.URL))}, nil
		}
		schema, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return nil, err
		}
		action, content, err := a.askForm(p.Message, schema)
		if err != nil {
			return nil, err
		}
		return &mcp.ElicitResult{Action: mcp.ElicitAction(action), Content: content}, nil
	}
}

// listItems returns every item of a list through the client's iterators
// (which follow cursors, and leave out tools whose x-mcp-header
// declarations are invalid), each encoded as JSON.
func listItems(ctx context.Context, c *client.Client, kind string) ([]json.RawMessage, error) {
	switch kind {
	case "tools":
		return encodeAll(c.ListTools(ctx))
	case "resources":
		return encodeAll(c.ListResources(ctx))
	case "resourceTemplates":
		return encodeAll(c.ListResourceTemplates(ctx))
	case "prompts":
		return encodeAll(c.ListPrompts(ctx))
	}
	return nil, fmt.Errorf("unknown list %q", kind)
}

func encodeAll[T any](seq iter.Seq2[*T, error]) ([]json.RawMessage, error) {
	out := []json.RawMessage{}
	for it, err := range seq {
		if err != nil {
			return out, err
		}
		b, err := json.Marshal(it)
		if err != nil {
			return out, err
		}
		out = append(out, b)
	}
	return out, nil
}

// callTool calls a tool and returns its result as received. When the
// server says the Mcp-Param-* headers do not match (the tool mirrors
// arguments into headers, and the client has not seen its schema), the
// tools are listed once and the call is sent again.
func callTool(ctx context.Context, c *client.Client, name string, args json.RawMessage) (json.RawMessage, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	res, err := c.Call(ctx, "tools/call", params)
	var me *mcp.Error
	if errors.As(err, &me) && me.Code == mcp.CodeHeaderMismatch {
		if _, lerr := listItems(ctx, c, "tools"); lerr == nil {
			res, err = c.Call(ctx, "tools/call", params)
		}
	}
	return res, err
}

// maxErrorData bounds the error data the CLI prints, and maxErrorText
// an error message.
const (
	maxErrorData = 2048
	maxErrorText = 4096
)

// clipLen cuts s at n bytes (clip.String), saying how long it was.
func clipLen(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s (%d bytes in all)", clip.String(s, n), len(s))
}

// errText is an error to print for a person: escaped (termSafe) and cut
// at maxErrorText, since it may hold what a server sent.
func errText(err error) string { return termSafe(clipLen(err.Error(), maxErrorText), true) }

// requestFailed prints why a request failed and returns the exit code:
// exitRPCError for a JSON-RPC error answer, exitRequestFails otherwise.
// What the server sent is printed escaped (termSafe) and bounded.
func requestFailed(name string, err error, stderr io.Writer) int {
	var me *mcp.Error
	if errors.As(err, &me) {
		fmt.Fprintf(stderr, "mcpkit %s: the server answered with error %d: %s\n", name, me.Code, termSafe(clipLen(me.Message, maxErrorText), true))
		if raw, ok := me.Data.(json.RawMessage); ok && len(raw) > 0 && string(raw) != "null" {
			fmt.Fprintf(stderr, "  data: %s\n", termSafe(clipLen(indentJSON(raw, "  "), maxErrorData), true))
		}
		return exitRPCError
	}
	fmt.Fprintf(stderr, "mcpkit %s: %s\n", name, errText(err))
	return exitRequestFails
}

// rawList follows nextCursor through every page of a list method and
// returns the items as the server sent them (discover shows them so,
// tools with invalid x-mcp-header declarations included). field is the
// result member holding the items.
func rawList(ctx context.Context, c *client.Client, method, field string) ([]json.RawMessage, error) {
	return iclient.ListPages(ctx, method, field, func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		return c.Call(ctx, method, params)
	})
}
