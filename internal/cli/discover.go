package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/client"
	iclient "github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/mcp"
)

// discoverCommand is `mcpkit discover`.
var discoverCommand = &Command{
	UsageLine: "discover [flags] URL\ndiscover [flags] -- COMMAND ARGS...",
	Short:     "probe any MCP server: its era, versions, capabilities",
	Long: `Tells the server's era (modern: per-request _meta and server/discover, revision
2026-07-28; legacy: the initialize handshake, 2025-11-25 and earlier) the way the
specification describes, and shows what the server says about itself. With a
URL it probes a Streamable HTTP (or HTTP+SSE) server; after -- it spawns the
stdio server COMMAND and probes it.
`,
	Flag:   discoverFlagSet,
	Exits:  exitsProbe,
	Failed: "--check: at least one check failed",
}

// headerFlags collects repeated --header K:V flags.
type headerFlags struct{ h http.Header }

func (f *headerFlags) String() string { return "" }

func (f *headerFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, ":")
	k = strings.TrimSpace(k)
	if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") {
		return fmt.Errorf("want NAME:VALUE, got %q", v)
	}
	if f.h == nil {
		f.h = http.Header{}
	}
	f.h.Add(k, strings.TrimSpace(val))
	return nil
}

type discoverFlags struct {
	json    bool
	list    bool
	check   bool
	timeout time.Duration
	version string
	headers headerFlags
	color   string
	login   loginFlags
}

// discoverFlagSet registers the flags of `mcpkit discover`.
func discoverFlagSet(fs *flag.FlagSet) Runner {
	var f discoverFlags
	fs.BoolVar(&f.json, "json", false, "print the report as JSON")
	fs.BoolVar(&f.list, "list", false, "also list the tools, prompts and resources (every page)")
	fs.BoolVar(&f.check, "check", false, "check discovery and request validation against the spec")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "time allowed for each request; a stdio server silent for this long is taken for legacy")
	protocolVersionFlag(fs, &f.version, protocol.ModernVersions[0])
	fs.Var(&f.headers, "header", "HTTP header `NAME:VALUE` to send with every request (repeatable)")
	fs.StringVar(&f.color, "color", "auto", "colour the output: auto (on a terminal), always or never")
	f.login.register(fs)
	return func(inv *invocation) int { return discover(inv, &f) }
}

// discover runs `mcpkit discover` with its flags f.
func discover(inv *invocation, f *discoverFlags) int {
	stdout, stderr := inv.stdout, inv.stderr
	positional, command := inv.args, inv.command
	usageErr := inv.usageError
	switch {
	case len(positional) == 0 && len(command) == 0:
		return usageErr("give a URL, or -- and a command")
	case len(positional) > 0 && len(command) > 0:
		return usageErr("give a URL or a command, not both")
	case len(positional) > 1:
		return usageErr("one URL at a time (to run a command, put -- before it)")
	case len(positional) == 1:
		u, err := url.Parse(positional[0])
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErr("%q is not an http(s) URL (to run a command, put -- before it)", positional[0])
		}
	}
	if f.timeout <= 0 {
		return usageErr("--timeout must be positive")
	}
	if f.check && protocol.IsLegacy(f.version) {
		return usageErr("--check probes server/discover; it cannot be combined with the legacy --protocol-version %s", f.version)
	}
	if f.color != "auto" && f.color != "always" && f.color != "never" {
		return usageErr("--color must be auto, always or never")
	}
	if len(f.headers.h) > 0 && len(command) > 0 {
		return usageErr("--header applies to HTTP only")
	}
	if err := f.login.check(len(positional) == 1); err != nil {
		return usageErr("%v", err)
	}

	target := strings.Join(command, " ")
	if len(positional) == 1 {
		target = positional[0]
	}
	f.login.stderr = stderr
	rep, code := probe(inv.ctx, f, positional, command)
	rep.Target = target
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		enc.Encode(rep)
	} else {
		p := &printer{w: stdout, color: useColor(f.color, stdout)}
		p.report(rep, f)
	}
	return code
}

// clientInfo names this client in _meta and initialize.
func clientInfo() mcp.Implementation {
	v := "dev"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return mcp.Implementation{Name: "mcpkit-discover", Version: v}
}

// encodedClientInfo is clientInfo as _meta carries it.
func encodedClientInfo() json.RawMessage {
	b, _ := json.Marshal(clientInfo()) // strings only: it always encodes
	return b
}

