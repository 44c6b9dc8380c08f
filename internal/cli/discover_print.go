package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// printer writes the readable form of a report.
type printer struct {
	w     io.Writer
	color bool
}

// ANSI styles.
const (
	styleBold  = "1"
	styleDim   = "2"
	styleRed   = "31"
	styleGreen = "32"
	styleYellw = "33"
	styleCyan  = "36"
)

func (p *printer) style(s, code string) string {
	if !p.color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p *printer) printf(format string, a ...any) { fmt.Fprintf(p.w, format, a...) }

// field prints one "  name  value" line.
func (p *printer) field(name, value string) {
	p.printf("  %-13s %s\n", name, value)
}

var transportNames = map[mcp.Transport]string{
	mcp.TransportStreamableHTTP: "Streamable HTTP",
	mcp.TransportSSE:            "HTTP+SSE (the deprecated 2024-11-05 transport)",
	mcp.TransportStdio:          "stdio",
}

func (p *printer) report(r *report, f *discoverFlags) {
	if r.Error != nil {
		p.printf("%s %s\n", p.style("mcpkit discover:", styleBold), p.style(r.Error.Kind, styleRed))
		p.printf("  %s\n", strings.ReplaceAll(termSafe(r.Error.Message, true), "\n", "\n  "))
		p.field("target", r.Target+"  ("+transportNames[r.Transport]+")")
		p.steps(r.Probe)
		p.exit(r.Exit)
		return
	}
	name := "(no serverInfo)"
	if si := r.ServerInfo; si != nil {
		name = si.Name
		if si.Title != "" {
			name = si.Title + " [" + si.Name + "]"
		}
		name = termSafe(name+" "+si.Version, false)
	}
	p.printf("%s  %s\n", p.style(name, styleBold), p.style("(self-reported)", styleDim))
	p.field("target", r.Target+"  ("+transportNames[r.Transport]+")")
	legacy := r.Era == mcp.EraLegacy.String()
	era := p.style(r.Era, styleCyan)
	switch {
	case r.Era == mcp.EraModern.String():
		era += "  (answers server/discover; no handshake)"
	case r.Transport == mcp.TransportSSE:
		era += "  (initialize handshake, over the HTTP+SSE transport)"
	default:
		era += "  (initialize handshake)"
	}
	p.field("era", era)
	version := r.ProtocolVersion
	switch {
	case len(r.SupportedVersions) > 0:
		version += "  (supported: " + termSafe(client.ListSummary(r.SupportedVersions, ", "), false) + ")"
	case legacy:
		version += "  (negotiated by initialize; legacy servers do not list their versions)"
	}
	p.field("version", version)
	caps := capabilityList(r.Capabilities)
	p.field("capabilities", orNone(strings.Join(caps, ", ")))
	p.field("extensions", orNone(termSafe(client.ListSummary(r.Extensions, ", "), false)))
	p.apps(r.Apps, r.Lists != nil)
	if r.Instructions != "" {
		p.field("instructions", oneLine(r.Instructions, 200))
	} else {
		p.field("instructions", "none")
	}
	switch {
	case r.Cache != nil:
		ttl := "no ttlMs"
		if r.Cache.TTLMs != nil {
			ttl = "ttl " + r.Cache.TTL
			if *r.Cache.TTLMs == 0 {
				ttl += " (immediately stale)"
			}
		}
		scope := "no cacheScope"
		if r.Cache.Scope != "" {
			scope = "scope " + r.Cache.Scope
		}
		p.field("caching", ttl+", "+scope)
	case legacy:
		p.field("caching", "none (legacy servers send no caching hints)")
	default:
		p.field("caching", "none")
	}
	req := "server/discover"
	if legacy {
		req = "initialize"
	}
	p.field("latency", fmt.Sprintf("%.1fms (%s round trip)", r.LatencyMs, req))
	p.exit(r.Exit)
	p.steps(r.Probe)
	if r.Lists != nil {
		p.lists(r.Lists)
		p.views(r.Apps)
	}
	if r.Checks != nil {
		p.checks(r.Checks)
	}
}

