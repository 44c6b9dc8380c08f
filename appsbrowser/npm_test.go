package appsbrowser_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/cli"
)

// TestAppsCheckNPMServers: `mcpkit apps check` passes the three example
// servers of the reference implementation, run over stdio (their HTTP
// mode binds every interface), with their tool called.
func TestAppsCheckNPMServers(t *testing.T) {
	nm := npmDir(t)
	node := nodeBin(t)
	for _, name := range []string{"vanillajs", "react", "vue"} {
		t.Run(name, func(t *testing.T) {
			entry := filepath.Join(nm, "@modelcontextprotocol", "server-basic-"+name, "dist", "index.js")
			var stdout, stderr bytes.Buffer
			code := cli.Run([]string{"apps", "check", "--json", "--call", "get-time={}", "--", node, entry, "--stdio"}, strings.NewReader(""), &stdout, &stderr, nil)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
			}
			var r struct {
				OK         bool
				Views      []string
				Tools      []string
				Findings   []json.RawMessage
				NotChecked []string
			}
			if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if !r.OK || len(r.Findings) != 0 || len(r.NotChecked) != 0 || len(r.Views) != 1 || len(r.Tools) != 1 || r.Tools[0] != "get-time" {
				t.Errorf("%s", stdout.String())
			}
		})
	}
}
