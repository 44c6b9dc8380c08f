package doccheck

import (
	"bufio"
	"bytes"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/internal/cli"
)

// loopbackURL matches the URL a server prints once it listens.
var loopbackURL = regexp.MustCompile(`http://(?:127\.0\.0\.1|localhost|\[::1\]):\d+/\S*`)

var update = flag.Bool("update", false, "rewrite the transcripts of the docs from the real runs")

// TestGettingStarted follows the README's "Getting started" as a new user would, in a module
// outside the repository: it runs the shell blocks (go mod init; main.go; go mod edit -require
// -replace, go mod tidy) with the repository as ../mcpkit and the module cache as the module
// proxy (GOPROXY=file://...: offline, and like the real proxy it does not have mcpkit), builds
// it, serves it on HTTP, calls its tool with `mcpkit call` as the README shows, stops it with
// SIGTERM and checks the transcript; then it does the same on stdio. The "nested" subtest checks
// the error the README shows for a nested module without its replace line, and the command that
// prints those lines.
func TestGettingStarted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module outside the repository; not in -short")
	}
	root, blocks := allBlocks(t)
	script, err := Named(blocks, "script", "getting-started")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := Named(blocks, "program", "hello")
	if err != nil {
		t.Fatal(err)
	}
	require, err := Named(blocks, "script", "getting-started-require")
	if err != nil {
		t.Fatal(err)
	}
	nested, err := Named(blocks, "script", "getting-started-nested")
	if err != nil {
		t.Fatal(err)
	}
	transcript, err := Named(blocks, "transcript", "getting-started")
	if err != nil {
		t.Fatal(err)
	}

	work := t.TempDir()
	if err := os.Symlink(root, filepath.Join(work, "mcpkit")); err != nil {
		t.Fatal(err)
	}
	hello := filepath.Join(work, "hello")
	if out, err := runScript(t, work, script); err != nil {
		t.Fatalf("%s: the Getting started commands failed: %v\n%s", script, err, out)
	}
	if err := os.WriteFile(filepath.Join(hello, "main.go"), []byte(prog.Text), 0o644); err != nil {
		t.Fatal(err)
	}
	// Against a proxy that answers 403 for mcpkit: the recipe never asks it for mcpkit.
	tidy := exec.Command("sh", "-e", "-c", require.Text)
	tidy.Dir, tidy.Env = hello, refusingProxyEnv(t)
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("%s: the Getting started commands failed: %v\n%s", require, err, out)
	}
	gomod, err := os.ReadFile(filepath.Join(hello, "go.mod"))
	if err != nil {
		t.Fatalf("%s: the commands made no module in hello/: %v", script, err)
	}
	if !strings.Contains(string(gomod), "github.com/mcpkit/mcpkit ") {
		t.Fatalf("hello/go.mod does not require mcpkit:\n%s", gomod)
	}

	t.Run("go get refused", func(t *testing.T) {
		// The recipe before this one: a replace line, then go get, which asks the proxy for the
		// module; a proxy that refuses it (403) stops it there. The recipe never asks.
		dir := filepath.Join(work, "goget")
		os.Mkdir(dir, 0o755)
		cmd := exec.Command("sh", "-e", "-c", "go mod init example.com/goget && go mod edit -replace github.com/mcpkit/mcpkit=../mcpkit && go get github.com/mcpkit/mcpkit/mcp")
		cmd.Dir, cmd.Env = dir, refusingProxyEnv(t)
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "403") {
			t.Errorf("go get of the unpublished module with a replace line only: %v\n%s\nwant it refused with 403, as the module proxy refuses it", err, out)
		}
	})

	t.Run("nested", func(t *testing.T) {
		// A module that imports a nested module: the require block alone fails with the error the
		// README shows; the nested block's command adds what it misses.
		dir := filepath.Join(work, "nested")
		os.Mkdir(dir, 0o755)
		main := "package main\n\nimport (\n\t\"github.com/mcpkit/mcpkit/mcp\"\n\t\"github.com/mcpkit/mcpkit/redis\"\n)\n\nfunc main() { _, _ = mcp.NewServer, redis.NewBus }\n"
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := runCmd(t, dir, "go", "mod", "init", "example.com/nested"); err != nil {
			t.Fatalf("go mod init: %v\n%s", err, out)
		}
		out, err := runScript(t, dir, require)
		if err == nil {
			t.Fatalf("%s without the nested module's replace line: go mod tidy succeeded, want the README's error\n%s", require, out)
		}
		var readme string
		for _, b := range blocks {
			if b.File == "README.md" && b.Lang == "text" && strings.Contains(b.Text, "does not contain package") {
				readme = strings.TrimSpace(b.Text)
			}
		}
		if readme == "" || !strings.Contains(string(out), readme) {
			t.Errorf("go mod tidy without the replace line printed\n%s\nwhich does not contain the README's error %q", out, readme)
		}
		if out, err := runScript(t, dir, nested); err != nil {
			t.Fatalf("%s: %v\n%s", nested, err, out)
		}
		if out, err := runCmd(t, dir, "go", "build", "-o", os.DevNull, "."); err != nil {
			t.Fatalf("go build after %s: %v\n%s", nested, err, out)
		}
	})
	bin := filepath.Join(t.TempDir(), "hello")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = hello
	build.Env = UserEnv()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: go build: %v\n%s", prog, err, out)
	}

	steps, err := ParseTranscript(transcript.Text)
	if err != nil {
		t.Fatalf("%s: %v", transcript, err)
	}
	if len(steps) != 3 || !strings.Contains(steps[0].Cmd, "./hello &") || !strings.Contains(steps[1].Cmd, " call ") || !strings.HasPrefix(steps[2].Cmd, "kill ") {
		t.Fatalf("%s: want three commands (start ./hello in the background, mcpkit call, kill), got %q", transcript, steps)
	}

	t.Run("http", func(t *testing.T) {
		srv := exec.Command(bin, "-addr", "127.0.0.1:0")
		stderr, err := srv.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
		lines := make(chan string, 16)
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// What it prints up to the line with its URL (on loopback, nothing else: no warning
		// about the requestState key).
		var first, url string
		deadline := time.After(30 * time.Second)
		for url == "" {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("./hello exited before it printed its URL:\n%s", first)
				}
				first += l + "\n"
				url = loopbackURL.FindString(l)
			case <-deadline:
				t.Fatalf("./hello printed no URL within 30 s:\n%s", first)
			}
		}

		// The call, with the arguments of the README's command line.
		args := shellWords(t, steps[1].Cmd)
		i := indexOf(args, "call")
		if i < 0 || len(args) < i+3 {
			t.Fatalf("cannot read the call command %q", steps[1].Cmd)
		}
		callArgs := append([]string{"call", url}, args[i+2:]...)
		var out, errOut bytes.Buffer
		if code := cli.Run(callArgs, strings.NewReader(""), &out, &errOut, nil); code != 0 {
			t.Fatalf("mcpkit %q: exit %d\n%s", callArgs, code, errOut.String())
		}

		if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		var rest strings.Builder
		for l := range lines {
			rest.WriteString(l + "\n")
		}
		if err := srv.Wait(); err != nil {
			t.Fatalf("./hello after SIGTERM: %v (want exit 0)\n%s", err, rest.String())
		}
		// The README shows the default port.
		host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
		first = strings.ReplaceAll(first, host, "127.0.0.1:8080")
		got := []Step{
			{Cmd: steps[0].Cmd, Out: first},
			{Cmd: steps[1].Cmd, Out: out.String()},
			{Cmd: steps[2].Cmd, Out: rest.String()},
		}
		checkTranscript(t, root, transcript, Render(got))
	})

	t.Run("stdio", func(t *testing.T) {
		// mcpkit call spawns the server, calls the tool, closes its stdin: it exits at the end
		// of its input.
		var out, errOut bytes.Buffer
		args := []string{"call", "greet", `{"name":"Ada"}`, "--", bin, "-stdio"}
		if code := cli.Run(args, strings.NewReader(""), &out, &errOut, nil); code != 0 {
			t.Fatalf("mcpkit %q: exit %d\n%s", args, code, errOut.String())
		}
		if got, want := out.String(), "Hello, Ada!\n"; got != want {
			t.Errorf("mcpkit call over stdio printed %q, want %q", got, want)
		}

		// A signal while stdin is still open ends it too, with exit 0.
		srv := exec.Command(bin, "-stdio")
		stdin, err := srv.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := srv.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stdin.Close(); srv.Process.Kill(); srv.Wait() })
		// One request answered shows it serves before it is signalled.
		io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`+"\n")
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || !strings.Contains(line, `"supportedVersions"`) {
			t.Fatalf("server/discover on stdio: %q, %v", line, err)
		}
		if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := srv.Wait(); err != nil {
			t.Fatalf("./hello -stdio after SIGTERM: %v (want exit 0)", err)
		}
	})
}

// proxyEnv is UserEnv with the module cache as the module proxy (GOPROXY=file://...): offline,
// and, like the real proxy, without the unpublished mcpkit modules, which it does not find.
// scripts/test.sh's setup step fills the cache with what a user's go mod tidy reads.
func proxyEnv(t *testing.T) []string {
	t.Helper()
	return append(UserEnv(), "GOPROXY=file://"+filepath.Join(modCache(t), "cache", "download"))
}

func modCache(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// refusingProxyEnv is proxyEnv with a proxy on 127.0.0.1 that answers 403 for the module
// github.com/mcpkit/mcpkit, as a user saw a module proxy answer `go get` of it.
func refusingProxyEnv(t *testing.T) []string {
	t.Helper()
	files := http.FileServer(http.Dir(filepath.Join(modCache(t), "cache", "download")))
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/github.com/mcpkit/mcpkit/@") {
			http.Error(w, "forbidden: not published", http.StatusForbidden)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return append(UserEnv(), "GOPROXY="+proxy.URL)
}

// runScript runs a script block with sh -e in dir, with proxyEnv.
func runScript(t *testing.T, dir string, b Block) ([]byte, error) {
	t.Helper()
	return runCmd(t, dir, "sh", "-e", "-c", b.Text)
}

// runCmd runs a command in dir with proxyEnv and returns its combined output.
func runCmd(t *testing.T, dir string, name string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = proxyEnv(t)
	return cmd.CombinedOutput()
}

// checkTranscript compares a transcript block with the output of the real run, normalised,
// and rewrites the block with -update.
func checkTranscript(t *testing.T, root string, b Block, got string) {
	t.Helper()
	if Normalize(got) == Normalize(b.Text) {
		return
	}
	if *update {
		if err := Rewrite(root, b, got); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: rewritten from the real run", b)
		return
	}
	t.Errorf("%s: transcript %s drifted from the real run (normalised, -doc +run; go test ./internal/doccheck -update rewrites it):\n%s",
		b, b.Arg, cmp.Diff(strings.Split(Normalize(b.Text), "\n"), strings.Split(Normalize(got), "\n")))
}

// shellWords splits a command line into words: blanks separate, single quotes group.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
