package skills

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestWatchDepthIsLoadDepth: the watcher notices a change in the deepest
// directory Load reads (MaxDepth levels down), so that every skill served
// is watched, and nothing below it, which Load does not read either.
func TestWatchDepthIsLoadDepth(t *testing.T) {
	dir := strings.TrimSuffix(strings.Repeat("d/", MaxDepth-1), "/") + "/deep" // MaxDepth levels
	mf := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	fsys := fstest.MapFS{dir + "/SKILL.md": mf("---\nname: deep\ndescription: At MaxDepth.\n---\n")}
	set, err := Load(fsys, nil)
	if err != nil || len(set.Skills()) != 1 {
		t.Fatalf("Load: %v, %v", set, err)
	}
	before := fingerprint(fsys)
	fsys[dir+"/notes.md"] = mf("a file in the deepest directory read")
	if fingerprint(fsys) == before {
		t.Error("a file added at MaxDepth is not noticed")
	}
	fsys[dir+"/below/x.md"] = mf("below MaxDepth")
	after := fingerprint(fsys)
	delete(fsys, dir+"/below/x.md")
	fsys[dir+"/below/y.md"] = mf("other")
	if fingerprint(fsys) != after {
		t.Error("a change below MaxDepth, which Load does not read, is watched")
	}
}
