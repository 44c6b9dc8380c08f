package cli

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
)

func TestStateKeys(t *testing.T) {
	k1 := bytes.Repeat([]byte{1}, 32)
	k2 := bytes.Repeat([]byte{2}, 32)
	enc := base64.StdEncoding.EncodeToString
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("keys", "# new key first\n"+enc(k2)+"\n"+enc(k1)+"\n")
	short := write("short", enc(k1[:8])+"\n")
	tests := []struct {
		name    string
		file    string
		env     string
		want    [][]byte
		wantErr string
	}{
		{"nothing configured", "", "", nil, ""},
		{"environment", "", enc(k1), [][]byte{k1}, ""},
		{"file wins over environment", good, enc(k1), [][]byte{k2, k1}, ""},
		{"short key in file", short, "", nil, "short: state key 1: 8 bytes"},
		{"bad environment", "", "***", nil, mcp.StateKeysEnv + ": state key 1: not valid base64"},
		{"missing file", filepath.Join(dir, "nope"), "", nil, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(mcp.StateKeysEnv, tt.env)
			got, err := stateKeys(tt.file)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d keys, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if !bytes.Equal(got[i], tt.want[i]) {
					t.Errorf("key %d = %x, want %x", i, got[i], tt.want[i])
				}
			}
		})
	}
}
