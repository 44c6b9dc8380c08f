package skills_test

import (
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/skills"
)

func benchFS() fstest.MapFS {
	fsys := fstest.MapFS{}
	for i := range 20 {
		name := fmt.Sprintf("skill-%02d", i)
		fsys[name+"/SKILL.md"] = file(manifest(name, "A skill for benchmarks"))
		for j := range 10 {
			fsys[fmt.Sprintf("%s/references/doc-%d.md", name, j)] = &fstest.MapFile{Data: make([]byte, 4<<10)}
		}
	}
	return fsys
}

func BenchmarkLoad(b *testing.B) {
	fsys := benchFS()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := skills.Load(fsys, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFile(b *testing.B) {
	set, err := skills.Load(benchFS(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := set.ReadFile("skill://skill-07/references/doc-3.md"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseFrontmatter(b *testing.B) {
	data := []byte("---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: MIT\nmetadata:\n  author: acme\n  version: \"1.0\"\nallowed-tools: [Read, Bash]\n---\n# body\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := skills.ParseFrontmatter(data); err != nil {
			b.Fatal(err)
		}
	}
}
