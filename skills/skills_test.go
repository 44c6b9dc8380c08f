package skills_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/skills"
)

func manifest(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n\nSkill body.\n"
}

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// goodFS has one skill at the top, one nested two levels down with a
// subdirectory, and things that are not skills.
func goodFS() fstest.MapFS {
	return fstest.MapFS{
		"pdf-processing/SKILL.md":            file("---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: MIT\nmetadata:\n  author: acme\n  version: \"1.0\"\n---\n# PDF\n"),
		"pdf-processing/references/FORMS.md": file("# Forms\n"),
		"pdf-processing/scripts/fill.py":     file("print('fill')\n"),
		"pdf-processing/logo.png":            {Data: []byte("\x89PNG\r\n\x1a\n\x00\x00")},
		"pdf-processing/.hidden":             file("not served"),
		"acme/tools/csv-report/SKILL.md":     file(manifest("csv-report", "Summarise CSV files")),
		"acme/tools/csv-report/data.bin":     {Data: []byte{0, 1, 2, 0xff}},
		"acme/README.md":                     file("not a skill"),
		".git/x/SKILL.md":                    file("hidden directories are skipped"),
	}
}

func TestLoad(t *testing.T) {
	set, err := skills.Load(goodFS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range set.Skills() {
		got = append(got, s.URI)
	}
	want := []string{"skill://acme/tools/csv-report/SKILL.md", "skill://pdf-processing/SKILL.md"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("skills (-want +got):\n%s", diff)
	}

	pdf := set.Skill("skill://pdf-processing/SKILL.md")
	if pdf == nil {
		t.Fatal("Skill(pdf-processing) = nil")
	}
	if pdf.Name != "pdf-processing" || pdf.Description != "Extract, fill, and assemble PDF documents" || pdf.Dir != "pdf-processing" || pdf.DirURI != "skill://pdf-processing" {
		t.Errorf("skill = %+v", pdf)
	}
	// The frontmatter goes out as written: every key, in order.
	wantFM := `{"name":"pdf-processing","description":"Extract, fill, and assemble PDF documents","license":"MIT","metadata":{"author":"acme","version":"1.0"}}`
	if string(pdf.Frontmatter) != wantFM {
		t.Errorf("frontmatter = %s, want %s", pdf.Frontmatter, wantFM)
	}

	type fileView struct {
		Path, URI, MIME string
		Text            bool
		Size            int64
	}
	var files []fileView
	for _, f := range pdf.Files {
		files = append(files, fileView{f.Path, f.URI, f.MIMEType, f.Text, f.Size})
		if !strings.HasPrefix(f.Digest, "sha256:") || len(f.Digest) != 7+64 {
			t.Errorf("%s: digest %q", f.Path, f.Digest)
		}
	}
	wantFiles := []fileView{
		{"SKILL.md", "skill://pdf-processing/SKILL.md", "text/markdown", true, int64(len(goodFS()["pdf-processing/SKILL.md"].Data))},
		{"logo.png", "skill://pdf-processing/logo.png", "image/png", false, 10},
		{"references/FORMS.md", "skill://pdf-processing/references/FORMS.md", "text/markdown", true, 8},
		{"scripts/fill.py", "skill://pdf-processing/scripts/fill.py", "text/x-python", true, 14},
	}
	if diff := cmp.Diff(wantFiles, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	var total int64
	for _, f := range wantFiles {
		total += f.Size
	}
	if pdf.Size != total {
		t.Errorf("Size = %d, want %d", pdf.Size, total)
	}

	// The entry, as skills/list sends it.
	var entry struct {
		URI         string
		Frontmatter map[string]any
		Resources   []struct {
			URI, Digest string
			Size        int64
		}
	}
	b, err := json.Marshal(pdf)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &entry); err != nil {
		t.Fatalf("entry %s: %v", b, err)
	}
	if entry.URI != pdf.URI || len(entry.Resources) != 4 || entry.Resources[0].URI != pdf.URI ||
		entry.Resources[0].Digest != skills.Digest(goodFS()["pdf-processing/SKILL.md"].Data) || entry.Frontmatter["license"] != "MIT" {
		t.Errorf("entry = %s", b)
	}

	// Directories: the skill's own and its subdirectories.
	children, ok := set.Dir("skill://pdf-processing")
	if !ok {
		t.Fatal("Dir(skill://pdf-processing) not found")
	}
	var names []string
	for _, c := range children {
		names = append(names, fmt.Sprintf("%s dir=%v", c.URI, c.IsDir()))
	}
	wantNames := []string{
		"skill://pdf-processing/SKILL.md dir=false",
		"skill://pdf-processing/logo.png dir=false",
		"skill://pdf-processing/references dir=true",
		"skill://pdf-processing/scripts dir=true",
	}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("Dir (-want +got):\n%s", diff)
	}
	if c, ok := set.Dir("skill://pdf-processing/references/"); !ok || len(c) != 1 || c[0].Name != "FORMS.md" {
		t.Errorf("Dir(references/) = %v, %v", c, ok)
	}
	for _, u := range []string{"skill://pdf-processing/SKILL.md", "skill://acme", "skill://nope", "skill://"} {
		if _, ok := set.Dir(u); ok {
			t.Errorf("Dir(%s) found a directory", u)
		}
	}

	data, f, err := set.ReadFile("skill://pdf-processing/references/FORMS.md")
	if err != nil || string(data) != "# Forms\n" || f.Path != "references/FORMS.md" {
		t.Errorf("ReadFile = %q, %v, %v", data, f, err)
	}
	if _, _, err := set.ReadFile("skill://pdf-processing/.hidden"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(.hidden) error = %v, want fs.ErrNotExist", err)
	}
	if set.File("skill://acme/tools/csv-report/data.bin").Text {
		t.Error("data.bin is served as text")
	}
}

