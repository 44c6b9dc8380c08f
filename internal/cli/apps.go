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
	iclient "github.com/mcpkit/mcpkit/internal/client"
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

// appsCommand is `mcpkit apps check`: a client command with a
// subcommand word before its URL.
var appsCommand = &Command{
	UsageLine: "apps check [flags] URL\napps check [flags] -- COMMAND ARGS...",
	Short:     "check a server's MCP Apps views and linked tools against the spec",
	Long: `Checks a server against the rules of MCP Apps (io.modelcontextprotocol/ui,
specification 2026-01-26), as a client that renders views: the ui:// scheme,
the text/html;profile=mcp-app MIME type, text or blob, an HTML document, every
view a tool links exists, both _meta keys, the shapes of _meta.ui, CSP origins
and visibility values. Each finding names the rule, says it in one line, names
the specification's section and the object concerned. Tools are called only
with --call NAME=JSON, for the rule that a tool's result carries meaningful
content; a linked tool not called is reported as not checked. SHOULD findings
are shown but pass.
`,
	Exits:  exitsCall,
	Failed: "apps check: a MUST rule of MCP Apps is broken",
	Flag: func(fs *flag.FlagSet) Runner {
		f := registerClientFlags(fs)
		calls := callFlags{}
		fs.Var(calls, "call", "call the linked tool `NAME=JSON` with those arguments (a JSON object, may be {}) for the tool-content rule (repeatable)")
		return func(inv *invocation) int {
			if len(inv.args) == 0 || inv.args[0] != "check" {
				return inv.usageError("want a subcommand: check")
			}
			inv.args = inv.args[1:]
			t, _, code, ok := f.resolve(inv, clientCommand{name: "apps check"})
			if !ok {
				return code
			}
			return appsCheck(inv, f, t, calls)
		}
	},
}

// appsCheck runs `mcpkit apps check`.
func appsCheck(inv *invocation, f *clientFlags, t target, calls callFlags) int {
	stdin, stdout, stderr := inv.stdin, inv.stdout, inv.stderr
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
		return exitFailed
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
		fmt.Fprintf(w, "  (%s)", termSafe(iclient.ListSummary(r.Views, ", "), false))
	}
	fmt.Fprintf(w, "\n  tools  %d", len(r.Tools))
	if len(r.Tools) > 0 {
		fmt.Fprintf(w, "  (%s)", termSafe(iclient.ListSummary(r.Tools, ", "), false))
	}
	fmt.Fprintln(w)
	if len(r.Findings) > 0 {
		fmt.Fprintf(w, "\nfindings (%d)\n", len(r.Findings))
		for _, f := range r.Findings {
			fmt.Fprintf(w, "  %-6s %s  %s\n         %s\n         rule: %s (spec: %s)\n", f.Rule.Level, f.Rule.ID, oneLine(f.Object, 200), oneLine(f.Detail, 200), f.Rule.Summary, f.Rule.Section)
		}
	}
	if len(r.NotChecked) > 0 {
		fmt.Fprintf(w, "\nnot checked (%d)\n", len(r.NotChecked))
		for _, s := range r.NotChecked {
			fmt.Fprintf(w, "  %s\n", oneLine(s, 200))
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
			s += " (" + termSafe(iclient.ListSummary(a.MIMETypes, ", "), false) + ")"
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
		p.printf("  %s  %s  %s\n", oneLine(v.Tool, 200), oneLine(v.View, 400), p.style("visibility "+oneLine(strings.Join(v.Visibility, ", "), 100), styleDim))
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
