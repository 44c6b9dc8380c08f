package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/mcpkit/mcpkit/internal/clip"
	"github.com/mcpkit/mcpkit/mcp"
)

// kind is what a merged list holds.
type kind int

const (
	kindTool kind = iota
	kindPrompt
	kindResource
	kindTemplate
)

// MaxNameLen bounds a namespaced tool or prompt name; a longer one is left
// out of the list and logged.
const MaxNameLen = 64

// nameChars are the characters of a tool name (revision 2026-07-28).
var nameChars = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// cursor is the position of a merged list: the backend and its cursor. It
// travels sealed (mcp.MethodRequest.SealCursor).
type cursor struct {
	Backend int    `json:"b"`
	Cursor  string `json:"c,omitempty"`
}

// MinPageItems is how many items a merged page gathers, at least, before
// it ends: the pages of backends without more pages are joined until then.
const MinPageItems = 100

// list serves one page of a merged list, from the sealed cursor's
// position: backends' pages joined until the page holds MinPageItems or a
// backend has more pages (the cursor then points into it). A backend that
// is down or fails is left out (a failure logged). The page is private if
// any part is, with the smallest TTL of its parts.
func (g *router) list(ctx context.Context, req *mcp.MethodRequest, member string, k kind) (*mcp.ProvidedResult, error) {
	p, err := params(req)
	if err != nil {
		return nil, err
	}
	var pos cursor
	if raw, ok := p["cursor"]; ok && string(raw) != "null" {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, mcp.InvalidParams("Invalid params: cursor must be a string")
		}
		data, err := req.OpenCursor(s)
		if err != nil {
			return nil, err
		}
		if json.Unmarshal(data, &pos) != nil || pos.Backend < 0 || pos.Backend >= len(g.backends) {
			return nil, mcp.InvalidParams("Invalid params: the cursor is from another gateway configuration; list again without a cursor")
		}
	}
	var caller *mcp.Principal
	if req.Info != nil {
		caller = req.Info.Principal
	}
	items := []json.RawMessage{}
	var hint *mcp.CacheHint
	var next *cursor
	for i := pos.Backend; i < len(g.backends) && next == nil && len(items) < MinPageItems; i++ {
		b := g.backends[i]
		if b.scoped() {
			// What the list holds depends on the caller's scopes.
			hint = mergeHint(hint, &mcp.CacheHint{Scope: mcp.CachePrivate})
			if !hasScopes(caller, b.scopes) {
				continue // hidden from this caller, as if it had nothing
			}
		}
		if !b.has(req.Method) || b.down(ctx) != nil {
			continue // a backend that is down: its items leave the list meanwhile
		}
		bp := map[string]json.RawMessage{}
		if i == pos.Backend && pos.Cursor != "" {
			bp["cursor"], _ = json.Marshal(pos.Cursor)
		}
		res, err := g.forward(ctx, b, req, bp)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			g.log.Warn("gateway: a backend's list is left out", "backend", b.name, "method", req.Method, "err", err)
			continue
		}
		var page map[string]json.RawMessage
		var got []json.RawMessage
		if err = json.Unmarshal(res.Body, &page); err == nil {
			got, err = g.renameFor(b, member, k, page[member], caller, true)
		}
		if err != nil {
			g.log.Warn("gateway: a backend's list is left out", "backend", b.name, "method", req.Method, "err", err)
			continue
		}
		items = append(items, got...)
		hint = mergeHint(hint, res.Cache)
		var nc string
		if json.Unmarshal(page["nextCursor"], &nc) == nil && nc != "" {
			next = &cursor{Backend: i, Cursor: nc}
		} else if len(items) >= MinPageItems && g.more(i+1, req.Method) {
			next = &cursor{Backend: i + 1}
		}
	}
	out := map[string]any{member: items}
	if next != nil {
		data, _ := json.Marshal(next)
		s, err := req.SealCursor(data)
		if err != nil {
			return nil, err
		}
		out["nextCursor"] = s
	}
	body, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	if hint == nil {
		hint = &mcp.CacheHint{}
	}
	return &mcp.ProvidedResult{Body: body, Cache: hint}, nil
}