func TestLoadEscapesURIs(t *testing.T) {
	fsys := fstest.MapFS{
		"team a/x@y/my-skill/SKILL.md":       file(manifest("my-skill", "d")),
		"team a/x@y/my-skill/notes 1%.txt":   file("n"),
		"team a/x@y/my-skill/a:b/c?d#e.json": file("{}"),
	}
	set, err := skills.Load(fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range set.Skills()[0].Files {
		got = append(got, f.URI)
	}
	want := []string{
		"skill://team%20a/x@y/my-skill/SKILL.md",
		"skill://team%20a/x@y/my-skill/a:b/c%3Fd%23e.json",
		"skill://team%20a/x@y/my-skill/notes%201%25.txt",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("URIs (-want +got):\n%s", diff)
	}
	if _, ok := set.Dir("skill://team%20a/x@y/my-skill/a:b"); !ok {
		t.Error("escaped directory not found")
	}
	// An "@" or ":" in the authority is escaped.
	set, err = skills.Load(fstest.MapFS{"u@h:1/s/SKILL.md": file(manifest("s", "d"))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u := set.Skills()[0].URI; u != "skill://u%40h%3A1/s/SKILL.md" {
		t.Errorf("URI = %s", u)
	}
}

// TestLoadRefusals covers every reason a skill is refused: each case adds
// one bad skill next to a good one, which must still load, and names the
// file the error must be about.
func TestLoadRefusals(t *testing.T) {
	long := strings.Repeat("a", 65)
	tests := []struct {
		name string
		fs   fstest.MapFS
		opts skills.Options
		path string
		want error
	}{
		{"no frontmatter", fstest.MapFS{"bad/SKILL.md": file("# bad\n")}, skills.Options{}, "bad/SKILL.md", skills.ErrNoFrontmatter},
		{"unclosed frontmatter", fstest.MapFS{"bad/SKILL.md": file("---\nname: bad\ndescription: d\n")}, skills.Options{}, "bad/SKILL.md", skills.ErrNoFrontmatter},
		{"empty file", fstest.MapFS{"bad/SKILL.md": file("")}, skills.Options{}, "bad/SKILL.md", skills.ErrNoFrontmatter},
		{"invalid YAML", fstest.MapFS{"bad/SKILL.md": file("---\nname: [bad\n---\n")}, skills.Options{}, "bad/SKILL.md", skills.ErrMalformedFrontmatter},
		{"not a mapping", fstest.MapFS{"bad/SKILL.md": file("---\n- name\n- bad\n---\n")}, skills.Options{}, "bad/SKILL.md", skills.ErrMalformedFrontmatter},
		{"scalar", fstest.MapFS{"bad/SKILL.md": file("---\nbad\n---\n")}, skills.Options{}, "bad/SKILL.md", skills.ErrMalformedFrontmatter},
		{"repeated key", fstest.MapFS{"bad/SKILL.md": file("---\nname: bad\nname: bad\ndescription: d\n---\n")}, skills.Options{}, "bad/SKILL.md", skills.ErrMalformedFrontmatter},
		{"infinity", fstest.MapFS{"bad/SKILL.md": file("---\nname: bad\ndescription: d\nx: .inf\n---\n")}, skills.Options{}, "bad/SKILL.md", skills.ErrMalformedFrontmatter},
		{"invalid UTF-8", fstest.MapFS{"bad/SKILL.md": file("---\nname: bad\ndescription: \xff\n---\n")}, skills.Options{}, "bad/SKILL.md", skills.ErrMalformedFrontmatter},
		{"missing name", fstest.MapFS{"bad/SKILL.md": file("---\ndescription: d\n---\n")}, skills.Options{}, "bad/SKILL.md", skills.ErrMissingName},
		{"name not a string", fstest.MapFS{"123/SKILL.md": file("---\nname: 123\ndescription: d\n---\n")}, skills.Options{}, "123/SKILL.md", skills.ErrMissingName},
		{"empty name", fstest.MapFS{"bad/SKILL.md": file("---\nname: \"\"\ndescription: d\n---\n")}, skills.Options{}, "bad/SKILL.md", skills.ErrMissingName},
		{"missing description", fstest.MapFS{"bad/SKILL.md": file("---\nname: bad\n---\n")}, skills.Options{}, "bad/SKILL.md", skills.ErrMissingDescription},
		{"description a list", fstest.MapFS{"bad/SKILL.md": file("---\nname: bad\ndescription: [a]\n---\n")}, skills.Options{}, "bad/SKILL.md", skills.ErrMissingDescription},
		{"uppercase name", fstest.MapFS{"Bad/SKILL.md": file(manifest("Bad", "d"))}, skills.Options{}, "Bad/SKILL.md", skills.ErrInvalidName},
		{"leading hyphen", fstest.MapFS{"-bad/SKILL.md": file(manifest("-bad", "d"))}, skills.Options{}, "-bad/SKILL.md", skills.ErrInvalidName},
		{"trailing hyphen", fstest.MapFS{"bad-/SKILL.md": file(manifest("bad-", "d"))}, skills.Options{}, "bad-/SKILL.md", skills.ErrInvalidName},
		{"doubled hyphen", fstest.MapFS{"b--d/SKILL.md": file(manifest("b--d", "d"))}, skills.Options{}, "b--d/SKILL.md", skills.ErrInvalidName},
		{"65 characters", fstest.MapFS{long + "/SKILL.md": file(manifest(long, "d"))}, skills.Options{}, long + "/SKILL.md", skills.ErrInvalidName},
		{"underscore", fstest.MapFS{"b_d/SKILL.md": file(manifest("b_d", "d"))}, skills.Options{}, "b_d/SKILL.md", skills.ErrInvalidName},
		{"name differs from directory", fstest.MapFS{"bad/SKILL.md": file(manifest("other", "d"))}, skills.Options{}, "bad/SKILL.md", skills.ErrNameMismatch},
		{"SKILL.md at the root", fstest.MapFS{"SKILL.md": file(manifest("root", "d"))}, skills.Options{}, "SKILL.md", skills.ErrNameMismatch},
		{"too many files", fstest.MapFS{"bad/SKILL.md": file(manifest("bad", "d")), "bad/a": file("a"), "bad/b": file("b")}, skills.Options{MaxFiles: 2}, "bad/b", skills.ErrTooManyFiles},
		{"too many directories", fstest.MapFS{"bad/SKILL.md": file(manifest("bad", "d")), "bad/a": {Mode: fs.ModeDir}, "bad/b": {Mode: fs.ModeDir}, "bad/c": {Mode: fs.ModeDir}}, skills.Options{MaxFiles: 2}, "bad/c", skills.ErrTooManyFiles},
		{"too large", fstest.MapFS{"bad/SKILL.md": file(manifest("bad", "d")), "bad/big": file(strings.Repeat("x", 200))}, skills.Options{MaxBytes: 200}, "bad/big", skills.ErrTooLarge},
		{"symlink climbing out", fstest.MapFS{"bad/SKILL.md": file(manifest("bad", "d")), "bad/link": {Data: []byte("../../etc/passwd"), Mode: fs.ModeSymlink}}, skills.Options{}, "bad/link", skills.ErrSymlinkEscapes},
		{"absolute symlink", fstest.MapFS{"bad/SKILL.md": file(manifest("bad", "d")), "bad/link": {Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink}}, skills.Options{}, "bad/link", skills.ErrSymlinkEscapes},
		{"symlink through a symlink out", fstest.MapFS{"bad/SKILL.md": file(manifest("bad", "d")), "up": {Data: []byte(".."), Mode: fs.ModeSymlink}, "bad/link": {Data: []byte("../up/x"), Mode: fs.ModeSymlink}}, skills.Options{}, "bad/link", skills.ErrSymlinkEscapes},
		{"symlink loop", fstest.MapFS{"bad/SKILL.md": file(manifest("bad", "d")), "bad/a": {Data: []byte("b"), Mode: fs.ModeSymlink}, "bad/b": {Data: []byte("a"), Mode: fs.ModeSymlink}}, skills.Options{}, "bad/a", skills.ErrSymlinkEscapes},
		{"dangling symlink", fstest.MapFS{"bad/SKILL.md": file(manifest("bad", "d")), "bad/a": {Data: []byte("nothing"), Mode: fs.ModeSymlink}}, skills.Options{}, "bad/a", skills.ErrSymlinkEscapes},
		{"symlink to a directory", fstest.MapFS{"bad/SKILL.md": file(manifest("bad", "d")), "bad/d": {Data: []byte("../good"), Mode: fs.ModeSymlink}}, skills.Options{}, "bad/d", skills.ErrNotRegular},
		{"named pipe", fstest.MapFS{"bad/SKILL.md": file(manifest("bad", "d")), "bad/fifo": {Mode: fs.ModeNamedPipe}}, skills.Options{}, "bad/fifo", skills.ErrNotRegular},
		{"device", fstest.MapFS{"bad/SKILL.md": file(manifest("bad", "d")), "bad/dev": {Mode: fs.ModeDevice}}, skills.Options{}, "bad/dev", skills.ErrNotRegular},
		{"SKILL.md a directory", fstest.MapFS{"bad/SKILL.md/x": file("x")}, skills.Options{}, "bad/SKILL.md", skills.ErrNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := tt.fs
			fsys["good/SKILL.md"] = file(manifest("good", "A good skill"))
			set, err := skills.Load(fsys, &tt.opts)
			var se *skills.Error
			if !errors.As(err, &se) {
				t.Fatalf("Load error = %v, want a *skills.Error", err)
			}
			if se.Path != tt.path || !errors.Is(err, tt.want) {
				t.Errorf("error = %q (path %q), want path %q and %q", err, se.Path, tt.path, tt.want)
			}
			if !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q does not name %s", err, tt.path)
			}
			if set == nil || len(set.Skills()) != 1 || set.Skills()[0].Name != "good" {
				t.Fatalf("lenient Load kept %v, want only the good skill", set)
			}
			strict := tt.opts
			strict.Strict = true
			if set, err := skills.Load(fsys, &strict); set != nil || !errors.Is(err, tt.want) {
				t.Errorf("strict Load = %v, %v; want nil and %v", set, err, tt.want)
			}
		})
	}
}

func TestLoadLimits(t *testing.T) {
	fsys := fstest.MapFS{"s/SKILL.md": file(manifest("s", "d"))}
	for i := range skills.DefaultMaxFiles - 1 {
		fsys[fmt.Sprintf("s/f%03d", i)] = file("x")
	}
	if _, err := skills.Load(fsys, nil); err != nil {
		t.Fatalf("512 files: %v", err)
	}
	fsys["s/one-more"] = file("x")
	if _, err := skills.Load(fsys, nil); !errors.Is(err, skills.ErrTooManyFiles) {
		t.Fatalf("513 files: %v, want ErrTooManyFiles", err)
	}
	if _, err := skills.Load(fsys, &skills.Options{MaxFiles: -1}); err != nil {
		t.Fatalf("513 files, no limit: %v", err)
	}

	big := fstest.MapFS{"s/SKILL.md": file(manifest("s", "d")), "s/big": {Data: make([]byte, skills.DefaultMaxBytes)}}
	if _, err := skills.Load(big, nil); !errors.Is(err, skills.ErrTooLarge) {
		t.Fatalf("16 MiB + SKILL.md: %v, want ErrTooLarge", err)
	}
	set, err := skills.Load(big, &skills.Options{MaxBytes: -1, MaxFileBytes: -1})
	if err != nil {
		t.Fatalf("no limit: %v", err)
	}
	if got := set.Skills()[0].Size; got != skills.DefaultMaxBytes+int64(len(big["s/SKILL.md"].Data)) {
		t.Errorf("Size = %d", got)
	}
}

func TestLoadSymlinkInside(t *testing.T) {
	fsys := fstest.MapFS{
		"shared/LICENSE":  file("MIT"),
		"s/SKILL.md":      file(manifest("s", "d")),
		"s/LICENSE":       {Data: []byte("../shared/LICENSE"), Mode: fs.ModeSymlink},
		"s/via/LICENSE.2": {Data: []byte("../LICENSE"), Mode: fs.ModeSymlink},
	}
	set, err := skills.Load(fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"skill://s/LICENSE", "skill://s/via/LICENSE.2"} {
		data, f, err := set.ReadFile(u)
		if err != nil || string(data) != "MIT" || f.Digest != skills.Digest([]byte("MIT")) {
			t.Errorf("ReadFile(%s) = %q, %v", u, data, err)
		}
	}
}

// TestLoadDirFS checks links on a real disk: os.DirFS reports them and
// reads through them, so Load must catch the escape itself.
func TestLoadDirFS(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600))
	for _, n := range []string{"good", "bad"} {
		must(os.MkdirAll(filepath.Join(root, n), 0o755))
		must(os.WriteFile(filepath.Join(root, n, "SKILL.md"), []byte(manifest(n, "d")), 0o644))
	}
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "bad", "secret")))
	must(os.Symlink("SKILL.md", filepath.Join(root, "good", "alias.md")))

	set, err := skills.Load(os.DirFS(root), nil)
	if !errors.Is(err, skills.ErrSymlinkEscapes) || !strings.Contains(err.Error(), "bad/secret") {
		t.Fatalf("Load error = %v, want ErrSymlinkEscapes naming bad/secret", err)
	}
	if len(set.Skills()) != 1 || len(set.Skills()[0].Files) != 2 {
		t.Fatalf("skills = %v", set.Skills())
	}
	if _, err := skills.Load(os.DirFS(filepath.Join(root, "missing")), nil); err == nil {
		t.Error("Load of a missing root succeeded")
	}
}

