package interop

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// runMCPKit runs the mcpkit command with extra environment and returns its
// exit code, stdout and stderr.
func runMCPKit(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(mcpkitBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatalf("running mcpkit: %v", err)
	}
	return 0, stdout.String(), stderr.String()
}

// TestCLIPeers runs mcpkit's client commands against every peer: discover
// tells the era, the lists list, call, read and prompt print the result.
func TestCLIPeers(t *testing.T) {
	for _, p := range peers() {
		t.Run(p.name, func(t *testing.T) {
			tg := p.start(t)
			cli := func(cmd string, args ...string) (int, string, string) {
				t.Helper()
				flags := []string{cmd}
				if p.version != "" {
					flags = append(flags, "--version", p.version)
				}
				return runMCPKit(t, tg.env, append(flags, tg.args(args...)...)...)
			}

			var r *report
			if tg.url != "" {
				r, _ = discover(t, tg.env, append(versionFlag(p.version), tg.url)...)
			} else {
				r, _ = discover(t, tg.env, append(append(versionFlag(p.version), "--"), tg.command...)...)
			}
			if r.Era != p.era || r.ProtocolVersion != p.protocol || r.ServerInfo == nil || r.ServerInfo.Name != p.serverName {
				t.Errorf("discover: era %s at %s, serverInfo %+v; want %s at %s, %s (error %+v)", r.Era, r.ProtocolVersion, r.ServerInfo, p.era, p.protocol, p.serverName, r.Error)
			}

			code, out, errOut := cli("tools")
			if lines := strings.Count(out, "\n"); code != 0 || lines < p.tools || !strings.Contains(out, p.echoTool+" ") {
				t.Errorf("tools: exit %d, %d lines, want at least %d with %s\n%s\n%s", code, lines, p.tools, p.echoTool, out, errOut)
			}
			code, out, errOut = cli("call", p.echoTool, p.echoArgs)
			if code != 0 || out != p.echoText+"\n" {
				t.Errorf("call %s: exit %d, stdout %q, want %q\n%s", p.echoTool, code, out, p.echoText+"\n", errOut)
			}
			code, out, errOut = cli("call", "no_such_tool", "{}")
			if code != 6 && code != 1 { // a JSON-RPC error, or a tool error for peers that answer so
				t.Errorf("call no_such_tool: exit %d, want 6 (or 1)\n%s%s", code, out, errOut)
			}
			code, out, errOut = cli("read", p.resourceURI)
			if code != 0 || out == "" || !strings.Contains(out, p.resourceText) {
				t.Errorf("read %s: exit %d, stdout %q, want %q\n%s", p.resourceURI, code, out, p.resourceText, errOut)
			}
			code, out, errOut = cli("prompt", p.promptName)
			if code != 0 || !strings.Contains(out, p.promptText) {
				t.Errorf("prompt %s: exit %d, stdout %q, want %q\n%s", p.promptName, code, out, p.promptText, errOut)
			}
			code, out, errOut = cli("resources", "--json")
			if code != 0 || !strings.Contains(out, p.resourceURI) {
				t.Errorf("resources --json: exit %d, lacks %s\n%s\n%s", code, p.resourceURI, out, errOut)
			}
			code, out, errOut = cli("prompts")
			if code != 0 || !strings.Contains(out, p.promptName) {
				t.Errorf("prompts: exit %d, lacks %s\n%s\n%s", code, p.promptName, out, errOut)
			}
		})
	}
}

func versionFlag(v string) []string {
	if v == "" {
		return nil
	}
	return []string{"--version", v}
}
