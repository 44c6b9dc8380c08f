package doccheck

import (
	"bytes"
	"errors"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ModulePath is the module path of the repository.
const ModulePath = "github.com/mcpkit/mcpkit"

// PackageName returns the package clause's name of a Go block, or "" for a fragment.
func PackageName(text string) string {
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", text, parser.PackageClauseOnly)
	if err != nil {
		return ""
	}
	return f.Name.Name
}

// ParseFragment checks that text is valid Go as declarations or as statements.
func ParseFragment(text string) error {
	fset := token.NewFileSet()
	_, declErr := parser.ParseFile(fset, "x.go", "package p\n"+text, parser.SkipObjectResolution)
	if declErr == nil {
		return nil
	}
	_, stmtErr := parser.ParseFile(fset, "x.go", "package p\nfunc _() {\n"+text+"\n}", parser.SkipObjectResolution)
	if stmtErr == nil {
		return nil
	}
	// Declarations (say, imports) followed by statements: split where the declarations stop.
	if el, ok := declErr.(scanner.ErrorList); ok && len(el) > 0 && el[0].Pos.Line > 2 {
		lines := strings.SplitAfter(text, "\n")
		cut := el[0].Pos.Line - 2 // line 1 is the package clause
		if cut < len(lines) {
			src := "package p\n" + strings.Join(lines[:cut], "") + "\nfunc _() {\n" + strings.Join(lines[cut:], "") + "\n}"
			if _, err := parser.ParseFile(fset, "x.go", src, parser.SkipObjectResolution); err == nil {
				return nil
			}
		}
	}
	return fmt.Errorf("neither declarations (%v) nor statements (%v)", declErr, stmtErr)
}

// Module is a Go module outside the repository whose go.mod requires mcpkit (and the nested
// modules the code imports) through replace lines pointing at the repository, the way the
// README tells a user to do until mcpkit is published.
type Module struct {
	Dir   string            // the module's directory
	Root  string            // the repository
	pkgs  map[string]string // "file package" -> directory
	files map[string]Block  // "directory/file.go" -> its block
}

// NewModule writes go.mod and go.sum of a module named example.com/doccheck in dir.
// nested lists the nested modules of the repository ("redis", ...) to require too.
func NewModule(dir, root string, nested []string) (*Module, error) {
	var mod, sum bytes.Buffer
	fmt.Fprintf(&mod, "module example.com/doccheck\n\ngo 1.26.0\n\nrequire %s v0.0.0-00010101000000-000000000000\n\nreplace %s => %s\n", ModulePath, ModulePath, root)
	s, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return nil, err
	}
	sum.Write(s)
	for _, n := range nested {
		fmt.Fprintf(&mod, "\nrequire %s/%s v0.0.0-00010101000000-000000000000\n\nreplace %s/%s => %s\n", ModulePath, n, ModulePath, n, filepath.Join(root, n))
		s, err := os.ReadFile(filepath.Join(root, n, "go.sum"))
		if err != nil {
			return nil, err
		}
		sum.Write(s)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), mod.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return &Module{Dir: dir, Root: root, pkgs: map[string]string{}, files: map[string]Block{}}, nil
}

// Add writes block b into the module and returns its directory. A program (package main) gets
// a directory of its own; the blocks of one Markdown file with the same other package name
// share one, as the files of that package (a name ending in _test makes them test files).
func (m *Module) Add(b Block) (string, error) {
	pkg := PackageName(b.Text)
	key := b.File + " " + pkg
	dir, ok := m.pkgs[key]
	if !ok || pkg == "main" {
		dir = fmt.Sprintf("b%03d_%s", len(m.pkgs), strings.NewReplacer("/", "_", ".", "_").Replace(b.File))
		m.pkgs[key] = dir
		if pkg == "main" {
			m.pkgs[fmt.Sprintf("%s:%d", b.File, b.Line)] = dir
		}
	}
	name := fmt.Sprintf("line%d.go", b.Line)
	if strings.HasSuffix(pkg, "_test") {
		name = fmt.Sprintf("line%d_test.go", b.Line)
	}
	if err := os.MkdirAll(filepath.Join(m.Dir, dir), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(m.Dir, dir, name), []byte(b.Text), 0o644); err != nil {
		return "", err
	}
	m.files[dir+"/"+name] = b
	return filepath.Join(m.Dir, dir), nil
}

// Env is the environment for the go command in a Module: no network (the repository's
// dependencies are in the module cache already), and go.mod may be completed.
func Env() []string {
	return append(UserEnv(), "GOFLAGS=-mod=mod")
}

