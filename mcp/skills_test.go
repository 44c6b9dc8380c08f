package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/internal/mcpwire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/skills"
)

func skillManifest(name, desc string) []byte {
	return []byte("---\nname: " + name + "\ndescription: " + desc + "\nmetadata:\n  author: test\n---\n# " + name + "\n")
}

// skillsFS has a skill with a subdirectory and a binary file, and a nested
// skill.
func skillsFS() fstest.MapFS {
	return fstest.MapFS{
		"pdf-processing/SKILL.md":            {Data: skillManifest("pdf-processing", "Extract, fill, and assemble PDF documents")},
		"pdf-processing/references/FORMS.md": {Data: []byte("# Forms\n")},
		"pdf-processing/logo.png":            {Data: []byte("\x89PNG\r\n\x1a\n\x00\x01")},
		"acme/csv-report/SKILL.md":           {Data: skillManifest("csv-report", "Summarise CSV files")},
	}
}

func newSkillsServer(t *testing.T, opts *ServerOptions, so *SkillsOptions) *Server {
	t.Helper()
	s := NewServer(opts)
	if err := s.AddSkills(skillsFS(), so); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSkillsDiscover(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts *SkillsOptions
		want string
	}{
		{"no optional features", nil, `{}`},
		{"directory read", &SkillsOptions{DirectoryRead: true}, `{"directoryRead":true}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSkillsServer(t, nil, tt.opts)
			caps := mustResult(t, s, "server/discover", "")["capabilities"].(map[string]any)
			ext, _ := json.Marshal(caps["extensions"].(map[string]any)[SkillsExtension])
			if string(ext) != tt.want {
				t.Errorf("extension settings = %s, want %s", ext, tt.want)
			}
			if caps["resources"] == nil {
				t.Error("resources capability not declared")
			}
		})
	}
	// An empty skills folder still declares both.
	s := NewServer(nil)
	if err := s.AddSkills(fstest.MapFS{}, nil); err != nil {
		t.Fatal(err)
	}
	caps := mustResult(t, s, "server/discover", "")["capabilities"].(map[string]any)
	if caps["resources"] == nil || caps["extensions"] == nil {
		t.Errorf("capabilities = %v", caps)
	}
	if got := mustResult(t, s, "skills/list", "")["skills"]; len(got.([]any)) != 0 {
		t.Errorf("skills = %v", got)
	}
	if got := mustResult(t, s, "resources/list", "")["resources"]; len(got.([]any)) != 0 {
		t.Errorf("resources = %v", got)
	}
}

func TestSkillsList(t *testing.T) {
	s := newSkillsServer(t, &ServerOptions{PageSize: 1, Cache: CacheOptions{TTL: time.Minute}}, nil)
	var uris []string
	cursor := ""
	for page := 0; ; page++ {
		res := mustResult(t, s, "skills/list", cursorParams(cursor))
		if res["ttlMs"] != float64(60000) || res["cacheScope"] != "public" {
			t.Errorf("page %d: ttlMs %v cacheScope %v", page, res["ttlMs"], res["cacheScope"])
		}
		list := res["skills"].([]any)
		if len(list) != 1 {
			t.Fatalf("page %d has %d skills, want 1 (PageSize)", page, len(list))
		}
		entry := list[0].(map[string]any)
		uris = append(uris, entry["uri"].(string))
		if entry["uri"] == "skill://pdf-processing/SKILL.md" {
			want := map[string]any{"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents", "metadata": map[string]any{"author": "test"}}
			if diff := cmp.Diff(want, entry["frontmatter"]); diff != "" {
				t.Errorf("frontmatter (-want +got):\n%s", diff)
			}
			res := entry["resources"].([]any)
			if len(res) != 3 {
				t.Fatalf("resources = %v", res)
			}
			first := res[0].(map[string]any)
			manifest := skillsFS()["pdf-processing/SKILL.md"].Data
			if first["uri"] != entry["uri"] || first["digest"] != skills.Digest(manifest) || first["size"] != float64(len(manifest)) {
				t.Errorf("SKILL.md resource = %v", first)
			}
		}
		next, _ := res["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if diff := cmp.Diff([]string{"skill://acme/csv-report/SKILL.md", "skill://pdf-processing/SKILL.md"}, uris); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	if e := mustError(t, s, "skills/list", `{"cursor":"nonsense"}`); e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("bad cursor: %d %s", e.Code, e.Message)
	}
}

func TestSkillsGet(t *testing.T) {
	s := newSkillsServer(t, nil, nil)
	res := mustResult(t, s, "skills/get", `{"uri":"skill://acme/csv-report/SKILL.md"}`)
	skill := res["skill"].(map[string]any)
	if skill["uri"] != "skill://acme/csv-report/SKILL.md" || res["nextCursor"] != nil || res["ttlMs"] == nil || res["cacheScope"] == nil {
		t.Errorf("skills/get = %v", res)
	}
	list := mustResult(t, s, "skills/list", "")["skills"].([]any)
	if diff := cmp.Diff(list[0], skill); diff != "" {
		t.Errorf("skills/get differs from the listing's entry (-list +get):\n%s", diff)
	}
	for _, params := range []string{
		`{"uri":"skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md"}`,
		`{"uri":"skill://pdf-processing/references/FORMS.md"}`,
		`{"uri":"skill://pdf-processing"}`,
		`{"uri":7}`,
		`{}`,
	} {
		if e := mustError(t, s, "skills/get", params); e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("skills/get %s: %d %s, want -32602", params, e.Code, e.Message)
		}
	}
}

func TestSkillsResources(t *testing.T) {
	s := newSkillsServer(t, nil, nil)
	list := mustResult(t, s, "resources/list", "")["resources"].([]any)
	var got []map[string]any
	for _, r := range list {
		got = append(got, r.(map[string]any))
	}
	manifest := skillsFS()["pdf-processing/SKILL.md"].Data
	want := []map[string]any{
		{"uri": "skill://acme/csv-report/SKILL.md", "name": "csv-report", "description": "Summarise CSV files", "mimeType": "text/markdown", "size": float64(len(skillManifest("csv-report", "Summarise CSV files")))},
		{"uri": "skill://pdf-processing/SKILL.md", "name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents", "mimeType": "text/markdown", "size": float64(len(manifest))},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resources/list: only the SKILL.md files (-want +got):\n%s", diff)
	}

	read := func(uri string) map[string]any {
		t.Helper()
		res := mustResult(t, s, "resources/read", `{"uri":"`+uri+`"}`)
		return res["contents"].([]any)[0].(map[string]any)
	}
	if c := read("skill://pdf-processing/SKILL.md"); c["text"] != string(manifest) || c["mimeType"] != "text/markdown" {
		t.Errorf("SKILL.md = %v", c)
	}
	if c := read("skill://pdf-processing/references/FORMS.md"); c["text"] != "# Forms\n" {
		t.Errorf("FORMS.md = %v", c)
	}
	c := read("skill://pdf-processing/logo.png")
	blob, _ := base64.StdEncoding.DecodeString(c["blob"].(string))
	if c["mimeType"] != "image/png" || string(blob) != string(skillsFS()["pdf-processing/logo.png"].Data) {
		t.Errorf("logo.png = %v", c)
	}
	for _, uri := range []string{"skill://pdf-processing/missing.md", "skill://pdf-processing", "skill://nope/SKILL.md"} {
		if e := mustError(t, s, "resources/read", `{"uri":"`+uri+`"}`); e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("resources/read %s: %d, want -32602", uri, e.Code)
		}
	}

	// A resource registered by the program wins over a skill file.
	s.AddResource(&Resource{URI: "skill://pdf-processing/SKILL.md", Name: "mine"}, func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{Text: "mine"}}}, nil
	})
	if c := read("skill://pdf-processing/SKILL.md"); c["text"] != "mine" {
		t.Errorf("after AddResource: %v", c)
	}
	if n := len(mustResult(t, s, "resources/list", "")["resources"].([]any)); n != 2 {
		t.Errorf("resources/list has %d entries, want 2", n)
	}
}

func TestSkillsDirectoryRead(t *testing.T) {
	s := newSkillsServer(t, &ServerOptions{PageSize: 2}, &SkillsOptions{DirectoryRead: true})
	var got []string
	cursor := ""
	for {
		res := mustResult(t, s, "resources/directory/read", `{`+cursorMember(cursor)+`"uri":"skill://pdf-processing"}`)
		for _, r := range res["resources"].([]any) {
			m := r.(map[string]any)
			got = append(got, m["uri"].(string)+" "+m["mimeType"].(string))
		}
		next, _ := res["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	want := []string{
		"skill://pdf-processing/SKILL.md text/markdown",
		"skill://pdf-processing/logo.png image/png",
		"skill://pdf-processing/references inode/directory",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("directory (-want +got):\n%s", diff)
	}
	sub := mustResult(t, s, "resources/directory/read", `{"uri":"skill://pdf-processing/references/"}`)["resources"].([]any)
	if len(sub) != 1 || sub[0].(map[string]any)["uri"] != "skill://pdf-processing/references/FORMS.md" {
		t.Errorf("references/ = %v", sub)
	}
	for _, uri := range []string{"skill://pdf-processing/SKILL.md", "skill://acme", "skill://nope", "file:///etc"} {
		if e := mustError(t, s, "resources/directory/read", `{"uri":"`+uri+`"}`); e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: %d %s, want -32602", uri, e.Code, e.Message)
		}
	}

	// Without DirectoryRead the method does not exist.
	s = newSkillsServer(t, nil, nil)
	if e := mustError(t, s, "resources/directory/read", `{"uri":"skill://pdf-processing"}`); e.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("without DirectoryRead: %d, want -32601", e.Code)
	}
}

func TestAddSkillsRefusals(t *testing.T) {
	fsys := skillsFS()
	fsys["broken/SKILL.md"] = &fstest.MapFile{Data: []byte("no frontmatter")}
	s := NewServer(nil)
	err := s.AddSkills(fsys, nil)
	var se *skills.Error
	if !errors.As(err, &se) || se.Path != "broken/SKILL.md" || !errors.Is(err, skills.ErrNoFrontmatter) {
		t.Fatalf("AddSkills error = %v, want a *skills.Error for broken/SKILL.md", err)
	}
	if n := len(mustResult(t, s, "skills/list", "")["skills"].([]any)); n != 2 {
		t.Errorf("lenient: %d skills served, want the 2 good ones", n)
	}

	s = NewServer(nil)
	if err := s.AddSkills(fsys, &SkillsOptions{Options: skills.Options{Strict: true}}); !errors.Is(err, skills.ErrNoFrontmatter) {
		t.Fatalf("strict AddSkills error = %v", err)
	}
	if e := mustError(t, s, "skills/list", ""); e.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("strict: skills/list after a refused AddSkills: %d, want -32601", e.Code)
	}
	if err := s.AddSkills(fstest.MapFS{"x/SKILL.md": {Data: skillManifest("x", "d")}, "x/big": {Data: make([]byte, 100)}}, &SkillsOptions{Options: skills.Options{MaxBytes: 50}}); !errors.Is(err, skills.ErrTooLarge) {
		t.Errorf("MaxBytes: %v", err)
	}
}

func TestSkillsLegacy(t *testing.T) {
	s := newSkillsServer(t, nil, &SkillsOptions{DirectoryRead: true})
	c := newLegacyHTTP(t, s)
	rpcOn := func(c *legacyClient, body string) map[string]any {
		t.Helper()
		resp := c.post(body)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") {
			for line := range strings.SplitSeq(string(b), "\n") {
				if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, `"id"`) {
					b = []byte(d)
				}
			}
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v: %s", body, err, b)
		}
		return m
	}
	rpc := func(body string) map[string]any { t.Helper(); return rpcOn(c, body) }
	init := rpcOn(&legacyClient{t: t, url: c.url}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	caps := init["result"].(map[string]any)["capabilities"].(map[string]any)
	if caps["resources"] == nil || caps["extensions"].(map[string]any)[SkillsExtension] == nil {
		t.Errorf("legacy capabilities = %v", caps)
	}
	lr := rpc(`{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{}}`)
	list, ok := lr["result"].(map[string]any)
	if !ok {
		t.Fatalf("legacy skills/list = %v", lr)
	}
	if len(list["skills"].([]any)) != 2 || list["ttlMs"] != nil {
		t.Errorf("legacy skills/list = %v", list)
	}
	get := rpc(`{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{"uri":"nope"}}`)
	if e, _ := get["error"].(map[string]any); e == nil || e["code"] != float64(jsonrpc.CodeInvalidParams) {
		t.Errorf("legacy skills/get unknown = %v", get)
	}
	dir := rpc(`{"jsonrpc":"2.0","id":4,"method":"resources/directory/read","params":{"uri":"skill://pdf-processing/references"}}`)["result"].(map[string]any)
	if len(dir["resources"].([]any)) != 1 {
		t.Errorf("legacy directory read = %v", dir)
	}
	read := rpc(`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"skill://pdf-processing/references/FORMS.md"}}`)["result"].(map[string]any)
	if read["contents"].([]any)[0].(map[string]any)["text"] != "# Forms\n" {
		t.Errorf("legacy read = %v", read)
	}
}

// TestSkillsWatch changes a skills folder on disk and waits for the
// listener of another replica, sharing the Bus, to hear of it.
func TestSkillsWatch(t *testing.T) {
	root := t.TempDir()
	write := func(rel string, data []byte) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one/SKILL.md", skillManifest("one", "First"))
	bus := &LocalBus{}
	a := NewServer(&ServerOptions{Bus: bus})
	if err := a.AddSkills(os.DirFS(root), &SkillsOptions{Watch: 10 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Shutdown(context.Background()) })
	b := NewServer(&ServerOptions{Bus: bus})
	b.AddResource(&Resource{URI: "test://x", Name: "x"}, func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error) { return nil, nil })
	t.Cleanup(func() { b.Shutdown(context.Background()) })

	for _, srv := range []*Server{a, b} {
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		st := openSkillsListener(t, ts.URL, `{"resourcesListChanged":true}`)
		write("two/SKILL.md", skillManifest("two", "Second "+ts.URL))
		if m := st.nextMethod(t); m != "notifications/resources/list_changed" {
			t.Fatalf("got %s, want notifications/resources/list_changed", m)
		}
	}
	// Once the change has been seen, every read serves it.
	if list := mustResult(t, a, "skills/list", "")["skills"].([]any); len(list) != 2 {
		t.Fatalf("skills/list = %v after the change was announced", list)
	}
}

// skillsListener is an open subscriptions/listen stream.
type skillsListener struct {
	methods chan string
}

func openSkillsListener(t *testing.T, url, filter string) *skillsListener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := mcpwire.Request{Method: "subscriptions/listen", Params: `{"notifications":` + filter + `}`}.NewRequest(ctx, url)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		cancel()
		t.Fatalf("listen: status %d", resp.StatusCode)
	}
	st := &skillsListener{methods: make(chan string, 100)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 0, 4096)
		chunk := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(chunk)
			buf = append(buf, chunk[:n]...)
			for {
				i := strings.Index(string(buf), "\n")
				if i < 0 {
					break
				}
				line := string(buf[:i])
				buf = buf[i+1:]
				if d, ok := strings.CutPrefix(line, "data: "); ok {
					var m struct{ Method string }
					if json.Unmarshal([]byte(d), &m) == nil && m.Method != "" {
						st.methods <- m.Method
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
		<-done
	})
	// The stream is open once its first event (the acknowledgement)
	// arrives.
	if m := st.nextMethod(t); m != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first event %s, want the acknowledgement", m)
	}
	return st
}

func (st *skillsListener) nextMethod(t *testing.T) string {
	t.Helper()
	select {
	case m := <-st.methods:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no notification within 5 s")
	}
	return ""
}

// TestSkillsFileFitsResponse: AddSkills refuses a skill whose file fits
// the skill limits but whose resources/read response would pass the
// server's MaxResponseBytes (base64 grows a blob by a third), instead of
// listing a file that can never be read; a file that fits is read whole.
func TestSkillsFileFitsResponse(t *testing.T) {
	s := NewServer(&ServerOptions{Quotas: QuotaOptions{MaxResponseBytes: 1 << 20}, Logger: discardLogger()})
	blob := func(n int) *fstest.MapFile { return &fstest.MapFile{Data: bytes.Repeat([]byte{0, 1, 2, 0xff}, n/4)} }
	fsys := fstest.MapFS{
		"big/SKILL.md":   {Data: []byte(skillManifest("big", "Too big to read"))},
		"big/data.bin":   blob(900 << 10), // 1.17 MiB of base64
		"small/SKILL.md": {Data: []byte(skillManifest("small", "Small enough"))},
		"small/data.bin": blob(700 << 10), // 0.91 MiB of base64
	}
	err := s.AddSkills(fsys, nil)
	var se *skills.Error
	if !errors.Is(err, skills.ErrTooLarge) || !errors.As(err, &se) || se.Path != "big/data.bin" {
		t.Fatalf("AddSkills: %v, want ErrTooLarge naming big/data.bin", err)
	}
	if e := mustError(t, s, "resources/read", `{"uri":"skill://big/data.bin"}`); e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("the refused file: %d %s, want -32602 (not found)", e.Code, e.Message)
	}
	c := mustResult(t, s, "resources/read", `{"uri":"skill://small/data.bin"}`)["contents"].([]any)[0].(map[string]any)
	if b, _ := base64.StdEncoding.DecodeString(c["blob"].(string)); len(b) != 700<<10 {
		t.Errorf("small/data.bin: %d bytes read, want %d", len(b), 700<<10)
	}
}