// probe connects with the client, lists and checks, and returns the report
// and exit code.
func probe(ctx context.Context, f *discoverFlags, positional, command []string) (*report, int) {
	rep := &report{}
	var tr client.Transport
	var authClient *http.Client // --auth: an OAuth-authorizing client
	if len(positional) == 1 {
		if f.login.auth {
			hc, release, err := f.login.httpClient(positional[0], f.login.stderr)
			if err != nil {
				rep.Error = &reportError{Kind: client.Unreachable.String(), Message: err.Error()}
				return rep, exitUnreachable
			}
			defer release()
			authClient = hc
		}
		tr = &client.HTTPTransport{URL: positional[0], Header: f.headers.h, HTTPClient: authClient}
		rep.Transport = mcp.TransportStreamableHTTP
	} else {
		tr = &client.CommandTransport{Command: command[0], Args: command[1:]}
		rep.Transport = mcp.TransportStdio
	}
	info := clientInfo()
	// The spec checks and the raw description read the client's own
	// session (internal/client), which sends what the public API never
	// would: malformed and mismatched requests.
	cctx, capture := iclient.WithSessionCapture(ctx)
	c, err := client.Connect(cctx, tr, &client.Options{
		Version:        f.version,
		ClientInfo:     mcp.Implementation{Name: info.Name, Version: info.Version},
		Timeout:        f.timeout,
		ConnectTimeout: f.timeout,
		// Declared so that servers which hide their views from clients
		// without MCP Apps (apps.HideWithoutUI) show them.
		Extensions: map[string]json.RawMessage{apps.ExtensionID: apps.ClientExtension()},
	})
	if err != nil {
		var ce *client.ConnectError
		if !errors.As(err, &ce) {
			var te *client.TransportError
			if errors.As(err, &te) {
				rep.Error = &reportError{Kind: client.Unreachable.String(), Message: err.Error()}
				return rep, exitUnreachable
			}
			rep.Error = &reportError{Kind: "failed", Message: err.Error()}
			return rep, exitNotMCP
		}
		rep.Probe = steps(ce.Steps)
		rep.setExit(ce.Exit)
		rep.Error = &reportError{Kind: ce.Kind.String(), Message: strings.TrimPrefix(ce.Error(), "client: ")}
		if msg, ok := didNotStart(ce); ok {
			// The steps add nothing: every request went unanswered.
			rep.Probe = nil
			rep.Error = &reportError{Kind: "did not start", Message: msg}
			return rep, exitDidNotStart
		}
		for _, st := range ce.Steps {
			if st.Status == http.StatusUnauthorized || st.Status == http.StatusForbidden {
				rep.Error.Message += fmt.Sprintf("\n(the server answered HTTP %d: if it needs credentials, log in with --auth or pass a token with --header \"Authorization: Bearer TOKEN\")", st.Status)
				break
			}
		}
		switch ce.Kind {
		case client.Unreachable:
			return rep, exitUnreachable
		case client.Incompatible:
			return rep, exitIncompatible
		}
		return rep, exitNotMCP
	}
	s := capture.Session()
	rep.describe(c, s)
	code := exitOK
	if f.list {
		rep.Lists = list(ctx, c, s.Server.Capabilities)
	}
	rep.Apps = describeApps(s.Server.Capabilities, rep.Lists)
	if f.check {
		var fresh iclient.Conn
		if len(positional) == 1 {
			// Checks go without the legacy session's headers, on a
			// connection of their own.
			fresh = iclient.DialHTTP(positional[0], &iclient.HTTPOptions{Header: f.headers.h, Client: authClient})
		}
		rep.Checks = runChecks(ctx, s, fresh, f)
		if fresh != nil {
			fresh.Close()
		}
		for _, c := range rep.Checks {
			if c.Status == statusFail {
				code = exitCheckFailed
			}
		}
	}
	c.Close()
	if e, ok := c.ProcessExit(); ok {
		rep.setExit(&e)
	}
	return rep, code
}

// report is the result of `mcpkit discover`, and its --json form.
type report struct {
	Target            string              `json:"target"`
	Transport         mcp.Transport       `json:"transport"`
	Era               string              `json:"era,omitempty"` // mcp.Era's name; "" before one is known
	ProtocolVersion   string              `json:"protocolVersion,omitempty"`
	SupportedVersions []string            `json:"supportedVersions,omitempty"`
	ServerInfo        *mcp.Implementation `json:"serverInfo,omitempty"`
	Capabilities      json.RawMessage     `json:"capabilities,omitempty"`
	Extensions        []string            `json:"extensions,omitempty"`
	Instructions      string              `json:"instructions,omitempty"`
	Cache             *cacheHints         `json:"cache,omitempty"`
	LatencyMs         float64             `json:"latencyMs,omitempty"`
	Probe             []step              `json:"probe,omitempty"`
	Lists             *lists              `json:"lists,omitempty"`
	Apps              *appsInfo           `json:"apps,omitempty"`
	Checks            []checkResult       `json:"checks,omitempty"`
	Exit              *exitInfo           `json:"exit,omitempty"`
	Error             *reportError        `json:"error,omitempty"`
}

type cacheHints struct {
	TTLMs *int64 `json:"ttlMs,omitempty"`
	TTL   string `json:"ttl,omitempty"`
	Scope string `json:"scope,omitempty"`
}

type step struct {
	Request   string  `json:"request"`
	Answer    string  `json:"answer"`
	Meaning   string  `json:"meaning"`
	Status    int     `json:"status,omitempty"`
	LatencyMs float64 `json:"latencyMs,omitempty"`
}

type reportError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

