//go:build unix

package client_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
)

// TestCommandReplaceEnv checks that ReplaceEnv gives the process only Env:
// a variable of the parent's environment does not reach it.
func TestCommandReplaceEnv(t *testing.T) {
	t.Setenv("MCPKIT_TEST_PARENT_SECRET", "s3cret")
	for _, replace := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "env")
		tr := &client.CommandTransport{
			Command:    "/bin/sh",
			Args:       []string{"-c", `env > "$OUT"`},
			Env:        []string{"OUT=" + out, "OWN=1"},
			ReplaceEnv: replace,
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if c, err := client.Connect(ctx, tr, nil); err == nil {
			c.Close()
			t.Fatal("Connect to a process that is no server succeeded")
		}
		cancel()
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		env := string(b)
		if !strings.Contains(env, "OWN=1") {
			t.Errorf("replace=%v: Env did not reach the process:\n%s", replace, env)
		}
		if got := strings.Contains(env, "MCPKIT_TEST_PARENT_SECRET"); got == replace {
			t.Errorf("replace=%v: the parent's variable reached the process: %v", replace, got)
		}
	}
}
