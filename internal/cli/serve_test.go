package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcpwire"
)

const discoverReq = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// buildMcpkit builds the command once per test binary.
func buildMcpkit(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpkit")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/mcpkit").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestServeHTTPAndGracefulShutdown(t *testing.T) {
	bin := buildMcpkit(t)
	cmd := exec.Command(bin, "serve", "--fixtures", "--addr", "127.0.0.1:0")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	urlRe := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)
	sc := bufio.NewScanner(stderr)
	var url string
	for sc.Scan() {
		if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	if url == "" {
		t.Fatal("serve did not log the URL it listens on")
	}
	go io.Copy(io.Discard, stderr)
	resp := mcpwire.Send(t, context.Background(), url, mcpwire.Request{Method: "server/discover"})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"supportedVersions":["2026-07-28"`)) {
		t.Fatalf("discover: %d %s", resp.StatusCode, body)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit after SIGTERM")
	}
}

func TestServeStdioExitsOnEOF(t *testing.T) {
	bin := buildMcpkit(t)
	cmd := exec.Command(bin, "serve", "--fixtures", "--stdio")
	cmd.Stdin = strings.NewReader(discoverReq + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("serve --stdio: %v\n%s", err, stderr.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("serve --stdio took %v to exit after EOF", d)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `{"jsonrpc":"2.0","id":1,"result":{`) {
		t.Fatalf("stdout holds more than the one protocol message: %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "serving MCP on stdio") {
		t.Errorf("logs did not go to stderr: %q", stderr.String())
	}
}

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"bogus"}, nil, &out, &errb); code != 2 {
		t.Errorf("unknown command: exit %d, want 2", code)
	}
	if code := run([]string{"help"}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "mcpkit serve") {
		t.Errorf("help: exit %d, output %q", code, out.String())
	}
}

const listenReq = `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}`

// wantGraceful checks the SubscriptionsListenResult of listen request 9.
func wantGraceful(t *testing.T, line string) {
	t.Helper()
	if !strings.HasPrefix(line, `{"jsonrpc":"2.0","id":9,"result":{"resultType":"complete"`) || !strings.Contains(line, `"io.modelcontextprotocol/subscriptionId":9`) {
		t.Errorf("got %q, want the graceful completion of subscription 9", line)
	}
}

// On SIGTERM, an open listen stream gets its graceful completion result
// before the server exits, well within the shutdown timeout.
func TestServeListenGracefulOnSIGTERM(t *testing.T) {
	bin := buildMcpkit(t)
	t.Run("http", func(t *testing.T) {
		cmd := exec.Command(bin, "serve", "--fixtures", "--addr", "127.0.0.1:0")
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		urlRe := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)
		sc := bufio.NewScanner(stderr)
		var url string
		for url == "" && sc.Scan() {
			if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
				url = m[1]
			}
		}
		go io.Copy(io.Discard, stderr)
		resp := mcpwire.Send(t, context.Background(), url, mcpwire.Request{ID: "9", Method: "subscriptions/listen", Params: `{"notifications":{"toolsListChanged":true}}`})
		defer resp.Body.Close()
		events := bufio.NewScanner(resp.Body)
		next := func() string {
			for events.Scan() {
				if d, ok := strings.CutPrefix(events.Text(), "data: "); ok {
					return d
				}
			}
			return ""
		}
		if ack := next(); !strings.Contains(ack, "acknowledged") {
			t.Fatalf("first event %q", ack)
		}
		start := time.Now()
		cmd.Process.Signal(syscall.SIGTERM)
		wantGraceful(t, next())
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve exited with %v after SIGTERM, want 0", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("serve took %v to exit with a listen stream open", d)
		}
	})
	for _, closeInput := range []bool{false, true} {
		t.Run(map[bool]string{false: "stdio", true: "stdio, input closed with the signal"}[closeInput], func(t *testing.T) {
			cmd := exec.Command(bin, "serve", "--fixtures", "--stdio")
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			io.WriteString(stdin, listenReq+"\n")
			lines := bufio.NewScanner(stdout)
			if !lines.Scan() || !strings.Contains(lines.Text(), "acknowledged") {
				t.Fatalf("first line %q", lines.Text())
			}
			if closeInput {
				// A client killed with its process group: its end of the
				// pipe closes as the signal arrives.
				stdin.Close()
			}
			cmd.Process.Signal(syscall.SIGTERM)
			if !lines.Scan() {
				t.Fatal("no line after SIGTERM")
			}
			wantGraceful(t, lines.Text())
			if err := cmd.Wait(); err != nil {
				t.Errorf("serve --stdio exited with %v after SIGTERM, want 0", err)
			}
		})
	}
}

// The core build refuses --redis and says which build has it.
func TestServeRedisNeedsRedisBuild(t *testing.T) {
	var stderr bytes.Buffer
	code := serveContext(context.Background(), []string{"--redis", "redis://127.0.0.1:6379"}, strings.NewReader(""), io.Discard, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "full/cmd/mcpkit") {
		t.Errorf("exit %d, stderr %q; want 2 and a pointer to the redis build", code, stderr.String())
	}
}
