package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// callFlags collects repeated --call NAME=JSON flags.
type callFlags map[string]json.RawMessage

func (c callFlags) String() string { return "" }

func (c callFlags) Set(v string) error {
	name, arg, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=JSON, got %q", v)
	}
	obj, err := jsonObjectArg("the arguments of "+name, arg)
	if err != nil {
		return err
	}
	if obj == nil {
		obj = json.RawMessage("{}")
	}
	c[name] = obj
	return nil
}

var appsCheckCommand = clientCommand{name: "apps check", about: `Checks a server against the rules of MCP Apps (io.modelcontextprotocol/ui,
specification 2026-01-26), as a client that renders views: the ui:// scheme,
the text/html;profile=mcp-app MIME type, text or blob, an HTML document, every
view a tool links exists, both _meta keys, the shapes of _meta.ui, CSP origins
and visibility values. Each finding names the rule, says it in one line, names
the specification's section and the object concerned. Tools are called only
with --call NAME=JSON, for the rule that a tool's result carries meaningful
content; a linked tool not called is reported as not checked. Exits 1 when a
MUST rule is broken; SHOULD findings are shown but pass.
`}

// appsCmd runs `mcpkit apps SUBCOMMAND`.
func appsCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "check" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(stdout, "Usage:\n  mcpkit apps check [flags] URL\n  mcpkit apps check [flags] -- COMMAND ARGS...\n")
			return exitOK
		}
		fmt.Fprint(stderr, "mcpkit apps: want a subcommand: check\n\nUsage:\n  mcpkit apps check [flags] URL\n  mcpkit apps check [flags] -- COMMAND ARGS...\n")
		return exitUsage
	}
	calls := callFlags{}
	cc := appsCheckCommand
	cc.flags = func(fs *flag.FlagSet) {
		fs.Var(calls, "call", "call tool `NAME=JSON` (JSON an object of arguments, may be empty) for the tool-content rule (repeatable)")
	}
	f, t, _, code, ok := parseClientArgs(cc, args[1:], stdout, stderr)
	if !ok {
		return code
	}
	f.extensions = map[string]json.RawMessage{apps.ExtensionID: apps.ClientExtension()}
	ctx := context.Background()
	c, code := connectClient(ctx, "apps check", f, t, clientIO{stdin, stderr})
	if c == nil {
		return code
	}
	defer c.Close()
	rep, err := apps.Check(ctx, clientSource{c.Client}, &apps.CheckOptions{Calls: calls})
	if err != nil {
		return requestFailed("apps check", err, stderr)
	}
	for name := range calls {
		if !contains(rep.Tools, name) {
			fmt.Fprintf(stderr, "mcpkit apps check: --call %s: no tool of that name links a view\n", name)
			return exitUsage
		}
	}
	if f.json {
		b, _ := json.Marshal(appsReportJSON(rep))
		printRaw(stdout, b)
	} else {
		printAppsReport(stdout, t.String(), rep)
	}
	if rep.Failed() {
		return exitCheckFailed
	}
	return exitOK
}

// appsReportJSON is the --json form of a report.
func appsReportJSON(r *apps.Report) any {
	type finding struct {
		Rule    string `json:"rule"`
		Level   string `json:"level"`
		Summary string `json:"summary"`
		Section string `json:"section"`
		Object  string `json:"object"`
		Detail  string `json:"detail"`
	}
	out := struct {
		OK         bool      `json:"ok"`
		Views      []string  `json:"views"`
		Tools      []string  `json:"tools"`
		Findings   []finding `json:"findings"`
		NotChecked []string  `json:"notChecked,omitempty"`
	}{OK: !r.Failed(), Views: r.Views, Tools: r.Tools, Findings: []finding{}, NotChecked: r.NotChecked}
	for _, f := range r.Findings {
		out.Findings = append(out.Findings, finding{f.Rule.ID, string(f.Rule.Level), f.Rule.Summary, f.Rule.Section, f.Object, f.Detail})
	}
	if out.Views == nil {
		out.Views = []string{}
	}
	if out.Tools == nil {
		out.Tools = []string{}
	}
	return out
}

