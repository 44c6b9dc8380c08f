package cli

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
)

const legacyInit = `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`

// TestServeEraStdio checks --era over stdio, and that the old spelling
// --modern-only is --era modern: a modern server/discover and a legacy
// initialize, answered as each era choice says.
func TestServeEraStdio(t *testing.T) {
	tests := []struct {
		args                 []string
		discover, initialize string // what the answers contain
	}{
		{[]string{"--era", "both"}, `"supportedVersions":["2026-07-28","2025-11-25"`, `"protocolVersion":"2025-11-25"`},
		{nil, `"supportedVersions":["2026-07-28","2025-11-25"`, `"protocolVersion":"2025-11-25"`},
		{[]string{"--era", "modern"}, `"supportedVersions":["2026-07-28"]`, `"code":-32601`},
		{[]string{"--modern-only"}, `"supportedVersions":["2026-07-28"]`, `"code":-32601`},
		{[]string{"--era", "legacy"}, `"error":{"code":-32601,"message":"Method not found: server/discover; send initialize first"}`, `"protocolVersion":"2025-11-25"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr strings.Builder
			in := strings.NewReader(discoverReq + "\n" + legacyInit + "\n")
			if code := serveContext(context.Background(), append([]string{"--stdio"}, tt.args...), in, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			// Modern requests run concurrently: the answers are told
			// apart by their ids.
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			slices.Sort(lines)
			if len(lines) != 2 || !strings.Contains(lines[0], tt.discover) || !strings.Contains(lines[1], tt.initialize) {
				t.Errorf("got\n%s\nwant server/discover with %s and initialize with %s", stdout.String(), tt.discover, tt.initialize)
			}
		})
	}
}

// TestServeEraLegacyHTTP checks --era legacy over HTTP: a request without
// a session gets 400 with a plain JSON-RPC error, as servers before
// 2026-07-28 answer, and initialize opens a session.
func TestServeEraLegacyHTTP(t *testing.T) {
	url, _ := startServeCap(t, "--era", "legacy")
	resp := postDiscover(t, url)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"code":-32600`) || strings.Contains(string(b), "supportedVersions") {
		t.Errorf("server/discover: %d %s; want 400 with a plain -32600 error", resp.StatusCode, b)
	}
	resp = mcpwire.Send(t, context.Background(), url, mcpwire.Request{Legacy: true, Method: "initialize", Params: `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old","version":"1"}}`})
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") == "" || !strings.Contains(string(b), `"protocolVersion":"2025-11-25"`) {
		t.Errorf("initialize: %d, session %q, %s", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), b)
	}
}

// TestServeFlagErrors checks that bad front flags are usage errors (exit
// 2, the message and the usage on stderr) before anything is served.
func TestServeFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--era", "new"}, `--era "new": want both, modern or legacy`},
		{[]string{"--stdio", "--auth-issuer", "https://as.example"}, "the --auth-* flags apply to HTTP only"},
		{[]string{"--max-subscriptions", "-5"}, "--max-subscriptions -5"},
		{[]string{"extra"}, `takes no arguments (got ["extra"])`},
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
	}
	for _, tt := range tests {
		var stdout, stderr strings.Builder
		code := serveContext(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), "mcpkit serve: "+tt.want) || !strings.Contains(stderr.String(), "Usage:\n  mcpkit serve") || stdout.Len() > 0 {
			t.Errorf("%q: exit %d, stderr %q", tt.args, code, stderr.String())
		}
	}
}

// TestFrontOwnServer runs the front as a command other than serve would
// (the coming bridge): its own flag set and its own *mcp.Server, built
// from the options the front flags make (here --era legacy over stdio).
func TestFrontOwnServer(t *testing.T) {
	fs := newFlagSet(&Command{UsageLine: "bridge"})
	front := registerFront(fs)
	if err := fs.Parse([]string{"--stdio", "--era", "legacy", "--max-subscriptions", "3"}); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	opts, closeFront, err := front.ServerOptions(context.Background(), slog.New(slog.NewTextHandler(&log, nil)), &log)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFront()
	if !opts.Legacy.Only || opts.Listen.MaxSubscriptions != 3 {
		t.Errorf("options: Legacy.Only %v, MaxSubscriptions %d; want true, 3", opts.Legacy.Only, opts.Listen.MaxSubscriptions)
	}
	opts.Info.Name = "bridge"
	var built *mcp.Server
	newServer := func(o *mcp.ServerOptions) (*mcp.Server, error) {
		built = mcp.NewServer(o)
		return built, nil
	}
	var stdout strings.Builder
	if err := front.Serve(context.Background(), opts, newServer, strings.NewReader(legacyInit+"\n"), &stdout); err != nil {
		t.Fatal(err)
	}
	if built == nil || !strings.Contains(stdout.String(), `"serverInfo":{"name":"bridge"`) {
		t.Errorf("stdout %q; want the initialize result of the command's own server", stdout.String())
	}
	if !strings.Contains(log.String(), `"serving MCP on stdio" server=bridge versions="[2025-11-25 2025-06-18`) {
		t.Errorf("log %q", log.String())
	}
}

// TestDiscoverEraLegacy checks that mcpkit discover takes `serve --era
// legacy` for a legacy server, as it takes one written before 2026-07-28.
func TestDiscoverEraLegacy(t *testing.T) {
	url, _ := startServeCap(t, "--era", "legacy")
	var stdout, stderr strings.Builder
	if code := run([]string{"discover", "--json", url}, strings.NewReader(""), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"era": "legacy"`) {
		t.Errorf("report:\n%s\nwant era legacy", stdout.String())
	}
}

// TestServeLoopbackQuietAboutKeys checks that `mcpkit serve` on a loopback
// address without a requestState key starts without a word about keys
// (issue 29: the warning is for listeners other hosts reach).
func TestServeLoopbackQuietAboutKeys(t *testing.T) {
	t.Setenv(mcp.StateKeysEnv, "")
	_, logs := startServeCap(t)
	if l := strings.Join(logs, "\n"); strings.Contains(l, "requestState") {
		t.Errorf("start-up logs mention requestState:\n%s", l)
	}
}
