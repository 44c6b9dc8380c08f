//go:build unix

package gateway_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestBackendGoesAway kills a stdio backend (mcpkit serve --stdio) and
// keeps it from restarting: its tools leave the list, a call to it gets a
// 503 error naming it, the other backend keeps working, and once it can
// start again it comes back by itself.
func TestBackendGoesAway(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcpkit")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/mcpkit").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	pidFile, downFile := filepath.Join(dir, "pid"), filepath.Join(dir, "down")
	script := `test -e "$DOWN" && exit 3; echo $$ >> "$PID"; exec "$BIN" serve --stdio --fixtures`
	local := gateway.Backend{Name: "local", Transport: func() client.Transport {
		return &client.CommandTransport{Command: "/bin/sh", Args: []string{"-c", script},
			Env: []string{"DOWN=" + downFile, "PID=" + pidFile, "BIN=" + bin}}
	}}
	_, c := start(t, []gateway.Backend{local, srv{name: "mem", tools: []string{"t"}}.backend()},
		&gateway.Options{HealthInterval: 20 * time.Millisecond, Bridge: bridge.Options{MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}})
	ctx := context.Background()
	changes := listenTools(t, c)
	if !slices.Contains(toolNames(t, c), "local_test_simple_text") {
		t.Fatalf("tools %q lack local's", toolNames(t, c))
	}
	os.WriteFile(downFile, nil, 0o600)
	// The bridge's probe and call sessions are processes of the script,
	// each named in the pid file: end them all.
	pids, _ := os.ReadFile(pidFile)
	for _, f := range strings.Fields(string(pids)) {
		if pid, _ := strconv.Atoi(f); pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	// Listeners are told: after a list_changed, the list shows it.
	untilChanged := func(what string, cond func() bool) {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case <-changes:
			case <-timeout:
				t.Fatalf("no tools list_changed after which %s", what)
			}
			if cond() {
				return
			}
		}
	}
	untilChanged("local's tools left the list", func() bool {
		return !slices.Contains(toolNames(t, c), "local_test_simple_text")
	})
	_, err := c.CallTool(ctx, "local_test_simple_text", nil)
	var e *mcp.Error
	if !errors.As(err, &e) || !strings.Contains(e.Message, "backend local") {
		t.Errorf("call to the backend that went away: err = %v, want an error naming backend local", err)
	}
	if got := callText(t, c, "mem_t"); got != "mem:t" {
		t.Errorf("the other backend: %q", got)
	}
	os.Remove(downFile)
	untilChanged("local came back", func() bool {
		return slices.Contains(toolNames(t, c), "local_test_simple_text")
	})
	if _, err := c.CallTool(ctx, "local_test_simple_text", nil); err != nil {
		t.Errorf("call after local came back: %v", err)
	}
}
