package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/skills"
)

const pdfManifest = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  version: \"1.0\"\n---\n\nSkill body.\n"

func skillsFS() fstest.MapFS {
	return fstest.MapFS{
		"pdf-processing/SKILL.md":            {Data: []byte(pdfManifest)},
		"pdf-processing/references/FORMS.md": {Data: []byte("Supporting content.\n")},
		"pdf-processing/logo.png":            {Data: []byte("\x89PNG\r\n\x1a\n\x00")},
	}
}

func skillsClient(t *testing.T, s *mcp.Server) *client.Client {
	t.Helper()
	c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestSkillsClient(t *testing.T) {
	var reads atomic.Int32
	s := mcp.NewServer(&mcp.ServerOptions{Interceptors: []mcp.Interceptor{
		func(ctx context.Context, call *mcp.Call, next mcp.CallHandler) mcp.Outcome {
			if call.Method == "resources/read" {
				reads.Add(1)
			}
			return next(ctx, call)
		},
	}})
	if err := s.AddSkills(skillsFS(), nil); err != nil {
		t.Fatal(err)
	}
	c := skillsClient(t, s)
	ctx := context.Background()

	var list []*client.Skill
	for sk, err := range c.ListSkills(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, sk)
	}
	if len(list) != 1 || list[0].Name != "pdf-processing" || len(list[0].Files) != 3 || reads.Load() != 0 {
		t.Fatalf("ListSkills = %+v after %d reads", list, reads.Load())
	}
	got, err := c.GetSkill(ctx, list[0].URI)
	if err != nil || got.URI != list[0].URI || len(got.Files) != 3 {
		t.Fatalf("GetSkill = %+v, %v", got, err)
	}
	if _, err := c.GetSkill(ctx, "skill://nope/SKILL.md"); err == nil {
		t.Error("GetSkill of an unknown skill succeeded")
	}

	l, err := c.LoadSkill(ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	if string(l.Manifest) != pdfManifest || string(l.Body) != "\nSkill body.\n" || reads.Load() != 1 {
		t.Errorf("LoadSkill: manifest %q, body %q, %d reads", l.Manifest, l.Body, reads.Load())
	}
	for _, f := range []string{"skill://pdf-processing/references/FORMS.md", "skill://pdf-processing/logo.png"} {
		data, err := l.ReadFile(ctx, f)
		if err != nil || skills.Digest(data) != mustFile(t, got, f).Digest {
			t.Errorf("ReadFile(%s) = %q, %v", f, data, err)
		}
	}
	if _, err := l.ReadFile(ctx, "skill://pdf-processing/other.md"); !errors.Is(err, client.ErrSkillNotListed) {
		t.Errorf("ReadFile of an unlisted file: %v", err)
	}
	if reads.Load() != 3 {
		t.Errorf("%d reads, want 3: an unlisted file is not asked for", reads.Load())
	}
}

func mustFile(t *testing.T, s *client.Skill, uri string) client.SkillFile {
	t.Helper()
	f, ok := s.File(uri)
	if !ok {
		t.Fatalf("%s not in the manifest", uri)
	}
	return f
}

// hostileServer lists the entry as it is and serves body as the SKILL.md.
func hostileServer(t *testing.T, entry map[string]any, body string) *mcp.Server {
	s := mcp.NewServer(nil)
	s.AddMethod("skills/list", func(ctx context.Context, req *mcp.MethodRequest) (any, error) {
		return map[string]any{"skills": []any{entry}}, nil
	}, &mcp.MethodOptions{Extension: mcp.SkillsExtension})
	for _, uri := range []string{"skill://pdf-processing/SKILL.md", "skill://pdf-processing/references/FORMS.md"} {
		text := body
		if strings.HasSuffix(uri, "FORMS.md") {
			text = "Supporting content.\n"
		}
		s.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
		})
	}
	return s
}

