package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/interop/gosdkserver"
	"github.com/mcpkit/mcpkit/mcp"
)

// gatewayProcess runs `mcpkit gateway --config config` on a free port as
// its own process and returns its URL; when the test ends it sends SIGTERM
// and checks that the gateway exits with 0.
func gatewayProcess(t *testing.T, config string, extra ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(mcpkitBin, append([]string{"gateway", "--config", config, "--addr", "127.0.0.1:0"}, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log lockedBuffer
	found := make(chan string, 1)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteLine(sc.Text())
			if m := mcpkitURL.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("mcpkit gateway did not exit cleanly on SIGTERM: %v\n%s", err, log.String())
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("mcpkit gateway still ran 20 s after SIGTERM")
		}
		if t.Failed() {
			t.Logf("the gateway's log:\n%s", log.String())
		}
	})
	select {
	case u := <-found:
		return u, cmd
	case err := <-exited:
		t.Fatalf("mcpkit gateway exited before listening: %v\n%s", err, log.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("mcpkit gateway logged no url= line within 60 s:\n%s", log.String())
	}
	return "", nil
}

// lockedBuffer collects a process's log lines for a failure message.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) WriteLine(s string) {
	l.mu.Lock()
	l.b.WriteString(s + "\n")
	l.mu.Unlock()
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// listenTools opens a subscriptions/listen stream on c and returns a
// channel that gets a value for each notifications/tools/list_changed.
func listenTools(t *testing.T, c *client.Client) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	changes := make(chan struct{}, 16)
	acked := make(chan error, 1)
	go func() {
		for ev, err := range c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}) {
			if err != nil {
				acked <- err
				return
			}
			if ev.Acknowledged != nil {
				acked <- nil
			}
			if ev.Notification != nil && ev.Notification.Method == "notifications/tools/list_changed" {
				select {
				case changes <- struct{}{}:
				default:
				}
			}
		}
	}()
	if err := <-acked; err != nil {
		t.Fatalf("subscriptions/listen: %v", err)
	}
	return changes
}

// untilChanged waits for list_changed notifications on changes until cond
// holds (it is checked after each one), for at most a minute.
func untilChanged(t *testing.T, changes <-chan struct{}, what string, cond func() bool) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for !cond() {
		select {
		case <-changes:
		case <-timeout:
			t.Fatalf("no tools list_changed after which %s", what)
		}
	}
}

// gatewayCall is one tool call of the mixed gateway test and the text its
// result must contain.
type gatewayCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	want      string
}

// tsGatewayReport is what testdata/gateway-client.mjs prints.
type tsGatewayReport struct {
	Era             string
	ProtocolVersion string
	Server          struct{ Name string }
	Tools           []string
	Samplings       []string
	Calls           []struct {
		Name, Text, Error string
		IsError           bool
	}
	Error string
}