// mergeHint merges the cache hints of two parts of one page: private if
// either is, the smaller TTL (Off, 0 ms, is the smallest; 0, the server's
// default, yields to a set one).
func mergeHint(a, b *mcp.CacheHint) *mcp.CacheHint {
	if b == nil {
		return a
	}
	if a == nil {
		c := *b
		return &c
	}
	if b.Scope == mcp.CachePrivate {
		a.Scope = mcp.CachePrivate
	}
	switch {
	case a.TTL == mcp.Off || b.TTL == mcp.Off:
		a.TTL = mcp.Off
	case a.TTL == 0:
		a.TTL = b.TTL
	case b.TTL != 0 && b.TTL < a.TTL:
		a.TTL = b.TTL
	}
	return a
}

// more reports whether a backend from index i on serves method.
func (g *router) more(i int, method string) bool {
	for ; i < len(g.backends); i++ {
		if g.backends[i].has(method) {
			return true
		}
	}
	return false
}

// rename returns a backend's list items as the gateway lists them: tools
// and prompts under their namespaced names (those that cannot be are left
// out and logged), resources and templates as they are, recorded for
// routing.
func (g *router) rename(b *backend, member string, k kind, raw json.RawMessage) ([]json.RawMessage, error) {
	return g.renameFor(b, member, k, raw, nil, false)
}

// renameFor is rename for a caller: when scoped, the tools whose
// ToolScopes caller lacks are left out too.
func (g *router) renameFor(b *backend, member string, k kind, raw json.RawMessage, caller *mcp.Principal, scoped bool) ([]json.RawMessage, error) {
	var items []map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("%s: %w", member, err)
		}
	}
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		switch k {
		case kindTool, kindPrompt:
			var name string
			if json.Unmarshal(it["name"], &name) != nil || name == "" {
				g.log.Warn("gateway: an item without a name is left out", "backend", b.name, "list", member)
				continue
			}
			if k == kindTool && !b.toolAllowed(name) {
				continue // the policy: not logged, it is no fault
			}
			if k == kindTool && scoped && len(b.toolScope[name]) > 0 && !hasScopes(caller, b.toolScope[name]) {
				continue // the caller lacks the tool's own scopes
			}
			full, err := g.publicName(b, name)
			if err != nil {
				g.log.Warn("gateway: an item is left out", "backend", b.name, "list", member, "name", clip.String(name, 256), "reason", clip.String(err.Error(), 1024))
				continue
			}
			it["name"], _ = json.Marshal(full)
		case kindResource:
			var uri string
			if json.Unmarshal(it["uri"], &uri) != nil || uri == "" {
				continue
			}
			g.res.saw(g, b, uri)
		case kindTemplate:
			var tmpl string
			if json.Unmarshal(it["uriTemplate"], &tmpl) != nil || tmpl == "" {
				continue
			}
			g.res.sawTemplate(b, tmpl)
		}
		enc, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		out = append(out, enc)
	}
	return out, nil
}

// publicName is the name a backend's tool or prompt is listed under, or
// an error saying why it cannot be.
func (g *router) publicName(b *backend, name string) (string, error) {
	full := name
	if !b.noPrefix {
		full = b.name + "_" + name
	} else if r, _, _ := g.route(name); r != b {
		return "", errors.New("it would route to backend " + r.name + " (its part before the first _ is that backend's name)")
	}
	if len(full) > MaxNameLen {
		return "", fmt.Errorf("%q is longer than %d characters", full, MaxNameLen)
	}
	if !nameChars.MatchString(full) {
		return "", fmt.Errorf("%q has characters outside A-Z, a-z, 0-9, _, - and '.'", full)
	}
	return full, nil
}
