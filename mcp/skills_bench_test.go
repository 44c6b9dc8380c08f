package mcp

import (
	"bytes"
	"fmt"
	"testing"
	"testing/fstest"
)

// benchSkillsServer serves 20 skills of 11 files each (4 KiB reference
// files, and one of 256 KiB, read from the file system on each request).
func benchSkillsServer(b *testing.B) *Server {
	fsys := fstest.MapFS{}
	for i := range 20 {
		name := fmt.Sprintf("skill-%02d", i)
		fsys[name+"/SKILL.md"] = &fstest.MapFile{Data: skillManifest(name, "A skill for benchmarks")}
		for j := range 10 {
			fsys[fmt.Sprintf("%s/references/doc-%d.md", name, j)] = &fstest.MapFile{Data: bytes.Repeat([]byte("word "), 800)}
		}
	}
	fsys["skill-00/big.md"] = &fstest.MapFile{Data: bytes.Repeat([]byte("x"), 256<<10)}
	s := NewServer(&ServerOptions{Info: Implementation{Name: "bench-server", Version: "1.0.0"}})
	if err := s.AddSkills(fsys, nil); err != nil {
		b.Fatal(err)
	}
	return s
}

func benchSkillsCall(b *testing.B, method, name, params, want string) {
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + benchMeta + `}}`
	p := newInProcessHTTP(b, benchSkillsServer(b), method, name, body)
	p.do()
	if p.w.status != 200 || !bytes.Contains(p.w.body, []byte(want)) {
		b.Fatalf("status %d, body %.300s", p.w.status, p.w.body)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.do()
	}
}

// BenchmarkSkillsList lists 20 skills (one page) over in-process HTTP.
func BenchmarkSkillsList(b *testing.B) {
	benchSkillsCall(b, "skills/list", "", "", `"uri":"skill://skill-19/SKILL.md"`)
}

// BenchmarkSkillsReadSmall reads a 4 KiB skill file, served from memory.
func BenchmarkSkillsReadSmall(b *testing.B) {
	uri := "skill://skill-07/references/doc-3.md"
	benchSkillsCall(b, "resources/read", uri, `"uri":"`+uri+`",`, `"text":"word word`)
}

// BenchmarkSkillsReadLarge reads a 256 KiB skill file from the file
// system, checking its digest.
func BenchmarkSkillsReadLarge(b *testing.B) {
	uri := "skill://skill-00/big.md"
	benchSkillsCall(b, "resources/read", uri, `"uri":"`+uri+`",`, `"text":"xxxx`)
}
