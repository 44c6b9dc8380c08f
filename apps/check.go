package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Finding is one broken rule: which rule, the object concerned (such as
// `tool "show"` or `resource "ui://demo/view.html"`) and what is wrong.
type Finding struct {
	Rule   Rule
	Object string
	Detail string
}

// String formats f on one line: level, rule id, object, detail, summary
// and section.
func (f Finding) String() string {
	return fmt.Sprintf("%s %s %s: %s (%s; spec: %s)", f.Rule.Level, f.Rule.ID, f.Object, f.Detail, f.Rule.Summary, f.Rule.Section)
}

// Source is what Check reads from a server: a connected client (the
// mcpkit command adapts *client.Client to it), or a server in process
// (Validate).
type Source interface {
	ListTools(ctx context.Context) iter.Seq2[*mcp.Tool, error]
	ListResources(ctx context.Context) iter.Seq2[*mcp.Resource, error]
	ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)
	CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error)
}

// CheckOptions tune Check; the zero value checks everything that needs no
// tool call.
type CheckOptions struct {
	// Calls are tool calls (name to arguments) to make for the
	// tool-content rule; a linked tool not called is listed in
	// Report.NotChecked. Tools are never called otherwise.
	Calls map[string]json.RawMessage
}

// Report is what Check found.
type Report struct {
	// Views are the ui:// resources listed or linked, in order of first
	// appearance; Tools the names of the tools linked to a view.
	Views []string
	Tools []string
	// Findings are the broken rules, in the order they were found.
	Findings []Finding
	// NotChecked names what could not be checked and why, such as the
	// content of a linked tool that was not called.
	NotChecked []string
}

// MaxViews bounds how many views Check reads from one server (a hostile
// server could list any number); the rest are reported as not checked.
const MaxViews = 1000

// Failed reports whether a MUST rule is broken.
func (r *Report) Failed() bool {
	for _, f := range r.Findings {
		if f.Rule.Level == Must {
			return true
		}
	}
	return false
}

