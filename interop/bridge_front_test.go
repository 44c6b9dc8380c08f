package interop

// The bridge in front of the npm reference server, driven over its HTTP
// front: elicitation as input_required, a listen stream that gets the
// backend's resources/updated, a legacy (2025-11-25) client of the front
// that gets sampling as a real server-to-client request, and the
// TypeScript SDK 2.x client.

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// tsModernSDK is the TypeScript SDK 2.x client (a 2026-07-28 client). It
// must match TS_MODERN_PKG in scripts/lib.sh, which installs it the same
// way (same folder, marker and lock) before the interop step.
const tsModernSDK = "@modelcontextprotocol/client@2.4.0"

// serveFront serves the bridge's front over Streamable HTTP on a loopback
// port, closed when the test ends, and returns its URL.
func serveFront(t *testing.T, b *bridge.Bridge) string {
	t.Helper()
	ts := httptest.NewServer(b.Server())
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// sampleAnswer is a sampling handler that records the prompts it is asked
// and answers "a sampled answer".
type sampleAnswer struct {
	mu      sync.Mutex
	prompts []string
}

func (s *sampleAnswer) sample(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	var text string
	if len(p.Messages) > 0 && len(p.Messages[0].Content) > 0 {
		if c, ok := p.Messages[0].Content[0].(*mcp.TextContent); ok {
			text = c.Text
		}
	}
	s.mu.Lock()
	s.prompts = append(s.prompts, text)
	s.mu.Unlock()
	return &mcp.CreateMessageResult{Model: "test-model", Content: []mcp.Content{&mcp.TextContent{Text: "a sampled answer"}}}, nil
}

func (s *sampleAnswer) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.prompts)
}

// resultText joins the text content of a tool result.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// bridgeElicitation: server-everything's trigger-elicitation-request (listed
// only to a client with elicitation) asks for a form; the bridge turns it
// into input_required, the front client's Elicit answers it, and the tool's
// result shows the answer.
func bridgeElicitation(t *testing.T, b *bridge.Bridge) {
	var mu sync.Mutex
	var asked []string
	c := frontClient(t, b, &client.Options{Elicit: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		mu.Lock()
		asked = append(asked, p.Message)
		mu.Unlock()
		return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ada Lovelace", "check": true}}, nil
	}})
	if names := toolNames(t, c); !slices.Contains(names, "trigger-elicitation-request") {
		t.Fatalf("tools with elicitation lack trigger-elicitation-request: %v", names)
	}
	res, err := c.CallTool(context.Background(), "trigger-elicitation-request", nil)
	if err != nil {
		t.Fatal(err)
	}
	text := resultText(res)
	if res.IsError || !strings.Contains(text, "Name: Ada Lovelace") || !strings.Contains(text, "Agreed to terms: true") {
		t.Errorf("result (isError %v) %q lacks the elicited answer", res.IsError, text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || !strings.Contains(asked[0], "Please provide inputs") {
		t.Errorf("the front client was asked %q, want one elicitation", asked)
	}
}

// bridgeListenUpdated: a front listen stream subscribed to a resource
// becomes the backend's resources/subscribe; toggle-subscriber-updates
// (on the same backend session: a call of the same capabilities shares it)
// makes server-everything send notifications/resources/updated at once,
// and it reaches the stream.
func bridgeListenUpdated(t *testing.T, b *bridge.Bridge) {
	c := frontClient(t, b, nil)
	const uri = "demo://resource/static/document/architecture.md"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	acked := false
	toggled := false
	defer func() {
		if toggled { // stop the 5 s updates
			c.CallTool(context.Background(), "toggle-subscriber-updates", nil)
		}
	}()
	for ev, err := range c.Listen(ctx, client.ListenFilter{ResourceSubscriptions: []string{uri}}) {
		if err != nil {
			t.Fatalf("listen: %v (acknowledged %v)", err, acked)
		}
		if ev.Acknowledged != nil {
			if !slices.Contains(ev.Acknowledged.ResourceSubscriptions, uri) {
				t.Fatalf("acknowledged %+v, want the subscription to %s", ev.Acknowledged, uri)
			}
			acked = true
			res, err := c.CallTool(ctx, "toggle-subscriber-updates", nil)
			if err != nil {
				t.Fatal(err)
			}
			toggled = true
			if text := resultText(res); !strings.Contains(text, "Started") {
				t.Fatalf("toggle-subscriber-updates answered %q", text)
			}
			continue
		}
		n := ev.Notification
		if n.Method != "notifications/resources/updated" {
			continue
		}
		var p struct{ URI string }
		json.Unmarshal(n.Params, &p)
		if p.URI != uri {
			t.Fatalf("resources/updated for %q, want %q", p.URI, uri)
		}
		return
	}
	t.Fatalf("the listen stream ended without notifications/resources/updated (acknowledged %v, ctx %v)", acked, ctx.Err())
}

// bridgeLegacyClient: a 2025-11-25 client of the front (initialize, a
// session) lists and calls echo, and gets the backend's sampling as a
// real sampling/createMessage request on its session.
func bridgeLegacyClient(t *testing.T, b *bridge.Bridge, url string) {
	var s sampleAnswer
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: url}, &client.Options{Eras: client.LegacyOnly, Sample: s.sample})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Era() != mcp.EraLegacy || c.ServerInfo().Name != "mcp-servers/everything" {
		t.Fatalf("front: %s %+v, want a legacy session with the backend's identity", c.Era(), c.ServerInfo())
	}
	names := toolNames(t, c)
	if !slices.Contains(names, "echo") || !slices.Contains(names, "trigger-sampling-request") {
		t.Errorf("tools of a legacy client with sampling: %v", names)
	}
	res, err := c.CallTool(context.Background(), "echo", map[string]any{"message": "from a legacy client"})
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(res); !strings.Contains(text, "from a legacy client") {
		t.Errorf("echo: %q", text)
	}
	res, err = c.CallTool(context.Background(), "trigger-sampling-request", map[string]any{"prompt": "legacy hello"})
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(res); !strings.Contains(text, "a sampled answer") {
		t.Errorf("trigger-sampling-request: %q lacks the sampled answer", text)
	}
	if got := s.asked(); len(got) != 1 || !strings.Contains(got[0], "legacy hello") {
		t.Errorf("the legacy client was asked %q", got)
	}
}

