//go:build unix

package client_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/realtime"
)

// wrapperServer is the "wrapper" mode of the test binary: like npx, it
// starts a child in its own process group (which outlives stdin EOF),
// writes the child's pid to MCPKIT_CLIENT_TEST_PIDFILE, serves stdio and
// exits when its stdin closes, leaving the child running.
func wrapperServer() {
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), "MCPKIT_CLIENT_TEST_SERVER=sleep")
	if err := child.Start(); err != nil {
		os.Exit(2)
	}
	os.WriteFile(os.Getenv("MCPKIT_CLIENT_TEST_PIDFILE"), []byte(strconv.Itoa(child.Process.Pid)), 0o600)
	testServer(nil).ServeStdio(context.Background(), os.Stdin, os.Stdout)
	os.Exit(0)
}

// TestStdioCloseEndsGroup: the server exits by itself when Close closes
// its stdin, but a child it started lives on. Close ends the child too.
func TestStdioCloseEndsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	tr := selfCommand("wrapper")
	// The race detector's runtime sleeps a second before a process exits.
	tr.Env = append(tr.Env, "MCPKIT_CLIENT_TEST_PIDFILE="+pidFile, "GORACE=atexit_sleep_ms=0")
	tr.Grace = 5 * time.Second
	c, err := client.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile) // written before the server answered
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if e, ok := c.ProcessExit(); !ok || e.Forced != "" {
		t.Errorf("Exit = %+v, %v; want the server to have exited by itself", e, ok)
	}
	// The kernel and init own the time the child takes to die and be reaped.
	realtime.Poll(t, 10*time.Second, "the server's child to end", func() bool { return !running(pid) })
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return err != nil && !os.IsNotExist(err)
	}
	// pid (comm) STATE ...: the state follows the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
