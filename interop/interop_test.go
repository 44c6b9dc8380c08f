// Package interop tests `mcpkit discover` and mcpkit's client against
// servers built on other MCP implementations: the official Go SDK
// (go-sdk v1.8.0, in every mode it serves) and the reference "everything"
// server from npm.
package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/interop/gosdkserver"
	"github.com/mcpkit/mcpkit/interop/mcpgoserver"
)

// mcpkitBin is the mcpkit command, built by TestMain.
var mcpkitBin string

// TestMain builds the mcpkit command. With INTEROP_GOSDK_MODE set, the
// test binary is instead a go-sdk stdio server in that mode (so that tests
// can spawn it).
func TestMain(m *testing.M) {
	if mode := os.Getenv("INTEROP_GOSDK_MODE"); mode != "" {
		os.Exit(gosdkserver.Main([]string{mode}))
	}
	if mode := os.Getenv("INTEROP_MCPGO_MODE"); mode != "" {
		if err := mcpgoserver.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "mcpkit-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mcpkitBin = filepath.Join(dir, "mcpkit")
	gocmd, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "the go command is not on PATH:", err)
		os.Exit(1)
	}
	// Built in the root module, as users build it, with that module's
	// dependencies and checksums.
	build := exec.Command(gocmd, "build", "-o", mcpkitBin, "./cmd/mcpkit")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building mcpkit:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// report is the part of `mcpkit discover --json` the tests look at.
type report struct {
	Transport         string   `json:"transport"`
	Era               string   `json:"era"`
	ProtocolVersion   string   `json:"protocolVersion"`
	SupportedVersions []string `json:"supportedVersions"`
	ServerInfo        *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
	Capabilities map[string]json.RawMessage `json:"capabilities"`
	Instructions string                     `json:"instructions"`
	Cache        *struct {
		TTL   string `json:"ttl"`
		Scope string `json:"scope"`
	} `json:"cache"`
	Probe []struct {
		Request string `json:"request"`
		Answer  string `json:"answer"`
	} `json:"probe"`
	Lists *struct {
		Tools     []json.RawMessage `json:"tools"`
		Prompts   []json.RawMessage `json:"prompts"`
		Resources []json.RawMessage `json:"resources"`
		Errors    map[string]string `json:"errors"`
	} `json:"lists"`
	Checks []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Detail string `json:"detail"`
	} `json:"checks"`
	Exit *struct {
		Code   int    `json:"code"`
		Forced string `json:"forced"`
	} `json:"exit"`
	Error *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

