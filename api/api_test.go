// Package api_test keeps the public API of mcpkit's packages in text files,
// one per package (api/mcp.txt, api/client.txt, ...), one line per exported
// identifier, in the style of Go's own api/*.txt: constants with their type
// and value, variables, functions and methods with their signatures, types
// with their kind, every exported field and interface method.
//
// TestAPI fails when a file is stale. After adding API, regenerate with
//
//	go test ./api -update
//
// and commit the files. A line that disappears or changes (a removal, a
// rename, a new signature) must be named in a backtick code span under
// "### Changed" or "### Removed" of CHANGELOG.md's Unreleased section, or
// TestAPI fails and -update refuses to write.
package api_test

import (
	"bufio"
	"flag"
	"fmt"
	"go/constant"
	"go/types"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

var update = flag.Bool("update", false, "rewrite the api/*.txt files from the code")

// module is the module path; public is every package of the module that is
// not internal, a command or a test program.
const module = "github.com/mcpkit/mcpkit"

func public(pkgPath string) bool {
	rel := strings.TrimPrefix(pkgPath, module)
	return !strings.Contains(rel+"/", "/internal/") && !strings.HasPrefix(rel, "/cmd/") &&
		!strings.HasPrefix(rel, "/conformance/") && rel != "/api"
}

// fileName is the api file of a package: its path in the module with
// slashes as dashes ("client-auth.txt").
func fileName(pkgPath string) string {
	return strings.ReplaceAll(strings.TrimPrefix(pkgPath, module+"/"), "/", "-") + ".txt"
}

func TestAPI(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: ".."}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	changelog := changedOrRemoved(t)
	files := map[string]bool{}
	for _, p := range pkgs {
		if !public(p.PkgPath) {
			continue
		}
		if len(p.Errors) > 0 {
			t.Fatalf("%s: %v", p.PkgPath, p.Errors)
		}
		name := fileName(p.PkgPath)
		files[name] = true
		got := apiLines(p.Types)
		old, _ := readLines(name)
		var unrecorded []string
		for _, l := range old {
			if !slices.Contains(got, l) && !recorded(l, changelog) {
				unrecorded = append(unrecorded, l)
			}
		}
		for _, l := range unrecorded {
			t.Errorf("api/%s: %q was removed or changed; say so under ### Changed or ### Removed in CHANGELOG.md, naming %s in backticks", name, l, subject(l))
		}
		if slices.Equal(old, got) {
			continue
		}
		if *update && len(unrecorded) == 0 {
			if err := os.WriteFile(name, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var added []string
		for _, l := range got {
			if !slices.Contains(old, l) {
				added = append(added, l)
			}
		}
		t.Errorf("api/%s is stale (%d lines new, e.g. %q; %d gone): run go test ./api -update and commit it", name, len(added), first(added), len(old)+len(added)-len(got))
	}
	entries, _ := os.ReadDir(".")
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".txt") && !files[e.Name()] {
			t.Errorf("api/%s belongs to no public package: remove it (and record the removal in CHANGELOG.md)", e.Name())
		}
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func readLines(name string) ([]string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), nil
}

// changedOrRemoved returns the text of the Changed and Removed sections of
// CHANGELOG.md's Unreleased release.
func changedOrRemoved(t *testing.T) string {
	f, err := os.Open("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	inUnreleased, keep := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "## "):
			inUnreleased = strings.Contains(l, "Unreleased")
			keep = false
		case strings.HasPrefix(l, "### "):
			keep = inUnreleased && (strings.Contains(l, "Changed") || strings.Contains(l, "Removed"))
		case keep:
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

var codeSpan = regexp.MustCompile("`[^`]+`")

// subject is the identifier a line is about: the member for a field,
// interface method or method line, else the package-level name.
func subject(line string) string {
	_, decl, _ := strings.Cut(line, ", ")
	ident := func(s string) string {
		return strings.TrimLeft(strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" ([", r) })[0], "*")
	}
	if m := memberLine.FindStringSubmatch(decl); m != nil {
		if rest, ok := strings.CutPrefix(m[1], "embedded "); ok {
			return lastDot(ident(rest))
		}
		return ident(m[1])
	}
	kind, rest, _ := strings.Cut(decl, " ")
	if kind == "method" { // "method (*T) Name(...)"
		_, rest, _ = strings.Cut(rest, ") ")
	}
	return ident(rest)
}

// memberLine matches the line of a field or interface method.
var memberLine = regexp.MustCompile(`^type [^ \[]+(?:\[[^\]]*\])? (?:struct|interface), (.*)$`)

// lastDot is what follows the last dot of s (s without a package).
func lastDot(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// recorded reports whether changelog names line's subject as a whole word
// in a code span.
func recorded(line, changelog string) bool {
	word := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(subject(line)) + `($|[^A-Za-z0-9_])`)
	for _, span := range codeSpan.FindAllString(changelog, -1) {
		if word.MatchString(span) {
			return true
		}
	}
	return false
}

