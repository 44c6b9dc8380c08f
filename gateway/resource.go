package gateway

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/yosida95/uritemplate/v3"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/clip"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// MaxIndexPages bounds the pages of one backend's resource and template
// lists that the gateway reads to rebuild its resource index.
const MaxIndexPages = 100

// MaxIndexURIs bounds the concrete URIs and the templates the resource
// index holds (each); past it, new ones are not recorded (a URI only
// there is ResourceNotFound) and a warning is logged once.
const MaxIndexURIs = 100_000

// maxIndexURIs is MaxIndexURIs, lowered by tests.
var maxIndexURIs = MaxIndexURIs

// indexRefresh is how often, at most, a read of an unknown URI rebuilds
// the resource index.
const indexRefresh = time.Second

// resourceIndex routes resource URIs: concrete URIs to the backend that
// listed them (the first in config order when several did), templates to
// the backends whose templates match.
type resourceIndex struct {
	mu        sync.Mutex
	uris      map[string]*backend
	templates map[string][]*backend // by template text
	compiled  map[string]*uritemplate.Template
	built     time.Time
	warned    map[string]bool // URIs listed by two backends, warned about; "" the cap
}

// warnOnce reports whether key was not warned about yet, and records it.
func (x *resourceIndex) warnOnce(key string) bool {
	if x.warned[key] || len(x.warned) >= maxIndexURIs {
		return false
	}
	if x.warned == nil {
		x.warned = map[string]bool{}
	}
	x.warned[key] = true
	return true
}

// saw records that b listed uri.
func (x *resourceIndex) saw(g *router, b *backend, uri string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.uris == nil {
		x.uris = map[string]*backend{}
	}
	old := x.uris[uri]
	switch {
	case old == nil && len(x.uris) >= maxIndexURIs:
		if x.warnOnce("") {
			g.log.Warn("gateway: the resource index is full; URIs listed from now on are not routed", "max", maxIndexURIs)
		}
	case old == nil:
		x.uris[uri] = b
	case old != b:
		first, other := old, b
		if b.index < old.index {
			first, other = b, old
			x.uris[uri] = b
		}
		if x.warnOnce(uri) {
			g.log.Warn("gateway: two backends list one resource URI; reads go to the first in config order", "uri", clip.String(uri, 1024), "to", first.name, "also", other.name)
		}
	}
}

// sawTemplate records that b listed the template tmpl.
func (x *resourceIndex) sawTemplate(b *backend, tmpl string) {
	t, err := uritemplate.New(tmpl)
	if err != nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.templates == nil {
		x.templates, x.compiled = map[string][]*backend{}, map[string]*uritemplate.Template{}
	}
	for _, o := range x.templates[tmpl] {
		if o == b {
			return
		}
	}
	if len(x.templates) >= maxIndexURIs {
		return
	}
	x.templates[tmpl] = append(x.templates[tmpl], b)
	x.compiled[tmpl] = t
}