// Check reads a server's tools and resources from src and applies every
// rule (see Rules) to its views and the tools linked to them. It reads
// each view once and calls only the tools opts names. The error is a
// failure to list; a failure to read a view is a finding.
func Check(ctx context.Context, src Source, opts *CheckOptions) (*Report, error) {
	if opts == nil {
		opts = &CheckOptions{}
	}
	r := &Report{}
	add := func(rule Rule, obj, format string, args ...any) {
		r.Findings = append(r.Findings, Finding{rule, obj, fmt.Sprintf(format, args...)})
	}
	seen := map[string]bool{}
	view := func(uri string) {
		if !seen[uri] {
			seen[uri] = true
			r.Views = append(r.Views, uri)
		}
	}
	for res, err := range src.ListResources(ctx) {
		if notFound(err) {
			break // a server without resources
		}
		if err != nil {
			return nil, fmt.Errorf("resources/list: %w", err)
		}
		if res.MIMEType != "" && isAppMIME(res.MIMEType) && !strings.HasPrefix(res.URI, Scheme) {
			add(RuleScheme, obj("resource", res.URI), "served as %s but the URI does not start with ui://", MIMEType)
		}
		if !strings.HasPrefix(res.URI, Scheme) {
			continue
		}
		view(res.URI)
		if !isAppMIME(res.MIMEType) {
			add(RuleListMIME, obj("resource", res.URI), "listed with mimeType %q", res.MIMEType)
		}
		checkViewMeta(res.Meta, obj("resource", res.URI)+" (list entry)", add)
	}
	var linked []*mcp.Tool
	for t, err := range src.ListTools(ctx) {
		if notFound(err) {
			break // a server without tools
		}
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		if checkToolMeta(t, add) {
			linked = append(linked, t)
			r.Tools = append(r.Tools, t.Name)
			if uri, _, ok := ToolView(t); ok && strings.HasPrefix(uri, Scheme) {
				view(uri)
			}
		}
	}
	linkedBy := map[string]string{}
	for _, t := range linked {
		if uri, _, ok := ToolView(t); ok {
			if _, dup := linkedBy[uri]; !dup {
				linkedBy[uri] = t.Name
			}
		}
	}
	for i, uri := range r.Views {
		if i == MaxViews {
			r.NotChecked = append(r.NotChecked, fmt.Sprintf("the views after the first %d (%d more) were not read", MaxViews, len(r.Views)-MaxViews))
			break
		}
		o := obj("resource", uri)
		res, err := src.ReadResource(ctx, uri)
		if err != nil {
			if strings.Contains(err.Error(), "without text or blob") {
				add(RuleContent, o, "resources/read: %v", err)
			} else if t, ok := linkedBy[uri]; ok {
				add(RuleExists, obj("tool", t), "its view %s cannot be read: %v", uri, err)
			} else {
				add(RuleExists, o, "listed but cannot be read: %v", err)
			}
			continue
		}
		if len(res.Contents) == 0 {
			add(RuleContent, o, "resources/read returned no contents")
			continue
		}
		for _, c := range res.Contents {
			if !isAppMIME(c.MIMEType) {
				add(RuleMIME, o, "contents served as %q", c.MIMEType)
			}
			html := c.Text
			if c.Blob != nil {
				html = string(c.Blob)
			}
			if html == "" {
				add(RuleContent, o, "the contents are empty")
			} else if !looksLikeHTML(html) {
				add(RuleHTML, o, "the document starts with %q", head(html))
			}
			checkViewMeta(c.Meta, o+" (contents)", add)
		}
	}
	for _, t := range linked {
		args, ok := opts.Calls[t.Name]
		if !ok {
			r.NotChecked = append(r.NotChecked, fmt.Sprintf("%s: tool %q was not called (--call %s=JSON)", RuleToolContent.ID, t.Name, t.Name))
			continue
		}
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		res, err := src.CallTool(ctx, t.Name, args)
		if err != nil {
			add(RuleToolContent, obj("tool", t.Name), "tools/call failed: %v", err)
			continue
		}
		if !meaningful(res) {
			add(RuleToolContent, obj("tool", t.Name), "the result has no non-empty content item")
		}
	}
	return r, nil
}

// notFound reports whether err says the method does not exist.
func notFound(err error) bool {
	var e *mcp.Error
	var je *jsonrpc.Error
	return errors.As(err, &e) && e.Code == jsonrpc.CodeMethodNotFound ||
		errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound
}

// meaningful reports whether a result has at least one content item with
// something in it.
func meaningful(res *mcp.CallToolResult) bool {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			if strings.TrimSpace(t.Text) != "" {
				return true
			}
			continue
		}
		if c != nil {
			return true
		}
	}
	return false
}

func obj(kind, name string) string { return fmt.Sprintf("%s %q", kind, name) }

