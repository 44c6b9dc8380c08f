package doccheck

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/mcp"
)

// policyFiles are the policy files of the repository, each linked from the README.
var policyFiles = []string{"CHANGELOG.md", "VERSIONING.md", "DEPENDENCIES.md", "ROADMAP.md", "SECURITY.md", "CONTRIBUTING.md"}

// goMod is what TestPolicies reads of a go.mod.
type goMod struct {
	path   string // the file, relative to the root
	module string
	goVer  string
	direct []string // required module paths not marked // indirect
}

func readGoMods(t *testing.T, root string) []goMod {
	t.Helper()
	var mods []goMod
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.Name() != "go.mod" {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, _ := filepath.Rel(root, p)
		m := goMod{path: rel}
		inRequire := false
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			fields := strings.Fields(line)
			switch {
			case len(fields) == 0:
			case fields[0] == "module" && len(fields) > 1:
				m.module = fields[1]
			case fields[0] == "go" && len(fields) > 1:
				m.goVer = fields[1]
			case line == "require (":
				inRequire = true
			case inRequire && line == ")":
				inRequire = false
			case inRequire || (fields[0] == "require" && len(fields) > 2):
				if fields[0] == "require" {
					fields = fields[1:]
				}
				if !strings.Contains(line, "// indirect") {
					m.direct = append(m.direct, fields[0])
				}
			}
		}
		mods = append(mods, m)
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) < 2 {
		t.Fatalf("found %d go.mod files, want the root and its nested modules", len(mods))
	}
	return mods
}

func readFile(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPolicies keeps the policy files true to the code where that can be checked.
func TestPolicies(t *testing.T) {
	root := repoRoot(t)
	readme := readFile(t, root, "README.md")
	for _, f := range policyFiles {
		if len(readFile(t, root, f)) < 500 {
			t.Errorf("%s is nearly empty", f)
		}
		if !strings.Contains(readme, "("+f+")") {
			t.Errorf("README.md does not link %s", f)
		}
	}
	mods := readGoMods(t, root)

	t.Run("changelog", func(t *testing.T) {
		c := readFile(t, root, "CHANGELOG.md")
		if !strings.HasPrefix(c, "# Changelog\n") || !strings.Contains(c, "\n## [Unreleased]\n") {
			t.Error("CHANGELOG.md does not follow Keep a Changelog: a '# Changelog' title and a '## [Unreleased]' section")
		}
		allowed := []string{"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
		for _, h := range regexp.MustCompile(`(?m)^### (.+)$`).FindAllStringSubmatch(c, -1) {
			if !slices.Contains(allowed, h[1]) {
				t.Errorf("CHANGELOG.md: section %q is none of Keep a Changelog's %v", h[1], allowed)
			}
		}
		for _, h := range regexp.MustCompile(`(?m)^## (.+)$`).FindAllStringSubmatch(c, -1) {
			if h[1] != "[Unreleased]" && !regexp.MustCompile(`^\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}$`).MatchString(h[1]) {
				t.Errorf("CHANGELOG.md: release heading %q is not '[X.Y.Z] - YYYY-MM-DD'", h[1])
			}
		}
	})

	t.Run("versioning", func(t *testing.T) {
		v := readFile(t, root, "VERSIONING.md")
		var listed []string
		for _, m := range regexp.MustCompile(`(?m)^\| (\d{4}-\d{2}-\d{2}) \|`).FindAllStringSubmatch(v, -1) {
			listed = append(listed, m[1])
		}
		served := mcp.NewServer(nil).SupportedVersions()
		if diff := cmp.Diff(served, listed); diff != "" {
			t.Errorf("VERSIONING.md's revisions differ from what NewServer serves (-served +listed):\n%s", diff)
		}
		// The minimum Go release: the same in every go.mod, in VERSIONING.md and in the README.
		want := mods[0].goVer
		for _, m := range mods {
			if m.goVer != want {
				t.Errorf("%s says go %s, %s says go %s: every module names the same oldest release", m.path, m.goVer, mods[0].path, want)
			}
		}
		for name, text := range map[string]string{"VERSIONING.md": v, "README.md": readme} {
			if !strings.Contains(text, "go "+want) {
				t.Errorf("%s does not name the minimum Go release, go %s", name, want)
			}
		}
	})

	t.Run("dependencies", func(t *testing.T) {
		deps := readFile(t, root, "DEPENDENCIES.md")
		peers := []string{"github.com/modelcontextprotocol/go-sdk", "github.com/mark3labs/mcp-go"}
		nestedOnly := []string{"github.com/redis/go-redis", "go.opentelemetry.io/"}
		for _, m := range mods {
			for _, d := range m.direct {
				if strings.HasPrefix(d, ModulePath) {
					continue // the repository's own modules
				}
				if !strings.Contains(deps, "`"+d+"`") {
					t.Errorf("%s requires %s, which DEPENDENCIES.md does not name", m.path, d)
				}
				if m.module != ModulePath {
					continue
				}
				if !strings.Contains(readme, "`"+d+"`") {
					t.Errorf("the core module requires %s, which the README's dependency table does not name", d)
				}
				for _, p := range append(peers, nestedOnly...) {
					if strings.HasPrefix(d, p) {
						t.Errorf("the core module requires %s: peers and heavy dependencies belong in nested modules (DEPENDENCIES.md)", d)
					}
				}
			}
		}
	})

	t.Run("roadmap", func(t *testing.T) {
		r := readFile(t, root, "ROADMAP.md")
		for _, ext := range []string{mcp.TasksExtension, mcp.SkillsExtension} {
			if !strings.Contains(r, ext) {
				t.Errorf("ROADMAP.md does not track the extension %s, which mcpkit implements", ext)
			}
		}
		for _, rev := range mcp.NewServer(nil).SupportedVersions() {
			if !strings.Contains(r, rev) && rev != "2025-06-18" && rev != "2025-03-26" && rev != "2024-11-05" {
				t.Errorf("ROADMAP.md does not mention revision %s", rev)
			}
		}
	})

	t.Run("contributing", func(t *testing.T) {
		c := readFile(t, root, "CONTRIBUTING.md")
		scripts := readFile(t, root, "scripts/test.sh") + readFile(t, root, "scripts/lib.sh")
		for _, v := range regexp.MustCompile(`MCPKIT_[A-Z_]+`).FindAllString(c, -1) {
			if !strings.Contains(scripts, v) {
				t.Errorf("CONTRIBUTING.md names %s, which scripts/test.sh does not know", v)
			}
		}
		for _, f := range regexp.MustCompile("`((?:internal|conformance|scripts)/[^`* ]+)`").FindAllStringSubmatch(c, -1) {
			if _, err := os.Stat(filepath.Join(root, f[1])); err != nil {
				t.Errorf("CONTRIBUTING.md names %s, which does not exist", f[1])
			}
		}
	})
}
