package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/internal/demo"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestMain lets the test binary stand in for a stdio server: with
// MCPKIT_TEST_RUN set it runs the mcpkit command line (so `-- TESTBINARY
// serve --stdio` is `mcpkit serve --stdio`), and with MCPKIT_TEST_LEGACY
// set it is a minimal legacy (initialize-handshake) stdio server.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("MCPKIT_TEST_RUN") != "":
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	case os.Getenv("MCPKIT_TEST_LEGACY") != "":
		legacyServer()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// legacyServer answers like a 2025-06-18 stdio server: -32601 to anything
// before initialize.
func legacyServer() {
	sc := bufio.NewScanner(os.Stdin)
	initialized := false
	for sc.Scan() {
		msg, err := jsonrpc.Decode(append([]byte(nil), sc.Bytes()...))
		if err != nil || !msg.IsRequest() {
			if msg.Method == "notifications/initialized" {
				initialized = true
			}
			continue
		}
		var out []byte
		switch {
		case msg.Method == "initialize":
			out = jsonrpc.AppendResult(nil, msg.ID, []byte(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"experimental":{"x":{}}},"serverInfo":{"name":"legacy-fake","version":"0.9"}}`))
		case msg.Method == "tools/list" && initialized:
			out = jsonrpc.AppendResult(nil, msg.ID, []byte(`{"tools":[{"name":"old","description":"An old tool.","inputSchema":{"type":"object"}}]}`))
		default:
			out = jsonrpc.AppendError(nil, msg.ID, &jsonrpc.Error{Code: -32601, Message: "Method not found"})
		}
		os.Stdout.Write(append(out, '\n'))
	}
}

// runDiscover runs `mcpkit discover args...` and returns its exit code,
// stdout and stderr.
func runDiscover(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"discover"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func decodeReport(t *testing.T, out string) *report {
	t.Helper()
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json output is not a report: %v\n%s", err, out)
	}
	return &r
}

// mcpkitServeCommand is `mcpkit serve --stdio`, run by the test binary.
func mcpkitServeCommand(t *testing.T) []string {
	t.Setenv("MCPKIT_TEST_RUN", "1")
	return []string{"--", os.Args[0], "serve", "--fixtures", "--stdio"}
}

func TestDiscoverHumanOutput(t *testing.T) {
	ts := httptest.NewServer(demo.New(nil))
	defer ts.Close()
	code, out, errOut := runDiscover(t, ts.URL)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, want := range []string{
		"mcpkit-demo 0.1.0  (self-reported)",
		"  target        " + ts.URL + "  (Streamable HTTP)",
		"  era           modern  (answers server/discover; no handshake)",
		"  version       2026-07-28  (supported: 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)",
		"  capabilities  ",
		"  extensions    io.modelcontextprotocol/skills, io.modelcontextprotocol/tasks",
		"  instructions  A demo of mcpkit.",
		"  caching       ttl 1h, scope public",
		"ms (server/discover round trip)",
		"1. server/discover at 2026-07-28 -> HTTP 200, a result",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour escapes in output that is not a terminal:\n%q", out)
	}
	_, colored, _ := runDiscover(t, "--color", "always", ts.URL)
	if !strings.Contains(colored, "\x1b[1mmcpkit-demo 0.1.0\x1b[0m") {
		t.Errorf("--color always: no bold server name in %q", colored)
	}
}

func TestDiscoverJSON(t *testing.T) {
	ts := httptest.NewServer(demo.New(&mcp.ServerOptions{PageSize: 3, Cache: mcp.CacheOptions{TTL: 90 * time.Second}, Extensions: map[string]any{"com.example/thing": nil}}))
	defer ts.Close()
	targets := map[string][]string{
		"http":  {ts.URL},
		"stdio": mcpkitServeCommand(t),
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runDiscover(t, append([]string{"--json", "--list"}, target...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s %s", code, out, errOut)
			}
			r := decodeReport(t, out)
			if r.Era != "modern" || r.ProtocolVersion != "2026-07-28" || r.ServerInfo == nil || r.ServerInfo.Name != demo.Name {
				t.Errorf("era %q version %q serverInfo %+v", r.Era, r.ProtocolVersion, r.ServerInfo)
			}
			if name == "http" {
				// Served with the options above.
				if r.Cache == nil || r.Cache.TTL != "1m30s" || *r.Cache.TTLMs != 90000 || r.Cache.Scope != "public" {
					t.Errorf("cache = %+v, want 1m30s public", r.Cache)
				}
				if diff := cmp.Diff([]string{"com.example/thing", mcp.SkillsExtension, mcp.TasksExtension, apps.ExtensionID}, r.Extensions); diff != "" {
					t.Errorf("extensions (-want +got):\n%s", diff)
				}
				if r.Transport != "streamable-http" || r.Exit != nil {
					t.Errorf("transport %q exit %+v", r.Transport, r.Exit)
				}
			} else {
				if r.Transport != "stdio" || r.Exit == nil || r.Exit.Code != 0 || r.Exit.Forced != "" {
					t.Errorf("transport %q exit %+v; want stdio, exited 0 by itself", r.Transport, r.Exit)
				}
			}
			if r.Lists == nil {
				t.Fatal("no lists")
			}
			if want := demoToolCount(t); len(r.Lists.Tools) != want || want <= 3 {
				t.Errorf("listed %d tools over pages of 3, want all %d", len(r.Lists.Tools), want)
			}
			// Every list the capabilities offer was fetched without error.
			lists := map[string]int{"prompts": len(r.Lists.Prompts), "resources": len(r.Lists.Resources)}
			for capability, n := range lists {
				if hasCapability(r.Capabilities, capability) && n == 0 {
					t.Errorf("capability %s is advertised, but --list found none", capability)
				}
			}
			if len(r.Lists.Errors) > 0 {
				t.Errorf("list errors: %v", r.Lists.Errors)
			}
		})
	}
}

// A server without prompts or resources is not asked for them.
func TestDiscoverListSkipsWhatIsNotOffered(t *testing.T) {
	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "tools-only", Version: "1"}})
	mcp.AddTool(s, &mcp.Tool{Name: "noop", Description: "Does nothing."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
	ts := httptest.NewServer(s)
	defer ts.Close()
	code, out, _ := runDiscover(t, "--json", "--list", ts.URL)
	r := decodeReport(t, out)
	if code != exitOK || len(r.Lists.Tools) != 1 {
		t.Fatalf("exit %d, lists %+v", code, r.Lists)
	}
	if diff := cmp.Diff([]string{"prompts/list", "resources/list", "resources/templates/list"}, r.Lists.Skipped); diff != "" {
		t.Errorf("skipped lists (-want +got):\n%s", diff)
	}
	_, human, _ := runDiscover(t, "--list", ts.URL)
	if !strings.Contains(human, "prompts (0)  not offered by the server's capabilities") {
		t.Errorf("output does not say prompts are not offered:\n%s", human)
	}
}

func TestDiscoverCheck(t *testing.T) {
	ts := httptest.NewServer(demo.New(nil))
	defer ts.Close()
	httpRows := []string{"unsupported-version", "unsupported-version-data", "discover-result", "discover-server-info", "discover-cache", "versions-agree", "missing-meta", "header-mismatch-method", "header-mismatch-version", "unknown-method", "get-405", "discover-first"}
	stdioRows := []string{"unsupported-version", "unsupported-version-data", "discover-result", "discover-server-info", "discover-cache", "versions-agree", "missing-meta", "unknown-method", "discover-first"}
	tests := []struct {
		name string
		args []string
		rows []string
	}{
		{"http", []string{ts.URL}, httpRows},
		{"stdio", mcpkitServeCommand(t), stdioRows},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, _ := runDiscover(t, append([]string{"--json", "--check"}, tt.args...)...)
			r := decodeReport(t, out)
			var ids []string
			for _, c := range r.Checks {
				ids = append(ids, c.ID)
				if c.Status != statusPass || c.Section == "" {
					t.Errorf("check %s: %s %s (section %q)", c.ID, c.Status, c.Detail, c.Section)
				}
			}
			if diff := cmp.Diff(tt.rows, ids); diff != "" {
				t.Errorf("check rows (-want +got):\n%s", diff)
			}
			if code != exitOK {
				t.Errorf("exit %d, want 0", code)
			}
		})
	}
}

// brokenServer is the demo server with discovery mistakes a checker must
// catch: GET is answered 200, and an unsupported version gets a bare 400.
func brokenServer() http.Handler {
	s := demo.New(nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Write([]byte("hello"))
			return
		}
		if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && v != "2026-07-28" {
			http.Error(w, "bad version", http.StatusBadRequest)
			return
		}
		s.ServeHTTP(w, r)
	})
}

func TestDiscoverCheckFailures(t *testing.T) {
	ts := httptest.NewServer(brokenServer())
	defer ts.Close()
	code, out, _ := runDiscover(t, "--check", ts.URL)
	if code != exitCheckFailed {
		t.Errorf("exit %d, want %d", code, exitCheckFailed)
	}
	for _, want := range []string{
		"FAIL  unsupported version 9999-12-31 -> -32022 (HTTP 400)",
		`want error -32022, got HTTP 400, body "bad version\n" (not a JSON-RPC response)`,
		"SKIP  -32022 data: supported lists versions, requested echoes the request",
		"FAIL  MCP-Protocol-Version header != _meta version -> -32020 (HTTP 400)",
		"FAIL  GET on the endpoint -> HTTP 405",
		"want HTTP 405, got 200",
		"PASS  missing _meta -> -32602 (HTTP 400)",
		"7 passed, 3 failed, 2 skipped",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDiscoverLegacyStdio(t *testing.T) {
	t.Setenv("MCPKIT_TEST_LEGACY", "1")
	code, out, errOut := runDiscover(t, "--json", "--list", "--", os.Args[0])
	if code != exitOK {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	r := decodeReport(t, out)
	if r.Era != "legacy" || r.ProtocolVersion != "2025-06-18" || r.ServerInfo.Name != "legacy-fake" || len(r.Lists.Tools) != 1 {
		t.Errorf("report = %+v", r)
	}
	if diff := cmp.Diff([]string{"experimental/x"}, r.Extensions); diff != "" {
		t.Errorf("extensions (-want +got):\n%s", diff)
	}
	if len(r.Probe) != 2 || !strings.Contains(r.Probe[0].Answer, "-32601") {
		t.Errorf("probe = %+v, want server/discover -> -32601, then initialize", r.Probe)
	}
	// Human output says the era and that legacy versions are not listed.
	_, human, _ := runDiscover(t, "--", os.Args[0])
	for _, want := range []string{
		"legacy-fake 0.9  (self-reported)",
		"era           legacy  (initialize handshake)",
		"version       2025-06-18  (negotiated by initialize; legacy servers do not list their versions)",
		"extensions    experimental/x",
		"caching       none (legacy servers send no caching hints)",
		"ms (initialize round trip)",
	} {
		if !strings.Contains(human, want) {
			t.Errorf("output lacks %q:\n%s", want, human)
		}
	}
}

func TestDiscoverExitCodes(t *testing.T) {
	demoSrv := httptest.NewServer(demo.New(nil))
	defer demoSrv.Close()
	// A server that speaks only 2026-07-28 (the demo serves legacy clients too).
	modernSrv := httptest.NewServer(demo.New(&mcp.ServerOptions{Legacy: mcp.LegacyOptions{Disable: true}}))
	defer modernSrv.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>not MCP</html>"))
	}))
	defer html.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	tests := []struct {
		name string
		args []string
		code int
		out  string // in stdout, or in stderr for usage errors
	}{
		{"unreachable URL", []string{dead}, exitUnreachable, "connection refused"},
		{"command not found", []string{"--", "/nonexistent/mcp-server"}, exitUnreachable, "no such file"},
		{"not MCP", []string{html.URL}, exitNotMCP, `initialize at 2025-11-25 failed: HTTP 200, body "<html>not MCP</html>" (not a JSON-RPC response)`},
		{"legacy client, modern server", []string{"--version", "2025-11-25", modernSrv.URL}, exitIncompatible, "a legacy client at 2025-11-25 cannot talk to it"},
		{"legacy client, dual-era server", []string{"--version", "2025-11-25", demoSrv.URL}, exitOK, "era           legacy  (initialize handshake)"},
		{"no target", nil, exitUsage, "give a URL"},
		{"not a URL", []string{"example.com"}, exitUsage, "is not an http(s) URL"},
		{"URL and command", []string{demoSrv.URL, "--", "x"}, exitUsage, "not both"},
		{"bad header", []string{"--header", "nocolon", demoSrv.URL}, exitUsage, "want NAME:VALUE"},
		{"check as legacy client", []string{"--check", "--version", "2025-06-18", demoSrv.URL}, exitUsage, "cannot be combined"},
		{"flags after the URL", []string{demoSrv.URL, "--json"}, exitOK, `"era": "modern"`},
		{"help", []string{"-h"}, exitOK, "5  incompatible: an MCP server, but no protocol version in common"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runDiscover(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
			if !strings.Contains(out+errOut, tt.out) {
				t.Errorf("output lacks %q:\nstdout: %s\nstderr: %s", tt.out, out, errOut)
			}
		})
	}
}

func TestDiscoverSendsHeaders(t *testing.T) {
	s := demo.New(nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sesame" || r.Header.Values("X-Two")[1] != "b" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		s.ServeHTTP(w, r)
	}))
	defer ts.Close()
	code, out, _ := runDiscover(t, "--header", "Authorization: Bearer sesame", "--header", "X-Two:a", "--header", "X-Two:b", "--list", "--json", ts.URL)
	if code != exitOK || decodeReport(t, out).Era != "modern" {
		t.Errorf("with the headers: exit %d\n%s", code, out)
	}
	code, out, _ = runDiscover(t, ts.URL)
	if code != exitNotMCP || !strings.Contains(out, `the server answered HTTP 401: if it needs credentials, log in with --auth or pass a token with --header "Authorization: Bearer TOKEN"`) {
		t.Errorf("without them: exit %d, want %d and a hint about --header:\n%s", code, exitNotMCP, out)
	}
}

func TestCapabilityList(t *testing.T) {
	caps := json.RawMessage(`{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":false},"logging":{},"extensions":{"x/y":{}},"tasks":{"list":{},"cancel":{}}}`)
	want := []string{"logging", "resources (subscribe)", "tasks (cancel, list)", "tools (listChanged)"}
	if diff := cmp.Diff(want, capabilityList(caps)); diff != "" {
		t.Errorf("capabilityList (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"x/y"}, extensionNames(caps)); diff != "" {
		t.Errorf("extensionNames (-want +got):\n%s", diff)
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                    "0s",
		250 * time.Millisecond:               "250ms",
		time.Hour:                            "1h",
		90 * time.Minute:                     "1h30m",
		90 * time.Second:                     "1m30s",
		36*time.Hour + 1500*time.Millisecond: "1d12h1s500ms",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// demoToolCount counts the demo server's tools on one unpaginated page.
func demoToolCount(t *testing.T) int {
	t.Helper()
	ts := httptest.NewServer(demo.New(&mcp.ServerOptions{PageSize: 1000}))
	defer ts.Close()
	conn := client.DialHTTP(ts.URL, nil)
	defer conn.Close()
	res, err := client.NewModernSession(conn, "2026-07-28", nil).Result(t.Context(), "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor string            `json:"nextCursor"`
	}
	if err := json.Unmarshal(res, &page); err != nil || page.NextCursor != "" {
		t.Fatalf("one page of tools: %v, next cursor %q", err, page.NextCursor)
	}
	return len(page.Tools)
}