// TestGatewayMix runs one `mcpkit gateway` process in front of a mix of
// real servers: server-everything from npm (stdio, legacy, on the
// TypeScript SDK), `mcpkit serve` (HTTP, modern, its own process) and a
// go-sdk v1.8.0 server with sessions (Streamable HTTP, legacy). The mcpkit
// client and the TypeScript SDK 2.x client list the merged tools and call
// one of each server, and answer server-everything's sampling request,
// which reaches them as an input_required round. Then server-everything is
// killed and kept down: its tools leave the list, a call to it gets an
// error naming it, the others work, and it comes back by itself. Last, a
// server added to the file appears in the list after SIGHUP.
func TestGatewayMix(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses signals and /bin/sh")
	}
	everything := everythingServer(t) // node ENTRY stdio
	serveURL := mcpkitHTTP(t).url
	h, err := gosdkserver.Handler(gosdkserver.HTTPStateful)
	if err != nil {
		t.Fatal(err)
	}
	gosdk := httptest.NewServer(h)
	t.Cleanup(gosdk.Close)

	// server-everything runs through a shell that records its pid and
	// refuses to start while the file DOWN exists, so that the test can
	// kill it and keep it down for a while.
	dir := t.TempDir()
	downFile, pidFile := filepath.Join(dir, "down"), filepath.Join(dir, "pids")
	script := `test -e "$DOWN" && exit 3; echo $$ >> "$PIDS"; exec "$NODE" "$ENTRY" stdio`
	config := filepath.Join(dir, "gateway.yaml")
	servers := fmt.Sprintf(`servers:
  everything:
    command: [/bin/sh, -c, %q]
    env: {DOWN: %q, PIDS: %q, NODE: %q, ENTRY: %q}
  mcpkit:
    url: %s
  gosdk:
    url: %s
`, script, downFile, pidFile, everything[0], everything[1], serveURL, gosdk.URL)
	if err := os.WriteFile(config, []byte(servers), 0o600); err != nil {
		t.Fatal(err)
	}
	url, gw := gatewayProcess(t, config)

	ctx := context.Background()
	var mu sync.Mutex
	var prompts []string
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: url}, &client.Options{Eras: client.ModernOnly, NoCache: true,
		Sample: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			mu.Lock()
			prompts = append(prompts, p.Messages[0].Content[0].(*mcp.TextContent).Text)
			mu.Unlock()
			return &mcp.CreateMessageResult{Model: "go-model", Content: []mcp.Content{&mcp.TextContent{Text: "a sampled answer from go"}}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if c.Era() != mcp.EraModern || c.ServerInfo().Name != "mcpkit-gateway" {
		t.Fatalf("front: %s %+v, want the gateway, modern", c.Era(), c.ServerInfo())
	}
	for _, section := range []string{"## everything", "## gosdk"} {
		if !strings.Contains(c.Instructions(), section) {
			t.Errorf("instructions %q lack the section %q", c.Instructions(), section)
		}
	}

	calls := []gatewayCall{
		{Name: "everything_echo", Arguments: map[string]any{"message": "héllo"}, want: "Echo: héllo"},
		{Name: "mcpkit_echo", Arguments: map[string]any{"text": "héllo"}, want: "héllo"},
		{Name: "gosdk_echo2", Arguments: map[string]any{"text": "héllo"}, want: "héllo"},
	}
	sampling := gatewayCall{Name: "everything_trigger-sampling-request", Arguments: map[string]any{"prompt": "hello"}}
	names := toolNames(t, c)
	for _, call := range append(calls, sampling) {
		if !slices.Contains(names, call.Name) {
			t.Errorf("the merged tools lack %s: %q", call.Name, names)
		}
	}

	t.Run("mcpkit client", func(t *testing.T) {
		for _, call := range calls {
			res, err := c.CallTool(ctx, call.Name, call.Arguments)
			if err != nil {
				t.Errorf("%s: %v", call.Name, err)
				continue
			}
			if got := textOf(res.Content); got != call.want {
				t.Errorf("%s answered %q, want %q", call.Name, got, call.want)
			}
		}
		res, err := c.CallTool(ctx, sampling.Name, sampling.Arguments)
		if err != nil {
			t.Fatalf("%s: %v", sampling.Name, err)
		}
		if text := textOf(res.Content); !strings.Contains(text, "a sampled answer from go") || !strings.Contains(text, "go-model") {
			t.Errorf("%s answered %q, without the sampled answer", sampling.Name, text)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(prompts) != 1 || !strings.Contains(prompts[0], "hello") {
			t.Errorf("the client was asked to sample %q, want one prompt with hello", prompts)
		}
	})

	t.Run("TypeScript client", func(t *testing.T) {
		node, script := tsClientScript(t, "testdata/gateway-client.mjs")
		arg, _ := json.Marshal(append(calls, sampling))
		cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(cctx, node, script, url, string(arg))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the TypeScript client: %v\n%s", err, stderr.String())
		}
		var r tsGatewayReport
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("the TypeScript client printed %q: %v", out, err)
		}
		if r.Error != "" {
			t.Fatalf("the TypeScript client failed: %s", r.Error)
		}
		if r.Era != "modern" || r.ProtocolVersion != "2026-07-28" || r.Server.Name != "mcpkit-gateway" {
			t.Errorf("era %q version %q server %q, want modern 2026-07-28 mcpkit-gateway", r.Era, r.ProtocolVersion, r.Server.Name)
		}
		for _, call := range append(calls, sampling) {
			if !slices.Contains(r.Tools, call.Name) {
				t.Errorf("the TypeScript client's tools lack %s: %q", call.Name, r.Tools)
			}
		}
		if len(r.Calls) != len(calls)+1 {
			t.Fatalf("calls %+v, want %d", r.Calls, len(calls)+1)
		}
		for i, call := range calls {
			if got := r.Calls[i]; got.Error != "" || got.IsError || got.Text != call.want {
				t.Errorf("%s: %+v, want %q", call.Name, got, call.want)
			}
		}
		if got := r.Calls[len(calls)]; got.Error != "" || got.IsError || !strings.Contains(got.Text, "a sampled answer from ts") {
			t.Errorf("%s: %+v, want the sampled answer", sampling.Name, got)
		}
		if len(r.Samplings) != 1 || !strings.Contains(r.Samplings[0], "hello") {
			t.Errorf("the TypeScript client was asked to sample %q, want one prompt with hello", r.Samplings)
		}
	})

	changes := listenTools(t, c)
	has := func(name string) bool { return slices.Contains(toolNames(t, c), name) }

	t.Run("backend killed", func(t *testing.T) {
		if err := os.WriteFile(downFile, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		// Every server-everything process the gateway started (one per
		// capability set of the callers): each wrote its pid.
		pids, _ := os.ReadFile(pidFile)
		killed := 0
		for _, f := range strings.Fields(string(pids)) {
			if pid, _ := strconv.Atoi(f); pid > 0 && syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
		if killed == 0 {
			t.Fatalf("no server-everything process to kill (pids %q)", pids)
		}
		untilChanged(t, changes, "everything's tools left the list", func() bool { return !has("everything_echo") })
		if names := toolNames(t, c); !slices.Contains(names, "mcpkit_echo") || !slices.Contains(names, "gosdk_echo2") {
			t.Errorf("with everything down, the list lost the others' tools: %q", names)
		}
		_, err := c.CallTool(ctx, "everything_echo", map[string]any{"message": "x"})
		var e *mcp.Error
		if !errors.As(err, &e) || !strings.Contains(e.Message, "backend everything") {
			t.Errorf("call to the killed backend: %v, want an error naming backend everything", err)
		}
		for _, call := range calls[1:] {
			if res, err := c.CallTool(ctx, call.Name, call.Arguments); err != nil || textOf(res.Content) != call.want {
				t.Errorf("%s with everything down: %v", call.Name, err)
			}
		}
		os.Remove(downFile)
		untilChanged(t, changes, "everything came back", func() bool { return has("everything_echo") })
		res, err := c.CallTool(ctx, calls[0].Name, calls[0].Arguments)
		if err != nil || textOf(res.Content) != calls[0].want {
			t.Errorf("everything_echo after it came back: %v", err)
		}
	})

	t.Run("backend added by SIGHUP", func(t *testing.T) {
		added := servers + fmt.Sprintf("  added:\n    command: [%q, serve, --stdio, --fixtures]\n", mcpkitBin)
		if err := os.WriteFile(config, []byte(added), 0o600); err != nil {
			t.Fatal(err)
		}
		if has("added_echo") {
			t.Fatal("added_echo is listed before the reload")
		}
		gw.Process.Signal(syscall.SIGHUP)
		untilChanged(t, changes, "the added server's tools are listed", func() bool { return has("added_echo") })
		res, err := c.CallTool(ctx, "added_echo", map[string]any{"text": "new"})
		if err != nil || textOf(res.Content) != "new" {
			t.Errorf("added_echo: %v", err)
		}
		// The others were not restarted: their tools are still there.
		for _, call := range calls {
			if res, err := c.CallTool(ctx, call.Name, call.Arguments); err != nil || textOf(res.Content) != call.want {
				t.Errorf("%s after the reload: %v", call.Name, err)
			}
		}
	})
}
