package appsbrowser_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/demo"
)

// uiOptions are the host client's options: it renders views.
func uiOptions() *client.Options {
	return &client.Options{Extensions: map[string]json.RawMessage{apps.ExtensionID: apps.ClientExtension()}}
}

// screenshot keeps a screenshot of the page as a test artifact.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	p := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// render opens the host page and waits until the view is initialized;
// it returns the view's frame (the inner iframe of the sandbox).
func render(t *testing.T, ctx context.Context, h *host) *chromedp.Node {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(h.hostURL+"/")); err != nil {
		t.Fatalf("the host page did not load: %v", err)
	}
	status, err := chromedp.Run(ctx, chromedp.Poll[string](`(s => (s === "initialized" || s.startsWith("error")) && s)(document.getElementById("status").textContent)`,
		chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil || status != "initialized" {
		screenshot(t, ctx, "not-initialized")
		t.Fatalf("the view did not initialize: status %q, %v", status, err)
	}
	outer, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("#sandbox")))
	if err != nil || len(outer) == 0 {
		t.Fatalf("no sandbox frame: %v", err)
	}
	inner, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("iframe"), chromedp.FromNode(outer[0])))
	if err != nil || len(inner) == 0 {
		t.Fatalf("no view frame in the sandbox: %v", err)
	}
	return inner[0]
}

// poll waits (in the browser, which owns the time) until expr is true in
// the view's frame.
func poll(ctx context.Context, view *chromedp.Node, expr string) error {
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInFrame(view), chromedp.WithPollingTimeout(20*time.Second)))
	return err
}

// text reads an element's text in the view, for failure messages.
func text(ctx context.Context, view *chromedp.Node, sel string) string {
	s, _ := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel), chromedp.FromNode(view)))
	return s
}

// TestDemoAppInBrowser renders the demo's view, reached over Streamable
// HTTP on the host's own origin, clicks its button inside the sandboxed
// iframe, and sees the result of the shout tool the host called for it.
func TestDemoAppInBrowser(t *testing.T) {
	nm := npmDir(t)
	ctx := browser(t)
	srv := demo.NewPlain(nil)
	h := newHost(t, bridgeBundle(t, nm), srv)
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: h.hostURL + "/mcp"}, uiOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h.c = c
	h.open(ctx, "shout_app", map[string]any{})
	view := render(t, ctx, h)
	in := chromedp.FromNode(view)
	// The tool's result reached the view (ui/notifications/tool-result).
	if err := poll(ctx, view, `document.getElementById("result").textContent.startsWith("The shout view is open")`); err != nil {
		screenshot(t, ctx, "demo-no-tool-result")
		t.Fatalf("the tool result did not show: %v", err)
	}
	screenshot(t, ctx, "demo-rendered")
	// The sandbox enforces the view's CSP: the demo declares no connect
	// domain, so even an opaque (no-cors) fetch of another origin is refused.
	probe := `(() => {
		if (!window.__probe) {
			window.__probe = "pending";
			fetch(` + jsString(h.hostURL+"/view") + `, { mode: "no-cors" }).then(() => window.__probe = "loaded", () => window.__probe = "blocked");
		}
		return window.__probe !== "pending" && window.__probe;
	})()`
	got, err := chromedp.Run(ctx, chromedp.Poll[string](probe, chromedp.WithPollingInFrame(view), chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil || got != "blocked" {
		t.Errorf("a fetch of an undeclared origin from the view: %q, %v; want it blocked by the CSP", got, err)
	}
	err = chromedp.Do(ctx,
		chromedp.WaitEnabled(chromedp.CSS("#shout"), in),
		chromedp.SetValue(chromedp.CSS("#text"), "hello from chromium", in),
		chromedp.Click(chromedp.CSS("#shout"), in),
	)
	if err == nil {
		err = poll(ctx, view, `document.getElementById("result").textContent === "HELLO FROM CHROMIUM"`)
	}
	screenshot(t, ctx, "demo-clicked")
	if err != nil {
		t.Fatalf("after the click the view shows %q: %v", text(ctx, view, "#result"), err)
	}
	if calls := h.Calls(); !slices.Equal(calls, []string{"shout"}) {
		t.Errorf("the view called %v through the host, want [shout]", calls)
	}
}

// TestVanillaJSInBrowser renders the view of the npm example server
// server-basic-vanillajs (built on the ext-apps App class), reached over
// stdio through the host's mcpkit client, and clicks its Get Time button.
func TestVanillaJSInBrowser(t *testing.T) {
	nm := npmDir(t)
	node := nodeBin(t)
	ctx := browser(t)
	h := newHost(t, bridgeBundle(t, nm), nil)
	entry := filepath.Join(nm, "@modelcontextprotocol", "server-basic-vanillajs", "dist", "index.js")
	c, err := client.Connect(ctx, &client.CommandTransport{Command: node, Args: []string{entry, "--stdio"}}, uiOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h.c = c
	h.open(ctx, "get-time", map[string]any{})
	var first struct {
		StructuredContent struct {
			Time string `json:"time"`
		} `json:"structuredContent"`
	}
	json.Unmarshal(h.view.Result, &first)
	if first.StructuredContent.Time == "" {
		t.Fatalf("get-time result without structuredContent.time: %s", h.view.Result)
	}
	view := render(t, ctx, h)
	in := chromedp.FromNode(view)
	// The view shows the time of the tool result the host sent it.
	err = poll(ctx, view, `document.getElementById("server-time").textContent === `+jsString(first.StructuredContent.Time))
	screenshot(t, ctx, "vanillajs-rendered")
	if err != nil {
		t.Fatalf("the view shows %q, want the tool result's time %q: %v", text(ctx, view, "#server-time"), first.StructuredContent.Time, err)
	}
	// Its button calls get-time through the host.
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#get-time-btn"), in))
	if err == nil {
		err = poll(ctx, view, `(s => /^\d{4}-\d\d-\d\dT/.test(s) && s !== `+jsString(first.StructuredContent.Time)+`)(document.getElementById("server-time").textContent)`)
	}
	screenshot(t, ctx, "vanillajs-clicked")
	if err != nil {
		t.Fatalf("after the click: %v", err)
	}
	if calls := h.Calls(); !slices.Equal(calls, []string{"get-time"}) {
		t.Errorf("the view called %v through the host, want [get-time]", calls)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
