package cli

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpkit/mcpkit/internal/demo"
)

// tsModernSDK is the TypeScript SDK 2.x client package (a 2026-07-28
// client) that TestTypeScriptModernClient installs from the npm registry.
const tsModernSDK = "@modelcontextprotocol/client@2.4.0"

// tsModernReport is what testdata/modern-client.mjs prints.
type tsModernReport struct {
	Era               string
	ProtocolVersion   string
	Server            struct{ Name, Version string }
	SupportedVersions []string
	Capabilities      map[string]json.RawMessage
	Tools             []string
	PagedTools        []string
	Pages             int
	Echo              string
	Elicitations      []struct {
		Message         string
		RequestedSchema json.RawMessage
	}
	Elicitation struct {
		Text    string
		IsError bool
	}
	Resource       string
	Prompt         []string
	Progress       []struct{ Progress, Total float64 }
	ProgressResult struct {
		Text    string
		IsError bool
	}
	HonoredFilter      map[string]any
	Trigger            string
	ToolListChanges    int
	ToolsAfterChange   []string
	SubscriptionClosed string
	ClientErrors       []string
	Error              string
}

// serveHTTP starts bin serve on a free 127.0.0.1 port and returns the URL
// it logs; the server is killed when the test ends.
func serveHTTP(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--fixtures", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	urlRe := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			return m[1]
		}
	}
	t.Fatal("serve did not log the URL it listens on")
	return ""
}

// TestTypeScriptModernClient drives mcpkit serve with the official
// TypeScript SDK 2.x client pinned to 2026-07-28, over Streamable HTTP and
// over stdio: it discovers the server, lists tools page by page, calls
// tools, answers the elicitation of an input_required (multi round-trip)
// tool, reads a resource, gets a prompt, receives progress notifications,
// and receives notifications/tools/list_changed on a subscriptions/listen
// stream after a tool is added.
func TestTypeScriptModernClient(t *testing.T) {
	if testing.Short() {
		t.Skip("installs and runs the TypeScript SDK")
	}
	node, script := npmClient(t, tsModernSDK, "tsclient-modern", "testdata/modern-client.mjs")
	bin := buildMcpkit(t)
	tests := []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"http", func(t *testing.T) []string { return []string{"http", serveHTTP(t, bin)} }},
		{"stdio", func(t *testing.T) []string { return []string{"stdio", bin, "serve", "--fixtures", "--stdio"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r tsModernReport
			runClientScript(t, node, script, tt.args(t), &r)
			if r.Error != "" {
				t.Fatalf("client failed: %s", r.Error)
			}
			check := func(ok bool, format string, args ...any) {
				t.Helper()
				if !ok {
					t.Errorf(format, args...)
				}
			}
			check(r.Era == "modern" && r.ProtocolVersion == "2026-07-28", "era %q version %q, want modern 2026-07-28", r.Era, r.ProtocolVersion)
			check(r.Server.Name == demo.Name && r.Server.Version == demo.Version, "server %+v, want %s %s", r.Server, demo.Name, demo.Version)
			check(len(r.SupportedVersions) > 0 && r.SupportedVersions[0] == "2026-07-28" && slices.Contains(r.SupportedVersions, "2025-11-25"),
				"supported versions %q, want 2026-07-28 first and 2025-11-25 among them", r.SupportedVersions)
			check(r.Capabilities["tools"] != nil && r.Capabilities["resources"] != nil && r.Capabilities["prompts"] != nil,
				"capabilities %v lack tools, resources or prompts", r.Capabilities)
			check(slices.Contains(r.Tools, "echo") && slices.Contains(r.Tools, "test_input_required_result_elicitation"),
				"tools %v lack echo or test_input_required_result_elicitation", r.Tools)
			check(r.Pages >= 1, "walked %d pages of tools/list", r.Pages)
			if diff := cmp.Diff(r.Tools, r.PagedTools); diff != "" {
				t.Errorf("tools listed page by page differ from the SDK's aggregated list (-aggregated +paged):\n%s", diff)
			}
			check(r.Echo == "hi", "echo answered %q, want %q", r.Echo, "hi")
			check(len(r.Elicitations) == 1 && r.Elicitations[0].Message == "What is your name?",
				"elicitation requests %+v, want one asking %q", r.Elicitations, "What is your name?")
			check(!r.Elicitation.IsError && r.Elicitation.Text == "Hello, ts-name!",
				"test_input_required_result_elicitation result %+v, want %q", r.Elicitation, "Hello, ts-name!")
			check(r.Resource == "This is the content of the static text resource.", "test://static-text read as %q", r.Resource)
			check(len(r.Prompt) == 1 && r.Prompt[0] == "This is a simple prompt for testing.", "test_simple_prompt gave %q", r.Prompt)
			// The server sends progress 0, 50 and 100, all before the result.
			// The SDK dispatches notifications a microtask later than
			// responses, so over stdio, where the last notification and the
			// result often arrive in one read, it may drop the last one
			// ("progress notification for an unknown token"); the first two
			// must arrive, in order.
			var progress []float64
			for _, p := range r.Progress {
				check(p.Total == 100, "progress %v has total %v, want 100", p.Progress, p.Total)
				progress = append(progress, p.Progress)
			}
			want := []float64{0, 50, 100}
			check(len(progress) >= 2 && slices.Equal(progress, want[:len(progress)]), "progress notifications %v, want %v (or its first two)", progress, want)
			check(!r.ProgressResult.IsError && r.ProgressResult.Text == "Progress complete.", "test_tool_with_progress result %+v", r.ProgressResult)
			for _, e := range r.ClientErrors {
				check(strings.Contains(e, "progress notification for an unknown token") && strings.Contains(e, `"progress":100`),
					"client reported an error: %s", e)
			}
			check(r.HonoredFilter["toolsListChanged"] == true, "listen honored %v, want toolsListChanged", r.HonoredFilter)
			check(r.Trigger == "Added the tool "+demo.TransientTool+".", "test_trigger_tool_change answered %q", r.Trigger)
			check(r.ToolListChanges == 1, "got %d notifications/tools/list_changed, want 1", r.ToolListChanges)
			check(slices.Contains(r.ToolsAfterChange, demo.TransientTool), "tools after the change %v lack %s", r.ToolsAfterChange, demo.TransientTool)
			check(r.SubscriptionClosed == "local", "subscription closed as %q, want local", r.SubscriptionClosed)
		})
	}
}
