// Package clients measures MCP clients side by side: each client calls the
// same `mcpkit serve` (the demo server of cmd/mcpkit, built from this
// repository) at revision 2026-07-28, with tools/call of its echo tool,
// over Streamable HTTP and over stdio. The server runs as its own process,
// so the allocations a benchmark reports are the client's alone.
//
// The cases are Go benchmarks (go test -bench . ./clients) and the
// command cmd/benchclients, which runs them interleaved and prints the
// ratios of mcpkit's client to go-sdk's.
package clients

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// Version is the protocol revision every client speaks.
const Version = "2026-07-28"

// EchoText is what every call sends and expects back.
const EchoText = "hello, benchmark"

// Caller is one connected client: Call does one tools/call of echo and
// returns the text of the result.
type Caller interface {
	Call(ctx context.Context) (string, error)
	Close() error
}

// Client names a client implementation and connects it to a server.
type Client struct {
	Name string
	// HTTP connects to a Streamable HTTP endpoint; Stdio spawns argv and
	// talks to it over stdin and stdout.
	HTTP  func(ctx context.Context, url string) (Caller, error)
	Stdio func(ctx context.Context, argv []string) (Caller, error)
}

// Clients are the clients measured, go-sdk first (the baseline).
var Clients []Client

func register(c Client) { Clients = append(Clients, c) }

// Transports are the transports measured.
var Transports = []string{"http", "stdio"}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// MCPKit builds cmd/mcpkit of this repository (once per process) into a
// temporary folder and returns its path; Cleanup removes it.
func MCPKit() (string, error) {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpkit-benchclients-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "mcpkit")
		root, err := repoRoot()
		if err != nil {
			buildErr = err
			return
		}
		gocmd, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("the go command is not on PATH: %w", err)
			return
		}
		cmd := exec.Command(gocmd, "build", "-o", binPath, "./cmd/mcpkit")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building cmd/mcpkit: %v\n%s", err, out)
		}
	})
	return binPath, buildErr
}

// Cleanup removes what MCPKit built.
func Cleanup() {
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
}

// repoRoot finds the root module's folder: the nearest parent of the
// working directory whose go.mod declares github.com/mcpkit/mcpkit.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && regexp.MustCompile(`(?m)^module github.com/mcpkit/mcpkit$`).Match(b) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no github.com/mcpkit/mcpkit go.mod above the working directory")
		}
		dir = parent
	}
}

// StdioCommand is the command of `mcpkit serve --stdio`.
func StdioCommand() ([]string, error) {
	bin, err := MCPKit()
	if err != nil {
		return nil, err
	}
	return []string{bin, "serve", "--fixtures", "--stdio"}, nil
}

// Server is a running `mcpkit serve` on a free 127.0.0.1 port.
type Server struct {
	URL    string
	cmd    *exec.Cmd
	exited chan error
}

var urlLine = regexp.MustCompile(`url="?(http://[^" ]+/mcp)`)

// StartHTTP starts `mcpkit serve` on a free 127.0.0.1 port; Stop ends it.
func StartHTTP() (*Server, error) {
	bin, err := MCPKit()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--fixtures", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{cmd: cmd, exited: make(chan error, 1)}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := urlLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stderr)
		s.exited <- cmd.Wait()
	}()
	select {
	case s.URL = <-found:
		return s, nil
	case err := <-s.exited:
		return nil, fmt.Errorf("mcpkit serve exited before listening: %v", err)
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-s.exited
		return nil, errors.New("mcpkit serve logged no url= line within 20 s")
	}
}

// Stop ends the server (SIGTERM, then SIGKILL after 5 s).
func (s *Server) Stop() error {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		return err
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		return <-s.exited
	}
}

// Connect connects c over transport ("http" with url, or "stdio").
func Connect(ctx context.Context, c Client, transport, url string) (Caller, error) {
	switch transport {
	case "http":
		return c.HTTP(ctx, url)
	case "stdio":
		argv, err := StdioCommand()
		if err != nil {
			return nil, err
		}
		return c.Stdio(ctx, argv)
	}
	return nil, fmt.Errorf("unknown transport %q", transport)
}