func pdfEntry(manifest string) map[string]any {
	return map[string]any{
		"uri":         "skill://pdf-processing/SKILL.md",
		"frontmatter": map[string]any{"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents", "metadata": map[string]any{"version": "1.0"}},
		"resources": []any{
			map[string]any{"uri": "skill://pdf-processing/SKILL.md", "digest": skills.Digest([]byte(manifest)), "size": len(manifest)},
			map[string]any{"uri": "skill://pdf-processing/references/FORMS.md", "digest": skills.Digest([]byte("Supporting content.\n")), "size": 20},
		},
	}
}

func TestLoadSkillVerifies(t *testing.T) {
	withLicense := strings.Replace(pdfManifest, "---\n\n", "license: MIT\n---\n\n", 1)
	evil := strings.Replace(pdfManifest, "Extract, fill, and assemble PDF documents", "Exfiltrate credentials", 1)
	tests := []struct {
		name  string
		entry map[string]any
		body  string
		want  error
	}{
		{"digest", pdfEntry(pdfManifest), strings.Replace(pdfManifest, "Skill body.", "Evil body!!", 1), client.ErrSkillDigest},
		{"size", pdfEntry(pdfManifest), pdfManifest + "extra bytes\n", client.ErrSkillSize},
		// The manifest matches the bytes served, but the frontmatter in
		// them is not the entry's.
		{"frontmatter", pdfEntry(evil), evil, client.ErrSkillFrontmatter},
		{"no frontmatter", pdfEntry("plain"), "plain", client.ErrSkillFrontmatter},
		{"a field more in the file", pdfEntry(withLicense), withLicense, client.ErrSkillFrontmatter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := skillsClient(t, hostileServer(t, tt.entry, tt.body))
			ctx := context.Background()
			var sk *client.Skill
			for s, err := range c.ListSkills(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				sk = s
			}
			l, err := c.LoadSkill(ctx, sk)
			var se *client.SkillError
			if !errors.Is(err, tt.want) || !errors.As(err, &se) || se.URI != sk.URI || l != nil {
				t.Errorf("LoadSkill = %v, %v; want a *SkillError wrapping %v", l, err, tt.want)
			}
		})
	}

	// Frontmatter fields compare by value: key order and a null field do
	// not matter.
	reordered := "---\ndescription: Extract, fill, and assemble PDF documents\nmetadata: {version: \"1.0\"}\nname: pdf-processing\nlicense: null\n---\n"
	c := skillsClient(t, hostileServer(t, pdfEntry(reordered), reordered))
	for s, err := range c.ListSkills(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.LoadSkill(context.Background(), s); err != nil {
			t.Errorf("LoadSkill of an equal frontmatter: %v", err)
		}
	}
}

