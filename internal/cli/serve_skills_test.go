package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const skillsListReq = `{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

func writeSkill(t *testing.T, root, dir, manifest string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, dir, "SKILL.md"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestServeSkills(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "team/my-skill", "---\nname: my-skill\ndescription: Mine.\n---\nBody.\n")
	writeSkill(t, root, "broken", "no frontmatter\n")
	serve := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := serveContext(context.Background(), append([]string{"--stdio"}, args...), strings.NewReader(skillsListReq+"\n"), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	code, out, errOut := serve("--skills", root, "--skills-watch", "0")
	if code != 0 || !strings.Contains(out, `"uri":"skill://team/my-skill/SKILL.md"`) || strings.Contains(out, "pdf-processing") {
		t.Errorf("--skills: exit %d, stdout %s", code, out)
	}
	if !strings.Contains(errOut, "skills left out") || !strings.Contains(errOut, "broken/SKILL.md") {
		t.Errorf("the refused skill is not logged by its file: %s", errOut)
	}

	if code, _, errOut := serve("--skills", root, "--skills-strict"); code != 2 || !strings.Contains(errOut, "broken/SKILL.md") {
		t.Errorf("--skills-strict: exit %d, stderr %s; want 2 naming broken/SKILL.md", code, errOut)
	}
	if code, _, errOut := serve("--skills", filepath.Join(root, "missing")); code != 2 || !strings.Contains(errOut, "--skills") {
		t.Errorf("missing dir: exit %d, stderr %s", code, errOut)
	}

	// Without --skills, the demo's embedded skills.
	if code, out, _ := serve(); code != 0 || !strings.Contains(out, `"uri":"skill://pdf-processing/SKILL.md"`) {
		t.Errorf("demo skills: exit %d, stdout %s", code, out)
	}
}