func (p *printer) exit(e *exitInfo) {
	if e == nil {
		return
	}
	s := fmt.Sprintf("exited with status %d", e.Code)
	if e.Forced != "" {
		s = fmt.Sprintf("did not exit when its stdin closed; ended with %s", e.Forced)
	} else if e.AfterStdinCloseMs > 0 {
		s += fmt.Sprintf(", %.1fms after its stdin closed", e.AfterStdinCloseMs)
	}
	p.field("shutdown", s)
}

func (p *printer) steps(steps []step) {
	if len(steps) == 0 {
		return
	}
	p.printf("\n%s\n", p.style("how the era was told", styleBold))
	for i, s := range steps {
		// A multi-line answer (a server's stderr) stays in the column of the answer.
		answer := strings.ReplaceAll(s.Answer, "\n", "\n     ")
		p.printf("  %d. %s -> %s\n     %s\n", i+1, s.Request, answer, p.style(s.Meaning, styleDim))
	}
}

func (p *printer) lists(l *lists) {
	section := func(title, method string, items []json.RawMessage, key func(map[string]any) (string, string)) {
		p.printf("\n%s", p.style(fmt.Sprintf("%s (%d)", title, len(items)), styleBold))
		switch {
		case contains(l.Skipped, method):
			p.printf("  %s\n", p.style("not offered by the server's capabilities", styleDim))
			return
		case l.Errors[method] != "":
			p.printf("  %s\n", p.style(l.Errors[method], styleRed))
		default:
			p.printf("\n")
		}
		keys, descs := make([]string, len(items)), make([]string, len(items))
		width := 0
		for i, it := range items {
			var m map[string]any
			json.Unmarshal(it, &m)
			keys[i], descs[i] = key(m)
			if n := len([]rune(keys[i])); n > width && n <= 40 {
				width = n
			}
		}
		for i := range items {
			if len([]rune(keys[i])) > width {
				// A key too long for the column (a long URI) gets a line of its own, and its
				// description the column on the next line, so the other rows stay aligned.
				p.printf("  %s\n  %-*s  %s\n", keys[i], width, "", p.style(oneLine(descs[i], 90), styleDim))
				continue
			}
			p.printf("  %-*s  %s\n", width, keys[i], p.style(oneLine(descs[i], 90), styleDim))
		}
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	named := func(m map[string]any) (string, string) { return str(m, "name"), str(m, "description") }
	section("tools", "tools/list", l.Tools, named)
	section("prompts", "prompts/list", l.Prompts, named)
	nameDesc := func(m map[string]any) string {
		n, d := str(m, "name"), str(m, "description")
		if n != "" && d != "" {
			return n + ": " + d
		}
		return n + d
	}
	section("resources", "resources/list", l.Resources, func(m map[string]any) (string, string) {
		return str(m, "uri"), nameDesc(m)
	})
	section("resource templates", "resources/templates/list", l.ResourceTemplates, func(m map[string]any) (string, string) {
		return str(m, "uriTemplate"), nameDesc(m)
	})
}

func (p *printer) checks(cs []checkResult) {
	pass, fail := 0, 0
	for _, c := range cs {
		switch c.Status {
		case statusPass:
			pass++
		case statusFail:
			fail++
		}
	}
	p.printf("\n%s\n", p.style("checks", styleBold))
	width := 0
	for _, c := range cs {
		width = max(width, len(c.Title))
	}
	for _, c := range cs {
		var mark string
		switch c.Status {
		case statusPass:
			mark = p.style("PASS", styleGreen)
		case statusFail:
			mark = p.style("FAIL", styleRed)
		default:
			mark = p.style("SKIP", styleYellw)
		}
		p.printf("  %s  %-*s  %s\n", mark, width, c.Title, p.style(c.Section, styleDim))
		if c.Detail != "" {
			p.printf("        %s\n", c.Detail)
		}
	}
	p.printf("%d passed, %d failed", pass, fail)
	if n := len(cs) - pass - fail; n > 0 {
		p.printf(", %d skipped", n)
	}
	p.printf("\n")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// oneLine folds s onto one line of at most n runes, made harmless for a
// terminal (termSafe).
func oneLine(s string, n int) string {
	s = termSafe(strings.Join(strings.Fields(s), " "), false)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