func printAppsReport(w io.Writer, target string, r *apps.Report) {
	fmt.Fprintf(w, "MCP Apps check of %s\n", target)
	fmt.Fprintf(w, "  views  %d", len(r.Views))
	if len(r.Views) > 0 {
		fmt.Fprintf(w, "  (%s)", strings.Join(r.Views, ", "))
	}
	fmt.Fprintf(w, "\n  tools  %d", len(r.Tools))
	if len(r.Tools) > 0 {
		fmt.Fprintf(w, "  (%s)", strings.Join(r.Tools, ", "))
	}
	fmt.Fprintln(w)
	if len(r.Findings) > 0 {
		fmt.Fprintf(w, "\nfindings (%d)\n", len(r.Findings))
		for _, f := range r.Findings {
			fmt.Fprintf(w, "  %-6s %s  %s\n         %s\n         rule: %s (spec: %s)\n", f.Rule.Level, f.Rule.ID, f.Object, oneLine(f.Detail, 200), f.Rule.Summary, f.Rule.Section)
		}
	}
	if len(r.NotChecked) > 0 {
		fmt.Fprintf(w, "\nnot checked (%d)\n", len(r.NotChecked))
		for _, s := range r.NotChecked {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	switch {
	case r.Failed():
		fmt.Fprintln(w, "\nFAIL: a MUST rule is broken")
	case len(r.Views) == 0 && len(r.Tools) == 0:
		fmt.Fprintln(w, "\nok: no views and no linked tools (the server does not use MCP Apps)")
	default:
		fmt.Fprintln(w, "\nok: every MUST rule holds")
	}
}

// appsInfo is what `mcpkit discover` shows about MCP Apps: whether the
// server advertises the extension, and (with --list) its views.
type appsInfo struct {
	Advertised bool       `json:"advertised"`
	MIMETypes  []string   `json:"mimeTypes,omitempty"`
	Views      []viewLink `json:"views,omitempty"`
}

// viewLink is a tool linked to a view.
type viewLink struct {
	Tool       string   `json:"tool"`
	View       string   `json:"view"`
	Visibility []string `json:"visibility"`
}

// describeApps returns what caps and the listed tools say about MCP Apps,
// or nil when neither mentions it.
func describeApps(caps json.RawMessage, l *lists) *appsInfo {
	var c struct {
		Extensions map[string]struct {
			MIMETypes []string `json:"mimeTypes"`
		} `json:"extensions"`
	}
	json.Unmarshal(caps, &c)
	a := &appsInfo{}
	if ext, ok := c.Extensions[apps.ExtensionID]; ok {
		a.Advertised, a.MIMETypes = true, ext.MIMETypes
	}
	if l != nil {
		for _, raw := range l.Tools {
			var t mcp.Tool
			if json.Unmarshal(raw, &t) != nil {
				continue
			}
			if uri, vis, ok := apps.ToolView(&t); ok {
				v := viewLink{Tool: t.Name, View: uri}
				for _, x := range vis {
					v.Visibility = append(v.Visibility, string(x))
				}
				a.Views = append(a.Views, v)
			}
		}
	}
	if !a.Advertised && len(a.Views) == 0 {
		return nil
	}
	return a
}

// apps prints the MCP Apps line of discover's report.
func (p *printer) apps(a *appsInfo, listed bool) {
	if a == nil {
		return
	}
	s := "not advertised"
	if a.Advertised {
		s = apps.ExtensionID + " advertised"
		if len(a.MIMETypes) > 0 {
			s += " (" + strings.Join(a.MIMETypes, ", ") + ")"
		}
	}
	switch {
	case len(a.Views) > 0:
		s += fmt.Sprintf("; %d tool(s) with a view", len(a.Views))
	case listed:
		s += "; no tool links a view"
	default:
		s += "; --list shows the views"
	}
	p.field("apps", s)
}

// views prints the tools linked to views (discover --list).
func (p *printer) views(a *appsInfo) {
	if a == nil || len(a.Views) == 0 {
		return
	}
	p.printf("\n%s\n", p.style(fmt.Sprintf("views (%d)", len(a.Views)), styleBold))
	for _, v := range a.Views {
		p.printf("  %s  %s  %s\n", v.Tool, v.View, p.style("visibility "+strings.Join(v.Visibility, ", "), styleDim))
	}
}

// clientSource adapts a connected client to apps.Source.
type clientSource struct{ c *client.Client }

func (s clientSource) ListTools(ctx context.Context) iter.Seq2[*mcp.Tool, error] {
	return s.c.ListTools(ctx)
}

func (s clientSource) ListResources(ctx context.Context) iter.Seq2[*mcp.Resource, error] {
	return s.c.ListResources(ctx)
}

func (s clientSource) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	return s.c.ReadResource(ctx, uri)
}

func (s clientSource) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return s.c.CallTool(ctx, name, args)
}
