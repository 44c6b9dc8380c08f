package skills_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/skills"
)

// TestLoadRefusesUnreadableFiles: a skill within MaxBytes whose file
// would encode (base64 for a blob, JSON escapes for text) to more than
// MaxFileBytes is refused, since no resources/read response could carry
// it; files that fit are served.
func TestLoadRefusesUnreadableFiles(t *testing.T) {
	blob := func(n int) *fstest.MapFile { return &fstest.MapFile{Data: bytes.Repeat([]byte{0, 1, 2, 0xff}, n/4)} }
	tests := []struct {
		name    string
		file    string
		data    *fstest.MapFile
		opts    skills.Options
		refused bool
	}{
		{"a blob of 11 MiB fits", "big/data.bin", blob(11 << 20), skills.Options{}, false},
		{"a blob of 12.5 MiB does not (16.7 MiB of base64)", "big/data.bin", blob(25 << 19), skills.Options{}, true},
		{"3 MiB of control characters in text do not (18 MiB escaped)", "big/notes.txt", &fstest.MapFile{Data: bytes.Repeat([]byte{1}, 3<<20)}, skills.Options{}, true},
		{"3 MiB of plain text fits", "big/notes.txt", &fstest.MapFile{Data: bytes.Repeat([]byte("a"), 3<<20)}, skills.Options{}, false},
		{"a smaller MaxFileBytes", "big/notes.txt", file(strings.Repeat("<", 200)), skills.Options{MaxFileBytes: 1000}, true},
		{"no limit", "big/data.bin", blob(25 << 19), skills.Options{MaxFileBytes: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{"big/SKILL.md": file(manifest("big", "Big files.")), tt.file: tt.data}
			set, err := skills.Load(fsys, &tt.opts)
			var se *skills.Error
			if tt.refused {
				if !errors.Is(err, skills.ErrTooLarge) || !errors.As(err, &se) || se.Path != tt.file {
					t.Fatalf("Load: %v, want ErrTooLarge naming %s", err, tt.file)
				}
				if len(set.Skills()) != 0 {
					t.Errorf("the refused skill is served")
				}
				return
			}
			if err != nil || len(set.Skills()) != 1 {
				t.Fatalf("Load: %v, %d skills", err, len(set.Skills()))
			}
		})
	}
}

// TestLoadDepth: Load reads directories down to MaxDepth levels, the
// depth Watch watches, and refuses deeper ones with ErrTooDeep, whether
// they would hold a skill or a skill's files.
func TestLoadDepth(t *testing.T) {
	deep := func(levels int) string { return strings.Repeat("d/", levels) }
	tests := []struct {
		name   string
		fsys   fstest.MapFS
		skills int
		deep   bool
	}{
		{"a skill at MaxDepth", fstest.MapFS{deep(skills.MaxDepth-1) + "ok/SKILL.md": file(manifest("ok", "Deep."))}, 1, false},
		{"a skill past MaxDepth", fstest.MapFS{deep(skills.MaxDepth) + "far/SKILL.md": file(manifest("far", "Too deep."))}, 0, true},
		{"a skill's file past MaxDepth", fstest.MapFS{
			"near/SKILL.md":                          file(manifest("near", "Near.")),
			"near/" + deep(skills.MaxDepth) + "x.md": file("x"),
		}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := skills.Load(tt.fsys, nil)
			if got := errors.Is(err, skills.ErrTooDeep); got != tt.deep {
				t.Errorf("Load: %v, want ErrTooDeep %v", err, tt.deep)
			}
			if set == nil || len(set.Skills()) != tt.skills {
				t.Errorf("Load served %v, want %d skills", set, tt.skills)
			}
		})
	}
}
