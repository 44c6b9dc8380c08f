package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// repoRoot is the repository's root directory (tests run in internal/doccheck).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found: %v", err)
	}
	return root
}

// nestedModules lists the nested modules of root (see NestedModules).
func nestedModules(t *testing.T, root string) []string {
	t.Helper()
	out, err := NestedModules(root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func allBlocks(t *testing.T) (string, []Block) {
	t.Helper()
	root := repoRoot(t)
	blocks, err := All(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, blocks
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Block
		wantErr string
	}{
		{
			name: "blocks with and without directives",
			in: "# T\n\n```go\npackage main\n```\n\n<!-- doccheck: fragment -->\n```go\nx := 1\n```\n" +
				"<!-- doccheck: skip pseudo-code -->\n~~~text\na\n```\nb\n~~~\n",
			want: []Block{
				{File: "f.md", Line: 3, Lang: "go", Text: "package main\n"},
				{File: "f.md", Line: 8, Lang: "go", Directive: "fragment", Text: "x := 1\n"},
				{File: "f.md", Line: 12, Lang: "text", Directive: "skip", Arg: "pseudo-code", Text: "a\n```\nb\n"},
			},
		},
		{name: "unknown directive", in: "<!-- doccheck: frgment -->\n```go\n```\n", wantErr: "unknown doccheck directive"},
		{name: "skip without a reason", in: "<!-- doccheck: skip -->\n```go\n```\n", wantErr: "needs an argument"},
		{name: "directive away from its block", in: "<!-- doccheck: fragment -->\n\ntext\n```go\n```\n", wantErr: "not right before"},
		{name: "two directives", in: "<!-- doccheck: fragment -->\n<!-- doccheck: fragment -->\n```go\n```\n", wantErr: "two doccheck directives"},
		{name: "unclosed block", in: "```go\npackage main\n", wantErr: "never closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("f.md", tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFragment(t *testing.T) {
	for _, ok := range []string{"x := 1\nfmt.Println(x)\n", "import \"fmt\"\n\nfmt.Println(1)\n", "type T struct{}\nfunc (T) M() {}\n", "var v = 1\n"} {
		if err := ParseFragment(ok); err != nil {
			t.Errorf("ParseFragment(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"x := \n", "func (\n", "}"} {
		if err := ParseFragment(bad); err == nil {
			t.Errorf("ParseFragment(%q) = nil, want an error", bad)
		}
	}
}

// TestGoBlocks compiles (type-checks and vets) every Go block of README.md and docs/*.md that
// has a package clause, in a module outside the repository that requires mcpkit through a
// replace line, and parses every fragment.
func TestGoBlocks(t *testing.T) {
	root, blocks := allBlocks(t)
	code, errs := CodeBlocks(blocks)
	for _, err := range errs {
		t.Error(err)
	}
	if len(code) == 0 {
		t.Fatal("no Go block with a package clause found: the check would check nothing")
	}
	m, err := NewModule(t.TempDir(), root, NestedImports(code, nestedModules(t, root)))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range code {
		if _, err := m.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := m.Vet(); err != nil {
		t.Fatalf("go vet of the %d Go blocks: %v\n%s", len(code), err, out)
	}
	t.Logf("%d Go blocks compiled and vetted", len(code))
}

// TestServersShutDown checks that no whole-file Go block of the docs serves HTTP without a shutdown:
// a block that builds a server with NewHTTPServer calls both Server.Shutdown and
// http.Server.Shutdown (in that order, as the README's Getting started does), and none ends
// its program with log.Fatal(....ListenAndServe()), which leaves the listen streams and tasks
// to be cut off.
func TestServersShutDown(t *testing.T) {
	_, blocks := allBlocks(t)
	checked := 0
	for _, b := range blocks {
		if b.Lang != "go" || b.Directive == "skip" || PackageName(b.Text) == "" || !strings.Contains(b.Text, "NewHTTPServer(") {
			continue
		}
		checked++
		if strings.Contains(b.Text, ".ListenAndServe())") {
			t.Errorf("%s: log.Fatal(...ListenAndServe()) serves without a shutdown: follow the README's Getting started", b)
			continue
		}
		s, hs := strings.Index(b.Text, "s.Shutdown("), strings.Index(b.Text, "hs.Shutdown(")
		if s < 0 || hs < 0 || hs < s {
			t.Errorf("%s: want s.Shutdown(ctx) and then hs.Shutdown(ctx) on a signal", b)
		}
	}
	if checked == 0 {
		t.Fatal("no Go block calls NewHTTPServer: the check would check nothing")
	}
}
