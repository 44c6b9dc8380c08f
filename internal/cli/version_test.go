package cli

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	defer func(f func() (*debug.BuildInfo, bool)) { readBuildInfo = f }(readBuildInfo)
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want []string
	}{
		{
			name: "a release with its commit",
			bi: &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/mcpkit/mcpkit", Version: "v0.3.0"},
				Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-30T10:00:00Z"}}},
			want: []string{"mcpkit   v0.3.0\n", "commit   abc123, 2026-11-30T10:00:00Z\n", "go       go1.26.0\n"},
		},
		{
			name: "a checkout with changes",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/mcpkit/mcpkit", Version: "(devel)"},
				Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "def456"}, {Key: "vcs.modified", Value: "true"}}},
			want: []string{"mcpkit   (devel): built from a checkout", "commit   def456 (with uncommitted changes)\n"},
		},
		{
			name: "no VCS information",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/mcpkit/mcpkit", Version: "(devel)"}},
			want: []string{"commit   unknown (built without VCS information"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readBuildInfo = func() (*debug.BuildInfo, bool) { return tt.bi, true }
			var out, errOut bytes.Buffer
			if code := Run([]string{"version"}, strings.NewReader(""), &out, &errOut, nil); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
	var out, errOut bytes.Buffer
	if code := Run([]string{"version", "extra"}, strings.NewReader(""), &out, &errOut, nil); code != 2 {
		t.Errorf("mcpkit version extra: exit %d, want 2", code)
	}
}

// TestNoCommand: no command prints the help on stderr and exits 2.
func TestNoCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run(nil, strings.NewReader(""), &out, &errOut, nil); code != 2 {
		t.Errorf("mcpkit: exit %d, want 2", code)
	}
	if !strings.Contains(errOut.String(), "Usage:") || !strings.Contains(errOut.String(), "mcpkit version") {
		t.Errorf("mcpkit without a command printed no help on stderr:\n%s", errOut.String())
	}
	if out.Len() != 0 {
		t.Errorf("mcpkit without a command wrote to stdout: %q", out.String())
	}
}
