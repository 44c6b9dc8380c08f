package client_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestMain doubles as a stdio server: with MCPKIT_CLIENT_TEST_SERVER set,
// the test binary serves testServer on stdin and stdout ("crash" exits at
// once after a line on stderr).
func TestMain(m *testing.M) {
	switch os.Getenv("MCPKIT_CLIENT_TEST_SERVER") {
	case "serve":
		testServer(nil).ServeStdio(context.Background(), os.Stdin, os.Stdout)
		os.Exit(0)
	case "wrong-id", "garbage", "huge", "deaf":
		hostileStdio(os.Getenv("MCPKIT_CLIENT_TEST_SERVER"))
		os.Exit(0)
	case "wrapper":
		wrapperServer()
	case "sleep":
		time.Sleep(time.Hour)
		os.Exit(0)
	case "crash":
		os.Stderr.WriteString("fatal: no config file\n")
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func selfCommand(mode string) *client.CommandTransport {
	return &client.CommandTransport{Command: os.Args[0], Env: []string{"MCPKIT_CLIENT_TEST_SERVER=" + mode}}
}

func TestStdio(t *testing.T) {
	ctx := context.Background()
	for _, era := range []mcp.Era{mcp.EraModern, mcp.EraLegacy} {
		t.Run(string(era), func(t *testing.T) {
			c, err := client.Connect(ctx, selfCommand("serve"), &client.Options{Eras: only(era)})
			if err != nil {
				t.Fatal(err)
			}
			var got []client.Progress
			out, err := client.CallToolAs[addOut](ctx, c, "add", addIn{A: 1, B: 2}, client.WithProgress(func(p client.Progress) { got = append(got, p) }))
			if err != nil || out.Sum != 3 {
				t.Fatalf("add = %+v, %v", out, err)
			}
			if len(got) != 1 {
				t.Errorf("progress = %+v, want one notification", got)
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			if _, err := c.CallTool(ctx, "add", addIn{}); !errors.Is(err, client.ErrClosed) {
				t.Errorf("a call after Close = %v, want ErrClosed", err)
			}
		})
	}
}

func TestStdioCrashShowsStderr(t *testing.T) {
	_, err := client.Connect(context.Background(), selfCommand("crash"), nil)
	if err == nil {
		t.Fatal("Connect to a crashing server succeeded")
	}
	if !strings.Contains(err.Error(), "no config file") {
		t.Errorf("error %q does not show the server's stderr", err)
	}
}

// TestStdioServerStopsReading: after server/discover the server never
// reads its stdin again. A call whose arguments overfill the pipe gives up
// when its context ends (as `mcpkit tools --timeout` does), and Close
// returns, ending the process.
func TestStdioServerStopsReading(t *testing.T) {
	tr := selfCommand("deaf")
	tr.Grace = 50 * time.Millisecond
	c, err := client.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	called := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "echo", map[string]any{"text": strings.Repeat("x", 4<<20)})
		called <- err
	}()
	select {
	case err := <-called:
		if !errors.Is(err, client.ErrTimeout) {
			t.Errorf("CallTool = %v, want ErrTimeout", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("CallTool still waits a minute after its timeout")
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Close still waits after a minute")
	}
}