// head returns the start of s for a finding.
func head(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// checkToolMeta applies the tool rules to t and reports whether t links a
// view.
func checkToolMeta(t *mcp.Tool, add func(Rule, string, string, ...any)) bool {
	o := obj("tool", t.Name)
	rawUI, hasUI := t.Meta["ui"]
	flat, hasFlat := t.Meta[FlatResourceURIKey]
	if !hasUI && !hasFlat {
		return false
	}
	var nested string
	if hasUI {
		ui, ok := rawUI.(map[string]any)
		if !ok {
			add(RuleMetaShape, o, "_meta.ui is %s, not an object", jsonKind(rawUI))
			ui = nil
		}
		if v, ok := ui["resourceUri"]; ok {
			if nested, ok = v.(string); !ok {
				add(RuleMetaShape, o, "_meta.ui.resourceUri is %s, not a string", jsonKind(v))
			}
		}
		if v, ok := ui["visibility"]; ok {
			_, isArr := v.([]any)
			vis := visibilityOf(v)
			switch {
			case !isArr:
				add(RuleMetaShape, o, "_meta.ui.visibility is %s, not an array", jsonKind(v))
			case vis == nil:
				add(RuleMetaShape, o, "_meta.ui.visibility holds a value that is not a string")
			default:
				if msg := checkVisibility(vis); msg != "" {
					add(RuleVisibility, o, "%s", msg)
				}
			}
		}
	}
	var flatURI string
	if hasFlat {
		s, ok := flat.(string)
		if !ok {
			add(RuleMetaShape, o, "_meta[\"ui/resourceUri\"] is %s, not a string", jsonKind(flat))
		}
		flatURI = s
	}
	switch {
	case nested == "" && flatURI == "":
		return false // a _meta.ui without a view (visibility only) links nothing
	case nested != "" && flatURI != "" && nested != flatURI:
		add(RuleMetaKeys, o, "_meta.ui.resourceUri %q and _meta[\"ui/resourceUri\"] %q differ", nested, flatURI)
	case nested == "":
		add(RuleMetaKeys, o, "only the deprecated flat _meta[\"ui/resourceUri\"] is set")
	case flatURI == "":
		add(RuleMetaKeys, o, "_meta[\"ui/resourceUri\"] is missing (hosts that read only the flat key see no view)")
	}
	uri := nested
	if uri == "" {
		uri = flatURI
	}
	if !strings.HasPrefix(uri, Scheme) {
		add(RuleScheme, o, "links view %q, which does not start with ui://", uri)
	}
	return true
}

// checkViewMeta applies the shape and origin rules to a view's _meta.
func checkViewMeta(meta mcp.Meta, o string, add func(Rule, string, string, ...any)) {
	raw, ok := meta["ui"]
	if !ok {
		return
	}
	ui, ok := raw.(map[string]any)
	if !ok {
		add(RuleMetaShape, o, "_meta.ui is %s, not an object", jsonKind(raw))
		return
	}
	if v, ok := ui["csp"]; ok {
		csp, ok := v.(map[string]any)
		if !ok {
			add(RuleMetaShape, o, "_meta.ui.csp is %s, not an object", jsonKind(v))
		}
		for _, k := range []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"} {
			lv, ok := csp[k]
			if !ok {
				continue
			}
			list, ok := lv.([]any)
			if !ok {
				add(RuleMetaShape, o, "_meta.ui.csp.%s is %s, not an array of strings", k, jsonKind(lv))
				continue
			}
			for _, e := range list {
				s, ok := e.(string)
				if !ok {
					add(RuleMetaShape, o, "_meta.ui.csp.%s holds %s, not a string", k, jsonKind(e))
					continue
				}
				if err := checkOrigin(s); err != nil {
					add(RuleCSPOrigin, o, "csp.%s %q: %v", k, s, err)
				}
			}
		}
	}
	if v, ok := ui["permissions"]; ok {
		p, ok := v.(map[string]any)
		if !ok {
			add(RuleMetaShape, o, "_meta.ui.permissions is %s, not an object", jsonKind(v))
		}
		for k, pv := range p {
			if _, ok := pv.(map[string]any); !ok {
				add(RuleMetaShape, o, "_meta.ui.permissions.%s is %s, not an object", k, jsonKind(pv))
			}
		}
	}
	if v, ok := ui["domain"]; ok {
		if _, ok := v.(string); !ok {
			add(RuleMetaShape, o, "_meta.ui.domain is %s, not a string", jsonKind(v))
		}
	}
	if v, ok := ui["prefersBorder"]; ok {
		if _, ok := v.(bool); !ok {
			add(RuleMetaShape, o, "_meta.ui.prefersBorder is %s, not a boolean", jsonKind(v))
		}
	}
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

// Validate reads s in process (through Server.Handle, as a 2026-07-28
// client that renders views) and returns every finding of Check, calling
// no tool, for tests:
//
//	if fs := apps.Validate(s); len(fs) > 0 { t.Error(fs) }
//
// A server that cannot be listed is reported as one finding of RuleExists.
func Validate(s *mcp.Server) []Finding {
	r, err := Check(context.Background(), &serverSource{s: s}, nil)
	if err != nil {
		return []Finding{{RuleExists, "server", err.Error()}}
	}
	return r.Findings
}