// UserEnv is the environment of a user following the README, minus the network: the module
// cache stands in for the module proxy (and was verified when it was filled).
func UserEnv() []string {
	return append(os.Environ(), "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "GOFLAGS=")
}

var goPosRE = regexp.MustCompile(`(?:\./)?\b(b\d{3}_[^/\s]+/line\d+(?:_test)?\.go):(\d+)(:\d+)?`)

// Vet runs go vet on every package of the module (which type-checks them) and returns its
// output with each position rewritten to the Markdown file and line it came from.
func (m *Module) Vet() (string, error) {
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = m.Dir
	cmd.Env = Env()
	out, err := cmd.CombinedOutput()
	return m.Positions(string(out)), err
}

// Positions rewrites "bNNN_file/lineN.go:LINE" positions in go command output to "FILE:LINE"
// of the Markdown source (the block's first line follows its fence).
func (m *Module) Positions(out string) string {
	return goPosRE.ReplaceAllStringFunc(out, func(s string) string {
		sm := goPosRE.FindStringSubmatch(s)
		b, ok := m.files[sm[1]]
		if !ok {
			return s
		}
		line, _ := strconv.Atoi(sm[2])
		return fmt.Sprintf("%s:%d", b.File, b.Line+line)
	})
}

// NestedImports returns the nested modules of the repository ("redis", ...) that the Go
// blocks import, given the nested module directories that exist.
func NestedImports(blocks []Block, nested []string) []string {
	used := map[string]bool{}
	for _, b := range blocks {
		for _, n := range nested {
			if strings.Contains(b.Text, `"`+ModulePath+"/"+n+`"`) || strings.Contains(b.Text, `"`+ModulePath+"/"+n+"/") {
				used[n] = true
			}
		}
	}
	var out []string
	for n := range used {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// CodeBlocks returns the Go blocks of blocks that are whole files (they have a package clause
// and are not skipped), and an error for each Go block that is neither such a file nor a
// fragment that parses.
func CodeBlocks(blocks []Block) (code []Block, errs []error) {
	for _, b := range blocks {
		if b.Lang != "go" {
			continue
		}
		switch b.Directive {
		case "skip":
			continue
		case "fragment":
			if err := ParseFragment(b.Text); err != nil {
				errs = append(errs, fmt.Errorf("%s: fragment: %v", b, err))
			}
			continue
		case "transcript", "script":
			errs = append(errs, fmt.Errorf("%s: a Go block cannot be a %s", b, b.Directive))
			continue
		}
		if PackageName(b.Text) == "" {
			errs = append(errs, fmt.Errorf("%s: a Go block without a package clause: make it a whole file, or mark it <!-- doccheck: fragment -->", b))
			continue
		}
		if b.Directive == "program" && PackageName(b.Text) != "main" {
			errs = append(errs, fmt.Errorf("%s: program %s is package %s, want main", b, b.Arg, PackageName(b.Text)))
		}
		code = append(code, b)
	}
	return code, errs
}

// NestedModules lists the nested modules of the repository at root, one or two directories
// deep ("full", "otel", "otel/otelenv", ...), sorted.
func NestedModules(root string) ([]string, error) {
	var out []string
	for _, pat := range []string{"*/go.mod", "*/*/go.mod"} {
		mods, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			return nil, err
		}
		for _, m := range mods {
			rel, err := filepath.Rel(root, filepath.Dir(m))
			if err != nil {
				return nil, err
			}
			if strings.Contains(rel, "testdata") {
				continue
			}
			out = append(out, filepath.ToSlash(rel))
		}
	}
	sort.Strings(out)
	return out, nil
}

// WriteDocModule writes into dir the module that TestGoBlocks compiles: every whole-file Go
// block of the docs of the repository at root, with go.mod requiring mcpkit and the nested
// modules the blocks import. It returns how many blocks it wrote; a block that is not valid
// as a file is an error.
func WriteDocModule(dir, root string) (int, error) {
	blocks, err := All(root)
	if err != nil {
		return 0, err
	}
	code, errs := CodeBlocks(blocks)
	if len(errs) > 0 {
		return 0, errors.Join(errs...)
	}
	nested, err := NestedModules(root)
	if err != nil {
		return 0, err
	}
	m, err := NewModule(dir, root, NestedImports(code, nested))
	if err != nil {
		return 0, err
	}
	for _, b := range code {
		if _, err := m.Add(b); err != nil {
			return 0, err
		}
	}
	return len(code), nil
}
