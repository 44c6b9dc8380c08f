package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKeepHandWritten checks that a run's report keeps the hand-written
// sections of the file it replaces, and only those.
func TestKeepHandWritten(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		old  *string // nil: no file
		want string
	}{
		{"no file", nil, "new\n\n" + handWrittenMarker + "\n"},
		{"no marker", ptr("old generated\n"), "new\n\n" + handWrittenMarker + "\n"},
		{"marker", ptr("old generated\n\n" + handWrittenMarker + "\n\n## By hand\nkept\n"), "new\n\n" + handWrittenMarker + "\n\n## By hand\nkept\n"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, string(rune('a'+i))+".md")
			if tt.old != nil {
				if err := os.WriteFile(path, []byte(*tt.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := keepHandWritten(path, "new\n"); got != tt.want {
				t.Errorf("keepHandWritten = %q, want %q", got, tt.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }
