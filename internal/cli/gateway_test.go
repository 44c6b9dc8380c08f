package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcp"
)

// startListening starts cmd and returns the URL its url= log line names;
// the process is killed at the end of the test.
func startListening(t *testing.T, cmd *exec.Cmd) string {
	url, _ := startLogging(t, cmd)
	return url
}

// startLogging is startListening that also returns the process's later
// log lines.
func startLogging(t *testing.T, cmd *exec.Cmd) (string, <-chan string) {
	t.Helper()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urlRe := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)
	sc := bufio.NewScanner(stderr)
	var log strings.Builder
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
			lines := make(chan string, 64)
			go func() { // keep the process's stderr flowing
				for sc.Scan() {
					select {
					case lines <- sc.Text():
					default: // nobody reads them
					}
				}
			}()
			return m[1], lines
		}
	}
	t.Fatalf("%q did not log the URL it listens on:\n%s", cmd.Args, log.String())
	return "", nil
}

// mcpkit gateway with two backends, one a stdio command and one a URL:
// the merged list names each backend's tools SERVER_NAME, a call reaches
// the right one, and SIGTERM ends it with 0.
func TestGatewayCommand(t *testing.T) {
	bin := buildMcpkit(t)
	httpURL := startListening(t, exec.Command(bin, "serve", "--fixtures", "--addr", "127.0.0.1:0"))
	config := filepath.Join(t.TempDir(), "gateway.yaml")
	os.WriteFile(config, []byte(fmt.Sprintf(`servers:
  local:
    command: [%q, serve, --stdio, --fixtures]
  remote:
    url: %s
    headers: {X-Token: "${MCPKIT_TEST_GATEWAY_TOKEN}"}
`, bin, httpURL)), 0o600)
	gw := exec.Command(bin, "gateway", "--config", config, "--addr", "127.0.0.1:0")
	gw.Env = append(os.Environ(), "MCPKIT_TEST_GATEWAY_TOKEN=t0k")
	url := startListening(t, gw)

	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: url}, &client.Options{Eras: client.ModernOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.ServerInfo().Name != "mcpkit-gateway" {
		t.Errorf("serverInfo = %+v, want the gateway's", c.ServerInfo())
	}
	var names []string
	for tool, err := range c.ListTools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	for _, want := range []string{"local_test_simple_text", "remote_test_simple_text"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %q lack %q", names, want)
		}
	}
	if slices.Contains(names, "test_simple_text") {
		t.Errorf("tools %q hold an unprefixed name", names)
	}
	for _, name := range []string{"local_test_simple_text", "remote_test_simple_text"} {
		res, err := c.CallTool(ctx, name, nil)
		if err != nil || len(res.Content) != 1 {
			t.Errorf("call %s = %+v, %v", name, res, err)
		}
	}
	gw.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- gw.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("gateway exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("gateway did not exit after SIGTERM")
	}
}

// A configuration error is refused at start-up, naming the file and line,
// with the usage exit code.
func TestGatewayBadConfig(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "gateway.yaml")
	os.WriteFile(config, []byte("servers:\n  files:\n    url: http://127.0.0.1:1/mcp\n    headers: {Authorization: \"Bearer ${MCPKIT_TEST_UNSET_TOKEN}\"}\n"), 0o600)
	scoped := filepath.Join(dir, "scoped.yaml")
	os.WriteFile(scoped, []byte("servers:\n  open:\n    url: http://127.0.0.1:1/mcp\n  files:\n    url: http://127.0.0.1:1/mcp\n    tool_scopes: {write: [files:write]}\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gateway"}, "--config FILE is required"},
		{[]string{"gateway", "--config", config}, config + ":4: server files: headers: Authorization: the variable MCPKIT_TEST_UNSET_TOKEN is not set"},
		{[]string{"gateway", "--config", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		// Scopes need principals: refused with --stdio, and over HTTP without --auth-issuer.
		{[]string{"gateway", "--config", scoped, "--stdio"}, scoped + `:6: server "files": scopes need callers with OAuth access tokens, and a --stdio front has none`},
		{[]string{"gateway", "--config", scoped, "--addr", "127.0.0.1:0"}, scoped + `:6: server "files": scopes need callers with OAuth access tokens; add --auth-issuer`},
	} {
		var out strings.Builder
		if code := run(tc.args, strings.NewReader(""), io.Discard, &out); code != 2 || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, out.String(), tc.want)
		}
	}
}