func TestSkillEntryChecks(t *testing.T) {
	good := pdfEntry(pdfManifest)
	mutate := func(f func(m map[string]any)) map[string]any {
		b, _ := json.Marshal(good)
		var m map[string]any
		json.Unmarshal(b, &m)
		f(m)
		return m
	}
	res := func(m map[string]any) []any { return m["resources"].([]any) }
	tests := map[string]map[string]any{
		"uri not a SKILL.md":  mutate(func(m map[string]any) { m["uri"] = "skill://pdf-processing" }),
		"frontmatter missing": mutate(func(m map[string]any) { delete(m, "frontmatter") }),
		"no name":             mutate(func(m map[string]any) { delete(m["frontmatter"].(map[string]any), "name") }),
		"no description":      mutate(func(m map[string]any) { m["frontmatter"].(map[string]any)["description"] = "" }),
		"resources missing":   mutate(func(m map[string]any) { delete(m, "resources") }),
		"resources a number":  mutate(func(m map[string]any) { m["resources"] = 3 }),
		"file outside":        mutate(func(m map[string]any) { res(m)[1].(map[string]any)["uri"] = "skill://other/x" }),
		"file twice":          mutate(func(m map[string]any) { res(m)[1] = res(m)[0] }),
		"bad digest":          mutate(func(m map[string]any) { res(m)[1].(map[string]any)["digest"] = "md5:00" }),
		"negative size":       mutate(func(m map[string]any) { res(m)[1].(map[string]any)["size"] = -1 }),
		"no SKILL.md":         mutate(func(m map[string]any) { m["resources"] = res(m)[1:] }),
		// The name becomes a directory name in `mcpkit skills --save`.
		"name climbing":       mutate(func(m map[string]any) { m["frontmatter"].(map[string]any)["name"] = "../escape" }),
		"name climbing twice": mutate(func(m map[string]any) { m["frontmatter"].(map[string]any)["name"] = "../../x" }),
		"name uppercase":      mutate(func(m map[string]any) { m["frontmatter"].(map[string]any)["name"] = "PDF-processing" }),
		"name doubled hyphen": mutate(func(m map[string]any) { m["frontmatter"].(map[string]any)["name"] = "pdf--processing" }),
		"name too long":       mutate(func(m map[string]any) { m["frontmatter"].(map[string]any)["name"] = strings.Repeat("a", 65) }),
		"name not the uri's":  mutate(func(m map[string]any) { m["frontmatter"].(map[string]any)["name"] = "other" }),
	}
	for name, entry := range tests {
		t.Run(name, func(t *testing.T) {
			c := skillsClient(t, hostileServer(t, entry, pdfManifest))
			for _, err := range c.ListSkills(context.Background()) {
				var pe *client.ProtocolError
				if !errors.As(err, &pe) {
					t.Errorf("ListSkills error = %v, want a *ProtocolError", err)
				}
				return
			}
			t.Error("ListSkills accepted the entry")
		})
	}
	dynamic := mutate(func(m map[string]any) { m["resources"] = "dynamic" })
	c := skillsClient(t, hostileServer(t, dynamic, pdfManifest))
	for s, err := range c.ListSkills(context.Background()) {
		if err != nil || !s.Dynamic || s.Files != nil {
			t.Fatalf("dynamic entry: %+v, %v", s, err)
		}
		l, err := c.LoadSkill(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.ReadFile(context.Background(), "skill://pdf-processing/references/FORMS.md"); err != nil {
			t.Errorf("dynamic ReadFile: %v", err)
		}
		if _, err := l.ReadFile(context.Background(), "skill://elsewhere/x"); !errors.Is(err, client.ErrSkillNotListed) {
			t.Errorf("dynamic ReadFile outside the skill: %v", err)
		}
	}
}

// FuzzSkillEntry decodes hostile skill entries: an entry either fails to
// decode or satisfies every rule UnmarshalJSON promises.
func FuzzSkillEntry(f *testing.F) {
	good, _ := json.Marshal(pdfEntry(pdfManifest))
	f.Add(good)
	f.Add([]byte(`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":"dynamic"}`))
	f.Add([]byte(`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:` + strings.Repeat("0", 64) + `","size":0}]}`))
	f.Add([]byte(`{"uri":"/SKILL.md","frontmatter":[],"resources":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s client.Skill
		if err := json.Unmarshal(data, &s); err != nil {
			return
		}
		named := s.URI == s.Name+"/SKILL.md" || strings.HasSuffix(s.URI, "/"+s.Name+"/SKILL.md")
		if !named || !skills.ValidName(s.Name) || s.Description == "" {
			t.Fatalf("accepted %+v", s)
		}
		if s.Dynamic {
			if s.Files != nil {
				t.Fatalf("dynamic with files: %+v", s)
			}
			return
		}
		dir := strings.TrimSuffix(s.URI, "SKILL.md")
		seen := map[string]bool{}
		for _, fl := range s.Files {
			if (fl.URI != s.URI && !strings.HasPrefix(fl.URI, dir)) || seen[fl.URI] || fl.Size < 0 || len(fl.Digest) != 71 {
				t.Fatalf("accepted file %+v of %s", fl, s.URI)
			}
			seen[fl.URI] = true
		}
		if !seen[s.URI] {
			t.Fatalf("accepted %s without its SKILL.md", s.URI)
		}
	})
}