// apiLines lists the exported API of pkg, sorted.
func apiLines(pkg *types.Package) []string {
	prefix := "pkg " + pkg.Path() + ", "
	qual := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return path.Base(p.Path())
	}
	typ := func(t types.Type) string { return types.TypeString(t, qual) }
	var out []string
	add := func(format string, args ...any) { out = append(out, prefix+fmt.Sprintf(format, args...)) }
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			add("const %s %s", name, typ(o.Type()))
			add("const %s = %s", name, o.Val().ExactString())
			if o.Val().Kind() == constant.Unknown {
				continue
			}
		case *types.Var:
			add("var %s %s", name, typ(o.Type()))
		case *types.Func:
			sig := o.Type().(*types.Signature)
			add("func %s%s%s", name, typeParams(sig.TypeParams(), typ), signature(sig, typ))
		case *types.TypeName:
			typeLines(o, typ, add)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// signature is sig's parameter and result types, without names: renaming
// a parameter does not change the API.
func signature(sig *types.Signature, typ func(types.Type) string) string {
	list := func(t *types.Tuple, variadic bool) []string {
		var out []string
		for i := range t.Len() {
			s := typ(t.At(i).Type())
			if variadic && i == t.Len()-1 {
				s = "..." + typ(t.At(i).Type().(*types.Slice).Elem())
			}
			out = append(out, s)
		}
		return out
	}
	s := "(" + strings.Join(list(sig.Params(), sig.Variadic()), ", ") + ")"
	switch res := list(sig.Results(), false); len(res) {
	case 0:
	case 1:
		s += " " + res[0]
	default:
		s += " (" + strings.Join(res, ", ") + ")"
	}
	return s
}

func typeParams(tps *types.TypeParamList, typ func(types.Type) string) string {
	if tps == nil || tps.Len() == 0 {
		return ""
	}
	var ps []string
	for i := range tps.Len() {
		tp := tps.At(i)
		ps = append(ps, tp.Obj().Name()+" "+typ(tp.Constraint()))
	}
	return "[" + strings.Join(ps, ", ") + "]"
}

func typeLines(o *types.TypeName, typ func(types.Type) string, add func(string, ...any)) {
	name := o.Name()
	if o.IsAlias() {
		add("type %s = %s", name, typ(types.Unalias(o.Type())))
		return
	}
	named := o.Type().(*types.Named)
	name += typeParams(named.TypeParams(), typ)
	switch u := named.Underlying().(type) {
	case *types.Struct:
		add("type %s struct", name)
		for i := range u.NumFields() {
			f := u.Field(i)
			switch {
			case !f.Exported():
			case f.Embedded():
				add("type %s struct, embedded %s", name, typ(f.Type()))
			default:
				add("type %s struct, %s %s", name, f.Name(), typ(f.Type()))
			}
		}
	case *types.Interface:
		add("type %s interface { %s }", name, strings.Join(methodNames(u), ", "))
		for i := range u.NumMethods() {
			m := u.Method(i)
			if m.Exported() {
				add("type %s interface, %s%s", name, m.Name(), signature(m.Type().(*types.Signature), typ))
			}
		}
	default:
		add("type %s %s", name, typ(u))
	}
	for i := range named.NumMethods() {
		m := named.Method(i)
		if !m.Exported() {
			continue
		}
		sig := m.Type().(*types.Signature)
		recv := typ(sig.Recv().Type())
		add("method (%s) %s%s", recv, m.Name(), signature(sig, typ))
	}
}

func methodNames(u *types.Interface) []string {
	var names []string
	for i := range u.NumMethods() {
		m := u.Method(i)
		if m.Exported() {
			names = append(names, m.Name())
		} else {
			names = append(names, "unexported methods")
		}
	}
	return slices.Compact(names)
}

func TestSubjectAndRecorded(t *testing.T) {
	changelog := "- `mcp.ServerOptions.Info` replaces `Name` and `Version`; `client.Era` is gone.\n"
	for _, tt := range []struct {
		line, subject string
		recorded      bool
	}{
		{"pkg m, type ServerOptions struct, Name string", "Name", true},
		{"pkg m, type ServerOptions struct, Title string", "Title", false},
		{"pkg m, type Era string", "Era", true},
		{"pkg m, const EraModern Era", "EraModern", false},
		{"pkg m, method (*Client) Era() Era", "Era", true},
		{"pkg m, func NewTransport(string, Options) (*Transport, error)", "NewTransport", false},
		{"pkg m, func AddTool[In any, Out any](*Server, *Tool, ToolHandler[In, Out])", "AddTool", false},
		{"pkg m, type Bus interface, Publish(Change) error", "Publish", false},
		{"pkg m, type LoadedSkill struct, embedded *Skill", "Skill", false},
		{"pkg m, var ErrClosed error", "ErrClosed", false},
	} {
		if got := subject(tt.line); got != tt.subject {
			t.Errorf("subject(%q) = %q, want %q", tt.line, got, tt.subject)
		}
		if got := recorded(tt.line, changelog); got != tt.recorded {
			t.Errorf("recorded(%q) = %v, want %v", tt.line, got, tt.recorded)
		}
	}
}