// discover runs `mcpkit discover --json args...` with extra environment
// and returns the report and the exit code.
func discover(t *testing.T, env []string, args ...string) (*report, int) {
	t.Helper()
	cmd := exec.Command(mcpkitBin, append([]string{"discover", "--json"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running mcpkit discover: %v", err)
	}
	var r report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("mcpkit discover printed no JSON report (%v):\n%s\n%s", err, stdout.String(), stderr.String())
	}
	return &r, code
}

// gosdkTarget returns the discover arguments and environment that reach a
// go-sdk server in mode: an httptest server on 127.0.0.1 for HTTP modes,
// this test binary spawned as the server for stdio modes.
func gosdkTarget(t *testing.T, mode string) ([]string, []string) {
	if gosdkserver.IsStdio(mode) {
		return []string{"--", os.Args[0]}, []string{"INTEROP_GOSDK_MODE=" + mode}
	}
	h, err := gosdkserver.Handler(mode)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return []string{ts.URL}, nil
}

var allVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// TestGoSDK tells the era of go-sdk servers in every mode and lists them
// in full (the servers page two items at a time).
func TestGoSDK(t *testing.T) {
	type want struct {
		Transport, Era, Version string
		Supported               []string
		Tools                   int
	}
	tests := []struct {
		mode string
		want want
	}{
		// Stateless Streamable HTTP serves 2026-07-28: a modern server.
		{gosdkserver.HTTPStateless, want{"streamable-http", "modern", "2026-07-28", allVersions, 3}},
		// With sessions, go-sdk answers server/discover with only the
		// legacy versions, so discover settles on 2025-11-25 by
		// initialize.
		{gosdkserver.HTTPStateful, want{"streamable-http", "legacy", "2025-11-25", nil, 3}},
		// Restricted to legacy versions: -32022, then initialize.
		{gosdkserver.HTTPLegacy, want{"streamable-http", "legacy", "2025-11-25", nil, 3}},
		// The 2024-11-05 HTTP+SSE transport: POSTs fail with 400, the
		// GET yields the endpoint event.
		{gosdkserver.SSE, want{"http+sse", "legacy", "2025-11-25", nil, 3}},
		{gosdkserver.Stdio, want{"stdio", "modern", "2026-07-28", allVersions, 3}},
		{gosdkserver.StdioLegacy, want{"stdio", "legacy", "2025-11-25", nil, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			args, env := gosdkTarget(t, tt.mode)
			r, code := discover(t, env, append([]string{"--list"}, args...)...)
			if code != 0 || r.Error != nil {
				t.Fatalf("exit %d, error %+v", code, r.Error)
			}
			got := want{r.Transport, r.Era, r.ProtocolVersion, r.SupportedVersions, len(r.Lists.Tools)}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if r.ServerInfo == nil || r.ServerInfo.Name != gosdkserver.Name || r.ServerInfo.Version != gosdkserver.Version {
				t.Errorf("serverInfo = %+v", r.ServerInfo)
			}
			if r.Instructions != gosdkserver.Instructions {
				t.Errorf("instructions = %q", r.Instructions)
			}
			if _, ok := r.Capabilities["tools"]; !ok {
				t.Errorf("capabilities = %v, want tools", r.Capabilities)
			}
			if len(r.Lists.Prompts) != 1 || len(r.Lists.Resources) != 1 || len(r.Lists.Errors) != 0 {
				t.Errorf("prompts %d, resources %d, errors %v; want 1, 1, none", len(r.Lists.Prompts), len(r.Lists.Resources), r.Lists.Errors)
			}
			if r.Era == "modern" && (r.Cache == nil || r.Cache.TTL != "0s" || r.Cache.Scope != "public") {
				t.Errorf("cache = %+v, want ttl 0s, public", r.Cache)
			}
			if gosdkserver.IsStdio(tt.mode) && (r.Exit == nil || r.Exit.Code != 0 || r.Exit.Forced != "") {
				t.Errorf("exit = %+v, want 0 when stdin closed", r.Exit)
			}
		})
	}
}

// TestGoSDKCheck pins what --check finds in go-sdk v1.8.0.
func TestGoSDKCheck(t *testing.T) {
	tests := []struct {
		mode string
		want map[string]string // check id -> status; unlisted rows pass
		code int
	}{
		{gosdkserver.HTTPStateless, nil, 0},
		// Over stdio, a request without _meta is taken for a legacy one:
		// -32601 for server/discover instead of -32602.
		{gosdkserver.Stdio, map[string]string{"missing-meta": "fail"}, 1},
		// With sessions, the DiscoverResult leaves out 2026-07-28 that
		// the -32022 lists, and GET opens no 405.
		{gosdkserver.HTTPStateful, map[string]string{"discover-result": "fail", "versions-agree": "fail", "get-405": "fail"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			args, env := gosdkTarget(t, tt.mode)
			r, code := discover(t, env, append([]string{"--check"}, args...)...)
			got := map[string]string{}
			for _, c := range r.Checks {
				if c.Status != "pass" {
					got[c.ID] = c.Status
				}
			}
			want := tt.want
			if want == nil {
				want = map[string]string{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("checks other than pass (-want +got):\n%s\n%+v", diff, r.Checks)
			}
			if code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
		})
	}
}

// everythingVersion pins the npm reference server; scripts/lib.sh
// (EVERYTHING_PKG) installs the same version before the tests run.
const everythingVersion = "2026.8.31"

// cacheDir is the mcpkit cache folder, as scripts/lib.sh names it:
// ${MCPKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpkit}.
func cacheDir() (string, error) {
	if c := os.Getenv("MCPKIT_CACHE"); c != "" {
		return c, nil
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "mcpkit"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".cache", "mcpkit"), nil
}

// everythingServer returns the command that runs the npm "everything"
// server on stdio, installing it into the mcpkit cache folder on first
// use (under the cache's install lock, which scripts/lib.sh also takes).
func everythingServer(t *testing.T) []string {
	cache, err := cacheDir()
	if err != nil {
		t.Skipf("no cache folder: %v", err)
	}
	dir := filepath.Join(cache, "everything")
	pkg := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything")
	entry := filepath.Join(pkg, "dist", "index.js")
	node, nodeErr := node22(cache)
	if !installed(pkg, everythingVersion) {
		npm, err := exec.LookPath("npm")
		if err != nil || nodeErr != nil {
			t.Skip("npm and node are needed to install @modelcontextprotocol/server-everything; not found on PATH")
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		unlock, err := lockCache(cache)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		if !installed(pkg, everythingVersion) { // another run may have installed it meanwhile
			cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", dir, "@modelcontextprotocol/server-everything@"+everythingVersion)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("npm install: %v\n%s", err, out)
			}
		}
	}
	if nodeErr != nil {
		t.Skip("node is needed to run @modelcontextprotocol/server-everything; not found on PATH")
	}
	return []string{node, entry, "stdio"}
}

func installed(pkg, version string) bool {
	b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		return false
	}
	var p struct {
		Version string `json:"version"`
	}
	return json.Unmarshal(b, &p) == nil && p.Version == version
}

// TestEverythingServer probes the reference server from npm, a legacy
// (initialize-handshake) stdio server built on the TypeScript SDK.
func TestEverythingServer(t *testing.T) {
	command := everythingServer(t)
	r, code := discover(t, nil, append([]string{"--list", "--"}, command...)...)
	if code != 0 || r.Error != nil {
		t.Fatalf("exit %d, error %+v", code, r.Error)
	}
	if r.Era != "legacy" || r.Transport != "stdio" || r.ProtocolVersion != "2025-11-25" {
		t.Errorf("era %s over %s at %s, want legacy over stdio at 2025-11-25", r.Era, r.Transport, r.ProtocolVersion)
	}
	if r.ServerInfo == nil || r.ServerInfo.Name != "mcp-servers/everything" {
		t.Errorf("serverInfo = %+v", r.ServerInfo)
	}
	// It answers the probe with -32601 before initialize.
	if len(r.Probe) != 2 || !bytes.Contains([]byte(r.Probe[0].Answer), []byte("-32601")) || r.Probe[1].Request != "initialize at 2025-11-25" {
		t.Errorf("probe = %+v", r.Probe)
	}
	if len(r.Lists.Tools) < 10 || len(r.Lists.Prompts) == 0 || len(r.Lists.Resources) == 0 {
		t.Errorf("listed %d tools, %d prompts, %d resources", len(r.Lists.Tools), len(r.Lists.Prompts), len(r.Lists.Resources))
	}
	var names []string
	for _, raw := range r.Lists.Tools {
		var tool struct{ Name string }
		json.Unmarshal(raw, &tool)
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "echo") {
		t.Errorf("tools %v lack echo", names)
	}
	if r.Instructions == "" {
		t.Errorf("no instructions")
	}
	if r.Exit == nil {
		t.Errorf("no exit status")
	}
}
