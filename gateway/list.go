package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

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

// list serves one page of a merged list: the next page of one backend,
// from the sealed cursor's position. A backend that fails is left out
// (and logged) and the page comes from the next one.
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
	for i := pos.Backend; i < len(g.backends); i++ {
		b := g.backends[i]
		bc := ""
		if i == pos.Backend {
			bc = pos.Cursor
		}
		if !b.has(req.Method) {
			continue
		}
		bp := map[string]json.RawMessage{}
		if bc != "" {
			bp["cursor"], _ = json.Marshal(bc)
		}
		if err := b.down(ctx); err != nil {
			continue // its items leave the list while it is down
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
		if err := json.Unmarshal(res.Body, &page); err != nil {
			g.log.Warn("gateway: a backend's list is left out", "backend", b.name, "method", req.Method, "err", err)
			continue
		}
		items, err := g.rename(b, member, k, page[member])
		if err != nil {
			g.log.Warn("gateway: a backend's list is left out", "backend", b.name, "method", req.Method, "err", err)
			continue
		}
		out := map[string]any{member: items}
		next := cursor{Backend: i + 1}
		var nc string
		if json.Unmarshal(page["nextCursor"], &nc) == nil && nc != "" {
			next = cursor{Backend: i, Cursor: nc}
		}
		if g.more(next.Backend, req.Method) || next.Cursor != "" {
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
		return &mcp.ProvidedResult{Body: body, Cache: res.Cache}, nil
	}
	body, _ := json.Marshal(map[string]any{member: []any{}})
	return &mcp.ProvidedResult{Body: body, Cache: &mcp.CacheHint{}}, nil
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
			full, err := g.publicName(b, name)
			if err != nil {
				g.log.Warn("gateway: an item is left out", "backend", b.name, "list", member, "name", name, "reason", err.Error())
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
		return "", fmt.Errorf("%q has characters outside A-Z, a-z, 0-9, _, - and .", full)
	}
	return full, nil
}
