// Package apps helps Go servers and clients use MCP Apps, the
// io.modelcontextprotocol/ui extension (specification 2026-01-26): a tool
// comes with an interactive HTML view that a host renders in a sandboxed
// iframe.
//
// On the server, AddView registers a view (a ui:// resource served as
// text/html;profile=mcp-app with its _meta.ui), AddTool links a tool to it,
// Extension advertises the extension in server/discover, and Supported tells
// a handler, per request, whether the caller can render views. Validate and
// Check report every rule of the specification a server breaks. On the
// client, ClientExtension declares support and ToolView reads a listed
// tool's view.
//
// Every function is safe for concurrent use.
package apps

import (
	"context"
	"encoding/json"
	"mime"
	"strings"

	"github.com/mcpkit/mcpkit/mcp"
)

const (
	// ExtensionID names the extension in capabilities.extensions.
	ExtensionID = "io.modelcontextprotocol/ui"
	// MIMEType is the media type of an HTML view.
	MIMEType = "text/html;profile=mcp-app"
	// Scheme starts every view's URI.
	Scheme = "ui://"
	// FlatResourceURIKey is the deprecated flat _meta key that carries a
	// tool's view URI; hosts still read it, so AddTool writes it too.
	FlatResourceURIKey = "ui/resourceUri"
)

// Visibility says who may see and call a tool linked to a view.
type Visibility string

const (
	// Model: the tool is in the agent's tool list and callable by it.
	Model Visibility = "model"
	// App: the tool is callable by the views of the same server.
	App Visibility = "app"
)

// settings is the extension's settings object, on both sides.
type settings struct {
	MIMETypes []string `json:"mimeTypes"`
}

// Extension returns the value to put under ExtensionID in
// mcp.ServerOptions.Extensions, which advertises the extension in
// server/discover:
//
//	mcp.ServerOptions{Extensions: map[string]any{apps.ExtensionID: apps.Extension()}}
func Extension() any { return settings{MIMETypes: []string{MIMEType}} }

// ClientExtension returns the value to put under ExtensionID in
// client.Options.Extensions, which declares that the client renders HTML
// views.
func ClientExtension() json.RawMessage {
	return json.RawMessage(`{"mimeTypes":["` + MIMEType + `"]}`)
}

// Supported reports whether the caller of one request renders HTML views:
// its capabilities declare the extension with a mimeTypes entry that is
// text/html with profile=mcp-app (compared as media types, so spaces and
// the case of names do not matter). On 2026-07-28 capabilities travel with
// every request, so ask per request, never once at start-up; for a legacy
// session info holds what its initialize declared. A nil info is not
// supported.
func Supported(info *mcp.RequestInfo) bool {
	if info == nil {
		return false
	}
	raw, ok := info.ClientCapabilities.Extensions[ExtensionID]
	if !ok {
		return false
	}
	var s settings
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	for _, m := range s.MIMETypes {
		if isAppMIME(m) {
			return true
		}
	}
	return false
}

// isAppMIME reports whether m is text/html with the profile parameter
// mcp-app.
func isAppMIME(m string) bool {
	t, params, err := mime.ParseMediaType(m)
	return err == nil && t == "text/html" && params["profile"] == "mcp-app"
}

// ToolView returns the view URI of a listed tool (from _meta.ui.resourceUri,
// or the deprecated flat _meta["ui/resourceUri"]) and its visibility (the
// default, model and app, when the tool does not say). ok is false when the
// tool has no view. Malformed values are treated as absent; Check reports
// them.
func ToolView(t *mcp.Tool) (uri string, vis []Visibility, ok bool) {
	if t == nil {
		return "", nil, false
	}
	ui, _ := t.Meta["ui"].(map[string]any)
	uri, _ = ui["resourceUri"].(string)
	if uri == "" {
		uri, _ = t.Meta[FlatResourceURIKey].(string)
	}
	if uri == "" {
		return "", nil, false
	}
	vis = visibilityOf(ui["visibility"])
	if vis == nil {
		vis = []Visibility{Model, App}
	}
	return uri, vis, true
}

// visibilityOf converts a decoded visibility value ([]any from JSON or
// []Visibility from a registration) to a slice, or nil when absent or
// malformed.
func visibilityOf(v any) []Visibility {
	switch v := v.(type) {
	case []Visibility:
		return v
	case []any:
		out := make([]Visibility, 0, len(v))
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil
			}
			out = append(out, Visibility(s))
		}
		return out
	}
	return nil
}

// appOnly reports whether a tool is linked to a view and hidden from the
// model.
func appOnly(t *mcp.Tool) bool {
	_, vis, ok := ToolView(t)
	if !ok {
		return false
	}
	for _, v := range vis {
		if v == Model {
			return false
		}
	}
	return true
}

// HideWithoutUI returns f with its Tools and Resources filters wrapped so
// that a caller that does not render views (Supported is false) sees
// neither the tools only views may call (visibility without model) nor the
// ui:// resources; f's own filters still apply to everything else. Without
// it lists do not vary by caller and stay public; with it the tools and
// resources lists are computed per request and marked private (see
// mcp.ListFilters).
func HideWithoutUI(f mcp.ListFilters) mcp.ListFilters {
	tools, res := f.Tools, f.Resources
	f.Tools = func(ctx context.Context, info *mcp.RequestInfo, t *mcp.Tool) bool {
		if appOnly(t) && !Supported(info) {
			return false
		}
		return tools == nil || tools(ctx, info, t)
	}
	f.Resources = func(ctx context.Context, info *mcp.RequestInfo, r *mcp.Resource) bool {
		if strings.HasPrefix(r.URI, Scheme) && !Supported(info) {
			return false
		}
		return res == nil || res(ctx, info, r)
	}
	return f
}