// SIGHUP reloads the configuration: a server added to the file shows up
// in the merged list, and a bad file is refused with the old one kept.
func TestGatewayReloadOnSIGHUP(t *testing.T) {
	bin := buildMcpkit(t)
	config := filepath.Join(t.TempDir(), "gateway.yaml")
	one := fmt.Sprintf("servers:\n  one:\n    command: [%q, serve, --stdio, --fixtures]\n", bin)
	os.WriteFile(config, []byte(one), 0o600)
	gw := exec.Command(bin, "gateway", "--config", config, "--addr", "127.0.0.1:0")
	url, lines := startLogging(t, gw)
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: url}, &client.Options{Eras: client.ModernOnly, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	has := func(name string) bool {
		for tool, err := range c.ListTools(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if tool.Name == name {
				return true
			}
		}
		return false
	}
	if !has("one_test_simple_text") || has("two_test_simple_text") {
		t.Fatal("before the reload: want one's tools only")
	}
	waitLine := func(want string) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l := <-lines:
				if strings.Contains(l, want) {
					return
				}
			case <-timeout:
				t.Fatalf("no log line with %q", want)
			}
		}
	}
	os.WriteFile(config, []byte(one+fmt.Sprintf("  two:\n    command: [%q, serve, --stdio, --fixtures]\n", bin)), 0o600)
	gw.Process.Signal(syscall.SIGHUP)
	waitLine("gateway: reloaded")
	if !has("two_test_simple_text") || !has("one_test_simple_text") {
		t.Error("after the reload: want the tools of one and two")
	}
	os.WriteFile(config, []byte("servers:\n  Bad:\n    command: [x]\n"), 0o600)
	gw.Process.Signal(syscall.SIGHUP)
	waitLine("reload refused")
	if !has("two_test_simple_text") {
		t.Error("after a refused reload: two's tools are gone")
	}
}

// --watch reloads a changed file without a signal.
func TestGatewayWatch(t *testing.T) {
	bin := buildMcpkit(t)
	config := filepath.Join(t.TempDir(), "gateway.yaml")
	one := fmt.Sprintf("servers:\n  one:\n    command: [%q, serve, --stdio, --fixtures]\n", bin)
	os.WriteFile(config, []byte(one), 0o600)
	url, lines := startLogging(t, exec.Command(bin, "gateway", "--config", config, "--addr", "127.0.0.1:0", "--watch", "50ms"))
	os.WriteFile(config, []byte(strings.Replace(one, "one:", "renamed:", 1)), 0o600)
	timeout := time.After(30 * time.Second)
	for reloaded := false; !reloaded; {
		select {
		case l := <-lines:
			reloaded = strings.Contains(l, "gateway: reloaded")
		case <-timeout:
			t.Fatal("no reload after the file changed")
		}
	}
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: url}, &client.Options{Eras: client.ModernOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, "renamed_test_simple_text", nil); err != nil {
		t.Errorf("call through the reloaded name: %v", err)
	}
}

// --log-requests names the backend a gateway routed a call to.
func TestGatewayLogRequestsNamesBackend(t *testing.T) {
	backend := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "files", Version: "1"}, Logger: slog.New(slog.DiscardHandler)})
	mcp.AddTool(backend, &mcp.Tool{Name: "read", Description: "Reads."}, func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
		return "read", nil
	})
	ts := httptest.NewServer(backend.NewHTTPServer("", "/mcp").Handler)
	defer ts.Close()
	config := filepath.Join(t.TempDir(), "gateway.yaml")
	os.WriteFile(config, []byte("servers:\n  files:\n    url: "+ts.URL+"/mcp\n"), 0o600)
	in := string(mcpwire.Request{Method: "tools/call", Params: `{"name":"files_read","arguments":{}}`}.Bytes()) + "\n"
	var stdout, stderr strings.Builder
	if code := run([]string{"gateway", "--config", config, "--stdio", "--log-requests"}, strings.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var line string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, `msg="mcp request"`) && strings.Contains(l, "method=tools/call") {
			line = l
		}
	}
	if !strings.Contains(line, "name=files_read") || !strings.Contains(line, "outcome=complete") || !strings.Contains(line, "mcp.backend=files") {
		t.Errorf("access log line %q, want the call with mcp.backend=files\n%s", line, stderr.String())
	}
}
