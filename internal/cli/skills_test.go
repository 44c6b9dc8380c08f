package cli

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/demo"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/skills"
)

func TestSkillsCommand(t *testing.T) {
	ts := httptest.NewServer(demo.New(nil))
	defer ts.Close()

	code, out, errOut := runCLI(t, "skills", ts.URL)
	if code != exitOK || !strings.Contains(out, "pdf-processing  3, ") || !strings.Contains(out, "skill://mcpkit/serving-skills/SKILL.md") {
		t.Fatalf("list: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "skills", "--json", ts.URL); code != exitOK || !strings.HasPrefix(out, `{"skills":[{`) {
		t.Errorf("--json: exit %d\n%s", code, out)
	}

	manifest, _ := fs.ReadFile(demo.Skills(), "pdf-processing/SKILL.md")
	code, out, errOut = runCLI(t, "skills", ts.URL, "pdf-processing")
	if code != exitOK || !strings.HasPrefix(out, string(manifest)) || !strings.Contains(out, "skill://pdf-processing/references/FORMS.md") {
		t.Fatalf("show: exit %d\n%s%s", code, out, errOut)
	}

	dir := t.TempDir()
	code, out, errOut = runCLI(t, "skills", ts.URL, "pdf-processing", "--save", dir)
	if code != exitOK || !strings.Contains(out, "saved pdf-processing (3 files, verified)") {
		t.Fatalf("--save: exit %d\n%s%s", code, out, errOut)
	}
	saved, err := skills.Load(os.DirFS(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	served, _ := skills.Load(demo.Skills(), nil)
	a, _ := json.Marshal(saved.Skills()[0])
	b, _ := json.Marshal(served.Skill("skill://pdf-processing/SKILL.md"))
	if string(a) != string(b) {
		t.Errorf("saved skill differs from the served one:\n%s\n%s", a, b)
	}
	if code, _, errOut := runCLI(t, "skills", ts.URL, "pdf-processing", "--save", dir); code != exitUsage || !strings.Contains(errOut, "already exists") {
		t.Errorf("--save again: exit %d, %s", code, errOut)
	}

	for _, tt := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"skills", ts.URL, "nope"}, exitUsage, `no skill named "nope"`},
		{[]string{"skills", ts.URL, "--save", dir}, exitUsage, "--save needs the NAME"},
		{[]string{"skills", ts.URL, "a", "b"}, exitUsage, "too many arguments"},
	} {
		if code, _, errOut := runCLI(t, tt.args...); code != tt.code || !strings.Contains(errOut, tt.stderr) {
			t.Errorf("%v: exit %d, stderr %s", tt.args, code, errOut)
		}
	}
}

// tamperedServer lists pdf-processing with a manifest that FORMS.md's bytes
// do not match, or with a file whose path climbs out of the skill.
func tamperedServer(t *testing.T, formsURI, formsDigest string) *httptest.Server {
	manifest := "---\nname: pdf-processing\ndescription: d\n---\n"
	s := mcp.NewServer(nil)
	s.AddMethod("skills/list", func(ctx context.Context, req *mcp.MethodRequest) (any, error) {
		return map[string]any{"skills": []any{map[string]any{
			"uri":         "skill://pdf-processing/SKILL.md",
			"frontmatter": map[string]any{"name": "pdf-processing", "description": "d"},
			"resources": []any{
				map[string]any{"uri": "skill://pdf-processing/SKILL.md", "digest": skills.Digest([]byte(manifest)), "size": len(manifest)},
				map[string]any{"uri": formsURI, "digest": formsDigest, "size": 5},
			},
		}}}, nil
	}, &mcp.MethodOptions{Extension: mcp.SkillsExtension})
	for uri, text := range map[string]string{"skill://pdf-processing/SKILL.md": manifest, formsURI: "forms"} {
		s.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
		})
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func TestSkillsSaveRefuses(t *testing.T) {
	for _, tt := range []struct {
		name, uri, digest, stderr string
	}{
		{"digest", "skill://pdf-processing/FORMS.md", skills.Digest([]byte("other")), "verification failed"},
		{"climbing path", "skill://pdf-processing/%2E%2E/evil", skills.Digest([]byte("forms")), "unsafe path element"},
		{"escaped slash", "skill://pdf-processing/a%2F..%2F..%2Fevil", skills.Digest([]byte("forms")), "unsafe path element"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := tamperedServer(t, tt.uri, tt.digest)
			dir := t.TempDir()
			code, _, errOut := runCLI(t, "skills", ts.URL, "pdf-processing", "--save", dir)
			if code != exitRequestFails || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("exit %d, stderr %s", code, errOut)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("something was written: %v", entries)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil")); err == nil {
				t.Error("a file was written outside DIR")
			}
		})
	}
}

// TestSkillsSaveHostileName: a server names its skill so that DIR/NAME
// climbs out of DIR. The user picks the skill by name or by URI (never
// seeing the name); either way nothing is written outside DIR.
func TestSkillsSaveHostileName(t *testing.T) {
	for _, name := range []string{"../escape", "../../x"} {
		for _, by := range []string{"name", "uri"} {
			t.Run(name+" by "+by, func(t *testing.T) {
				uri := "skill://evil/SKILL.md"
				manifest := "---\nname: " + name + "\ndescription: d\n---\n"
				s := mcp.NewServer(nil)
				s.AddMethod("skills/list", func(ctx context.Context, req *mcp.MethodRequest) (any, error) {
					return map[string]any{"skills": []any{map[string]any{
						"uri":         uri,
						"frontmatter": map[string]any{"name": name, "description": "d"},
						"resources":   []any{map[string]any{"uri": uri, "digest": skills.Digest([]byte(manifest)), "size": len(manifest)}},
					}}}, nil
				}, &mcp.MethodOptions{Extension: mcp.SkillsExtension})
				s.AddResource(&mcp.Resource{URI: uri, Name: "evil"}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: manifest}}}, nil
				})
				ts := httptest.NewServer(s)
				defer ts.Close()
				top := t.TempDir()
				dir := filepath.Join(top, "a", "b")
				pick := name
				if by == "uri" {
					pick = uri
				}
				code, out, errOut := runCLI(t, "skills", ts.URL, pick, "--save", dir)
				if code == exitOK {
					t.Errorf("exit %d\n%s%s", code, out, errOut)
				}
				var written []string
				filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						written = append(written, p)
					}
					return nil
				})
				if len(written) != 0 {
					t.Errorf("files written: %v", written)
				}
			})
		}
	}
}