type exitInfo struct {
	Code int `json:"code"`
	// Forced is the signal that ended the server, if it did not exit
	// when its stdin closed.
	Forced            string  `json:"forced,omitempty"`
	AfterStdinCloseMs float64 `json:"afterStdinCloseMs"`
}

type lists struct {
	Tools             []json.RawMessage `json:"tools"`
	Prompts           []json.RawMessage `json:"prompts"`
	Resources         []json.RawMessage `json:"resources"`
	ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
	// Errors holds list requests that failed, by method.
	Errors map[string]string `json:"errors,omitempty"`
	// Skipped names the lists the server's capabilities do not offer.
	Skipped []string `json:"skipped,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func steps(in []client.Step) []step {
	out := make([]step, len(in))
	for i, s := range in {
		out[i] = step{Request: s.Request, Answer: s.Answer, Meaning: s.Meaning, Status: s.Status, LatencyMs: ms(s.Latency)}
	}
	return out
}

// describe fills in what the client learned: era, version and identity
// through the public API; the capabilities as sent and the cache hints of
// the DiscoverResult from the session.
func (r *report) describe(c *client.Client, s *iclient.Session) {
	r.Transport = c.Transport()
	r.Era = c.Era().String()
	r.ProtocolVersion = c.ProtocolVersion()
	r.SupportedVersions = c.SupportedVersions()
	r.ServerInfo = c.ServerInfo()
	r.Instructions = c.Instructions()
	d := s.Server
	r.Capabilities = d.Capabilities
	r.Extensions = extensionNames(d.Capabilities)
	if d.TTLMs != nil || d.CacheScope != "" {
		r.Cache = &cacheHints{TTLMs: d.TTLMs, Scope: d.CacheScope}
		if d.TTLMs != nil {
			r.Cache.TTL = humanDuration(time.Duration(*d.TTLMs) * time.Millisecond)
		}
	}
	r.LatencyMs = ms(c.ConnectLatency())
	r.Probe = steps(c.Probe())
}

func (r *report) setExit(e *client.ProcessExit) {
	if e != nil {
		r.Exit = &exitInfo{Code: e.Code, Forced: e.Forced, AfterStdinCloseMs: ms(e.AfterStdinClose)}
	}
}

// extensionNames returns the keys of capabilities.extensions and, for
// legacy servers, capabilities.experimental (as "experimental/KEY").
func extensionNames(caps json.RawMessage) []string {
	var c struct {
		Extensions   map[string]json.RawMessage `json:"extensions"`
		Experimental map[string]json.RawMessage `json:"experimental"`
	}
	json.Unmarshal(caps, &c)
	var out []string
	for k := range c.Extensions {
		out = append(out, k)
	}
	for k := range c.Experimental {
		out = append(out, "experimental/"+k)
	}
	sort.Strings(out)
	return out
}

// capabilityList renders the capabilities other than extensions, with
// their flags: "tools (listChanged)".
func capabilityList(caps json.RawMessage) []string {
	var c map[string]json.RawMessage
	json.Unmarshal(caps, &c)
	var out []string
	for k, v := range c {
		if k == "extensions" || k == "experimental" {
			continue
		}
		var flags map[string]json.RawMessage
		json.Unmarshal(v, &flags)
		var on []string
		for fk, fv := range flags {
			if string(fv) != "false" {
				on = append(on, fk)
			}
		}
		sort.Strings(on)
		if len(on) > 0 {
			k += " (" + strings.Join(on, ", ") + ")"
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func hasCapability(caps json.RawMessage, name string) bool {
	var c map[string]json.RawMessage
	json.Unmarshal(caps, &c)
	v, ok := c[name]
	return ok && string(v) != "null"
}

// list fetches every page of the lists the server's capabilities offer.
func list(ctx context.Context, c *client.Client, caps json.RawMessage) *lists {
	l := &lists{Tools: []json.RawMessage{}, Prompts: []json.RawMessage{}, Resources: []json.RawMessage{}, ResourceTemplates: []json.RawMessage{}}
	fetch := func(capability, method, field string, dst *[]json.RawMessage) {
		if !hasCapability(caps, capability) {
			l.Skipped = append(l.Skipped, method)
			return
		}
		items, err := rawList(ctx, c, method, field)
		*dst = append(*dst, items...)
		if err != nil {
			if l.Errors == nil {
				l.Errors = map[string]string{}
			}
			l.Errors[method] = err.Error()
		}
	}
	fetch("tools", "tools/list", "tools", &l.Tools)
	fetch("prompts", "prompts/list", "prompts", &l.Prompts)
	fetch("resources", "resources/list", "resources", &l.Resources)
	fetch("resources", "resources/templates/list", "resourceTemplates", &l.ResourceTemplates)
	return l
}

// humanDuration renders d compactly: "1h", "1h30m", "90s" -> "1m30s",
// "250ms".
func humanDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d < time.Second {
		return d.String()
	}
	var b strings.Builder
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.d; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.d
		}
	}
	if d >= time.Millisecond {
		fmt.Fprintf(&b, "%dms", d/time.Millisecond)
	}
	return b.String()
}

// useColor decides whether to colour the output.
func useColor(mode string, w io.Writer) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