func TestReadFileChanged(t *testing.T) {
	fsys := fstest.MapFS{
		"s/SKILL.md": file(manifest("s", "d")),
		"s/big.txt":  {Data: []byte(strings.Repeat("a", 100<<10))},
	}
	set, err := skills.Load(fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	if data, _, err := set.ReadFile("skill://s/big.txt"); err != nil || len(data) != 100<<10 {
		t.Fatalf("ReadFile = %d bytes, %v", len(data), err)
	}
	fsys["s/big.txt"] = &fstest.MapFile{Data: []byte(strings.Repeat("b", 100<<10))}
	if _, _, err := set.ReadFile("skill://s/big.txt"); !errors.Is(err, skills.ErrChanged) {
		t.Errorf("ReadFile of a changed file: %v, want ErrChanged", err)
	}
	fsys["s/big.txt"] = &fstest.MapFile{Data: []byte(strings.Repeat("a", 100<<10+1))}
	if _, _, err := set.ReadFile("skill://s/big.txt"); !errors.Is(err, skills.ErrChanged) {
		t.Errorf("ReadFile of a grown file: %v, want ErrChanged", err)
	}
	// Small files were kept in memory at Load, so they match their digests
	// whatever happens on disk.
	delete(fsys, "s/SKILL.md")
	if _, _, err := set.ReadFile("skill://s/SKILL.md"); err != nil {
		t.Errorf("ReadFile(SKILL.md) = %v", err)
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "pdf-processing": true, "a1-b2": true, strings.Repeat("a", 64): true,
		"": false, "-a": false, "a-": false, "a--b": false, "A": false, "a_b": false, "é": false,
		strings.Repeat("a", 65): false, "a b": false,
	} {
		if got := skills.ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestMIMETypes(t *testing.T) {
	fsys := fstest.MapFS{
		"s/SKILL.md":    file(manifest("s", "d")),
		"s/a.json":      file(`{"a":1}`),
		"s/a.yaml":      file("a: 1"),
		"s/a.sh":        file("echo"),
		"s/noext":       file("plain words"),
		"s/binary":      {Data: []byte{0, 1, 2, 3}},
		"s/latin1.txt":  {Data: []byte("caf\xe9")},
		"s/image.SVG":   file("<svg/>"),
		"s/doc.pdf":     file("%PDF-1.4"),
		"s/page.html":   file("<p>hi</p>"),
		"s/readme.text": file("x"),
	}
	set, err := skills.Load(fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range set.Skills()[0].Files {
		got[f.Path] = fmt.Sprintf("%s text=%v", f.MIMEType, f.Text)
	}
	want := map[string]string{
		"SKILL.md":    "text/markdown text=true",
		"a.json":      "application/json text=true",
		"a.yaml":      "application/yaml text=true",
		"a.sh":        "text/x-shellscript text=true",
		"noext":       "text/plain text=true",
		"binary":      "application/octet-stream text=false",
		"latin1.txt":  "text/plain text=false",
		"image.SVG":   "image/svg+xml text=true",
		"doc.pdf":     "application/pdf text=false",
		"page.html":   "text/html text=true",
		"readme.text": "text/plain text=true",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MIME types (-want +got):\n%s", diff)
	}
}

func TestSetEqual(t *testing.T) {
	a, _ := skills.Load(goodFS(), nil)
	b, _ := skills.Load(goodFS(), nil)
	if !a.Equal(b) {
		t.Error("two loads of one file system differ")
	}
	changed := goodFS()
	changed["pdf-processing/references/FORMS.md"] = file("# Forms, changed\n")
	c, _ := skills.Load(changed, nil)
	if a.Equal(c) {
		t.Error("a changed file went unnoticed")
	}
	moved := goodFS()
	moved["pdf-processing/references/more/x"] = file("x")
	d, _ := skills.Load(moved, nil)
	if a.Equal(d) || a.Equal(nil) {
		t.Error("an added file went unnoticed")
	}
}