// lookup returns the backends uri routes to: the one that listed it, else
// those whose templates match it (in config order).
func (x *resourceIndex) lookup(uri string) []*backend {
	x.mu.Lock()
	defer x.mu.Unlock()
	if b := x.uris[uri]; b != nil {
		return []*backend{b}
	}
	if bs := x.templates[uri]; len(bs) > 0 { // a template itself (completion)
		return bs
	}
	seen := map[*backend]bool{}
	var out []*backend
	for tmpl, t := range x.compiled {
		if t.Match(uri) == nil {
			continue
		}
		for _, b := range x.templates[tmpl] {
			if !seen[b] {
				seen[b] = true
				out = append(out, b)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out
}

// resolve returns the backend a resource URI routes to. An URI no backend
// listed nor matches is ResourceNotFound; no backend is asked to read it.
func (g *router) resolve(ctx context.Context, uri string) (*backend, error) {
	bs := g.res.lookup(uri)
	if len(bs) == 0 && g.rebuild(ctx) {
		bs = g.res.lookup(uri)
	}
	switch len(bs) {
	case 0:
		return nil, mcp.ResourceNotFound(uri)
	case 1:
		return bs[0], nil
	}
	names := make([]string, len(bs))
	for i, b := range bs {
		if b.name == g.prefer {
			return b, nil
		}
		names[i] = b.name
	}
	return nil, &mcp.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: the resource URI matches templates of several backends (" + strings.Join(names, ", ") + "); the gateway's resources.prefer can name one"}
}

// rebuild lists every backend's resources and templates into the index,
// at most once per indexRefresh; it reports whether it did.
func (g *router) rebuild(ctx context.Context) bool {
	g.res.mu.Lock()
	if time.Since(g.res.built) < indexRefresh {
		g.res.mu.Unlock()
		return false
	}
	g.res.built = time.Now()
	g.res.mu.Unlock()
	for _, b := range g.backends {
		if !b.has("resources/list") {
			continue
		}
		c, err := b.client(ctx)
		if err != nil {
			g.log.Warn("gateway: indexing a backend's resources", "backend", b.name, "err", err)
			continue
		}
		for _, l := range []struct {
			method, member string
			k              kind
		}{{"resources/list", "resources", kindResource}, {"resources/templates/list", "resourceTemplates", kindTemplate}} {
			cur := ""
			for range MaxIndexPages {
				p := map[string]any{}
				if cur != "" {
					p["cursor"] = cur
				}
				raw, err := c.Call(ctx, l.method, p)
				if err != nil {
					g.log.Warn("gateway: indexing a backend's resources", "backend", b.name, "method", l.method, "err", err)
					break
				}
				var page map[string]json.RawMessage
				if json.Unmarshal(raw, &page) != nil {
					break
				}
				g.rename(b, l.member, l.k, page[l.member])
				if json.Unmarshal(page["nextCursor"], &cur) != nil || cur == "" {
					break
				}
			}
		}
	}
	return true
}

// client returns a client of the backend's bridge, in process.
func (b *backend) client(ctx context.Context) (*client.Client, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inner != nil {
		return b.inner, nil
	}
	br := b.bridge()
	if br == nil {
		return nil, b.down(ctx)
	}
	c, err := client.Connect(ctx, &client.MemoryTransport{Server: br.Server()}, &client.Options{NoCache: true, Timeout: -1})
	if err != nil {
		return nil, err
	}
	b.inner = c
	return c, nil
}

// read routes resources/read by its URI.
func (g *router) read(ctx context.Context, req *mcp.MethodRequest) (*mcp.ProvidedResult, error) {
	p, err := params(req)
	if err != nil {
		return nil, err
	}
	var uri string
	if json.Unmarshal(p["uri"], &uri) != nil || uri == "" {
		return nil, mcp.InvalidParams("Invalid params: uri must be a non-empty string")
	}
	b, err := g.resolve(ctx, uri)
	if err != nil {
		return nil, err
	}
	return g.forward(ctx, b, req, p)
}

// complete routes completion/complete to the owner of its ref.
func (g *router) complete(ctx context.Context, req *mcp.MethodRequest) (*mcp.ProvidedResult, error) {
	p, err := params(req)
	if err != nil {
		return nil, err
	}
	var ref map[string]json.RawMessage
	if json.Unmarshal(p["ref"], &ref) != nil {
		return nil, mcp.InvalidParams("Invalid params: ref must be an object")
	}
	var typ string
	json.Unmarshal(ref["type"], &typ)
	var b *backend
	switch typ {
	case "ref/prompt":
		var name string
		json.Unmarshal(ref["name"], &name)
		r, inner, ok := g.route(name)
		if !ok || name == "" {
			return nil, mcp.InvalidParams("Unknown prompt: " + name)
		}
		b = r
		ref["name"], _ = json.Marshal(inner)
	case "ref/resource":
		var uri string
		json.Unmarshal(ref["uri"], &uri)
		if b, err = g.resolve(ctx, uri); err != nil {
			return nil, err
		}
	default:
		return nil, mcp.InvalidParams("Invalid params: ref.type must be ref/prompt or ref/resource")
	}
	if !b.has("completion/complete") {
		body, _ := json.Marshal(map[string]any{"completion": map[string]any{"values": []string{}}})
		return &mcp.ProvidedResult{Body: body}, nil
	}
	p["ref"], _ = json.Marshal(ref)
	return g.forward(ctx, b, req, p)
}
