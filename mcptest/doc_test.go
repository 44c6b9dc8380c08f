package mcptest_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goBlock matches a fenced Go block of a Markdown file.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestTestingGuide compiles and runs the Go blocks of docs/testing.md:
// each block is a complete _test.go file of one package, in a module of
// its own that uses this repository through a replace directive.
func TestTestingGuide(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own; not in -short")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlock.FindAllSubmatch(doc, -1)
	if len(blocks) < 2 {
		t.Fatalf("docs/testing.md has %d Go blocks, want at least 2", len(blocks))
	}
	dir := t.TempDir()
	goMod := "module guide\n\ngo 1.26\n\nrequire github.com/mcpkit/mcpkit v0.0.0\n\nreplace github.com/mcpkit/mcpkit => " + root + "\n"
	rootMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	// The guide's module needs the same requirements as the root's.
	if i := strings.Index(string(rootMod), "require"); i >= 0 {
		goMod += "\n" + string(rootMod[i:])
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", []byte(goMod))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", sum)
	for i, b := range blocks {
		write(fmt.Sprintf("block%d_test.go", i+1), b[1])
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	cmd := exec.Command(gocmd, "test", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the Go blocks of docs/testing.md do not pass (%v):\n%s", err, out)
	}
}
