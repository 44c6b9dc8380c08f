package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// mcpkit bridge -- mcpkit serve --stdio: it logs the url= line, serves the
// backend's tools as 2026-07-28 and exits 0 on SIGTERM, ending the backend.
func TestBridgeCommand(t *testing.T) {
	bin := buildMcpkit(t)
	cmd := exec.Command(bin, "bridge", "--addr", "127.0.0.1:0", "--", bin, "serve", "--stdio", "--fixtures", "--log-requests")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	urlRe := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)
	sc := bufio.NewScanner(stderr)
	var url string
	var log strings.Builder
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	if url == "" {
		t.Fatalf("bridge did not log the URL it listens on:\n%s", log.String())
	}
	tagged := make(chan struct{})
	go func() {
		seen := strings.Contains(log.String(), `msg="backend stderr"`)
		if seen {
			close(tagged)
		}
		for sc.Scan() {
			if !seen && strings.Contains(sc.Text(), `msg="backend stderr"`) {
				seen = true
				close(tagged)
			}
		}
	}()
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: url}, &client.Options{Eras: client.ModernOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.ServerInfo().Name != "mcpkit-demo" {
		t.Errorf("serverInfo = %+v, want the backend's", c.ServerInfo())
	}
	res, err := c.CallTool(ctx, "test_simple_text", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("result = %+v", res)
	}
	select { // the backend logged the requests (--log-requests) on its stderr
	case <-tagged:
	case <-time.After(10 * time.Second):
		t.Error("the backend's stderr is not in the log, tagged")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("bridge exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("bridge did not exit after SIGTERM")
	}
}

func TestBridgeUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"not-a-url"}, {"a", "b"}} {
		var out strings.Builder
		if code := run(append([]string{"bridge"}, args...), strings.NewReader(""), io.Discard, &out); code != 2 {
			t.Errorf("bridge %q: exit %d, want 2 (usage)", args, code)
		}
	}
}

// mcpkit bridge --stdio URL: a host that only spawns stdio servers reaches
// a remote server (here mcpkit serve over HTTP) through the bridge.
func TestBridgeStdioToURL(t *testing.T) {
	bin := buildMcpkit(t)
	srv := exec.Command(bin, "serve", "--fixtures", "--addr", "127.0.0.1:0")
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
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
		t.Fatal("serve did not log its URL")
	}
	go io.Copy(io.Discard, stderr)
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.CommandTransport{Command: bin, Args: []string{"bridge", "--stdio", url}, Stderr: io.Discard}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.ServerInfo().Name != "mcpkit-demo" {
		t.Errorf("serverInfo = %+v, want the remote server's", c.ServerInfo())
	}
	res, err := c.CallTool(ctx, "test_simple_text", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 {
		t.Errorf("result = %+v", res)
	}
}

// A backend chooses the length of its stderr lines: the log gets at most
// maxStderrLine bytes of each, however long the line.
func TestStderrLogBounded(t *testing.T) {
	var out bytes.Buffer
	w := &stderrLog{log: slog.New(slog.NewJSONHandler(&out, nil)), cmd: "backend"}
	w.Write(bytes.Repeat([]byte("x"), 1<<20))
	w.Write([]byte(strings.Repeat("y", 100<<10) + "\n"))
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if len(line) > maxStderrLine+200 {
			t.Errorf("a logged stderr line of %d bytes, want at most about %d", len(line), maxStderrLine)
		}
	}
	if out.Len() == 0 {
		t.Error("nothing logged")
	}
}

// --tasks and --task-tool: the modes, the input-starts-task suffix, and a
// clear error for anything else.
func TestBridgeTaskFlags(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bridge.TaskTool
		err  bool
	}{
		{in: "slow=optional", want: bridge.TaskTool{Support: mcp.TaskOptional}},
		{in: "slow=required,input-starts-task", want: bridge.TaskTool{Support: mcp.TaskRequired, InputStartsTask: true}},
		{in: "slow=none", want: bridge.TaskTool{}},
		{in: "slow=sometimes", err: true},
		{in: "slow", err: true},
		{in: "=optional", err: true},
		{in: "slow=optional,other", err: true},
	} {
		var f taskToolsFlag
		err := f.Set(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("--task-tool %s: err %v, want error %v", tt.in, err, tt.err)
			continue
		}
		if err == nil && f.m["slow"] != tt.want {
			t.Errorf("--task-tool %s = %+v, want %+v", tt.in, f.m["slow"], tt.want)
		}
	}
	var f taskSupportFlag
	if err := f.Set("required"); err != nil || f.v != mcp.TaskRequired || f.String() != "required" {
		t.Errorf("--tasks required = %v %v", f.v, err)
	}
	if err := f.Set("yes"); err == nil {
		t.Error("--tasks yes: no error")
	}
}