// tsBridgeReport is what testdata/bridge-ts-client.mjs prints.
type tsBridgeReport struct {
	Era             string
	ProtocolVersion string
	Server          struct{ Name, Version string }
	Tools           []string
	Echo            string
	Sampling        struct {
		Text    string
		IsError bool
	}
	Samples []struct {
		Messages []struct {
			Content struct{ Text string }
		}
	}
	Error string
}

// bridgeTypeScript drives the front with the TypeScript SDK 2.x client
// pinned to 2026-07-28: discover, tools/list, echo, and sampling answered
// through input_required (multi round-trip).
func bridgeTypeScript(t *testing.T, url string) {
	node, script := tsModernClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, stderr.String())
	}
	var r tsBridgeReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if r.Error != "" {
		t.Fatalf("client failed: %s", r.Error)
	}
	if r.Era != "modern" || r.ProtocolVersion != "2026-07-28" || r.Server.Name != "mcp-servers/everything" {
		t.Errorf("era %q at %q, server %+v; want modern 2026-07-28 with the backend's identity", r.Era, r.ProtocolVersion, r.Server)
	}
	if !slices.Contains(r.Tools, "echo") || !slices.Contains(r.Tools, "trigger-sampling-request") {
		t.Errorf("tools %v lack echo or trigger-sampling-request (the client declares sampling)", r.Tools)
	}
	if !strings.Contains(r.Echo, "hi from ts") {
		t.Errorf("echo answered %q", r.Echo)
	}
	if r.Sampling.IsError || !strings.Contains(r.Sampling.Text, "a sampled answer from ts") {
		t.Errorf("trigger-sampling-request result %+v lacks the sampled answer", r.Sampling)
	}
	if len(r.Samples) != 1 || len(r.Samples[0].Messages) == 0 || !strings.Contains(r.Samples[0].Messages[0].Content.Text, "ts hello") {
		t.Errorf("sampling requests %+v, want one with the prompt", r.Samples)
	}
}

// tsModernClient is tsClientScript of the bridge's client script.
func tsModernClient(t *testing.T) (node, script string) {
	t.Helper()
	return tsClientScript(t, filepath.Join("testdata", "bridge-ts-client.mjs"))
}

// tsClientScript installs the TypeScript SDK 2.x client once into the
// cache (under the lock scripts/lib.sh takes), copies the client script
// src next to its node_modules (for Node to resolve the package), and
// returns the node binary and the copied script. It skips the test when
// npm or node is missing.
func tsClientScript(t *testing.T, src string) (node, script string) {
	t.Helper()
	cache, err := cacheDir()
	if err != nil {
		t.Skipf("no cache folder: %v", err)
	}
	node, err = node22(cache)
	if err != nil {
		t.Skip("node is needed to run the TypeScript SDK client; not found")
	}
	dir := filepath.Join(cache, "tsclient-modern")
	marker := filepath.Join(dir, ".installed")
	if b, _ := os.ReadFile(marker); string(b) != tsModernSDK {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Skip("npm is needed to install " + tsModernSDK + "; not found on PATH")
		}
		if err := os.MkdirAll(cache, 0o755); err != nil {
			t.Fatal(err)
		}
		unlock, err := lockCache(cache)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(marker); string(b) != tsModernSDK { // another run may have installed it meanwhile
			os.RemoveAll(dir)
			os.MkdirAll(dir, 0o755)
			cmd := exec.Command(npm, "install", "--prefix", dir, "--save-exact", "--no-audit", "--no-fund", tsModernSDK)
			if out, err := cmd.CombinedOutput(); err != nil {
				unlock()
				t.Fatalf("npm install %s: %v\n%s", tsModernSDK, err, out)
			}
			if err := os.WriteFile(marker, []byte(tsModernSDK), 0o644); err != nil {
				unlock()
				t.Fatal(err)
			}
		}
		unlock()
	}
	text, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(dir, strings.TrimSuffix(filepath.Base(src), ".mjs")+"-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(text)
	f.Close()
	t.Cleanup(func() { os.Remove(f.Name()) })
	return node, f.Name()
}
