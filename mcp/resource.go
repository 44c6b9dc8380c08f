package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/yosida95/uritemplate/v3"
)

// Resource describes a resource as clients see it in resources/list.
type Resource struct {
	// URI identifies the resource; it must be an absolute URI.
	URI string `json:"uri"`
	// Name is the resource's name. Required.
	Name string `json:"name"`
	// Title is an optional display name.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// MIMEType is the resource's media type. Contents read without a
	// MIME type of their own get this one.
	MIMEType    string       `json:"mimeType,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`

	// CacheTTL and CacheScope override the server's caching hints
	// (ServerOptions.Cache) on resources/read results of this resource.
	// Zero values keep the server's; CacheTTL Off sends ttlMs 0,
	// "immediately stale". A ReadResourceResult can override them again.
	CacheTTL   time.Duration `json:"-"`
	CacheScope CacheScope    `json:"-"`

	// Scopes are the OAuth scopes a caller's access token must all grant
	// for the caller to see this resource in lists and to read it, on a server
	// with AuthOptions; without them the request gets 403
	// insufficient_scope naming them. Callers without a Principal (stdio)
	// are not checked. Not sent to clients.
	Scopes []string `json:"-"`
}

// ResourceTemplate describes a family of resources whose URIs match an
// RFC 6570 URI template, as clients see it in resources/templates/list.
type ResourceTemplate struct {
	// URITemplate is the RFC 6570 template, such as
	// "file:///{+path}" or "weather://{city}/today".
	URITemplate string `json:"uriTemplate"`
	// Name is the template's name. Required.
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`

	// CacheTTL and CacheScope override the server's caching hints on
	// resources/read results of matching URIs, as for Resource.
	CacheTTL   time.Duration `json:"-"`
	CacheScope CacheScope    `json:"-"`

	// Scopes are the OAuth scopes a caller's access token must all grant
	// for the caller to see this template in lists and to read resources through it, on a server
	// with AuthOptions; without them the request gets 403
	// insufficient_scope naming them. Callers without a Principal (stdio)
	// are not checked. Not sent to clients.
	Scopes []string `json:"-"`

	// Complete, when set, suggests values for the template's variables in
	// completion/complete requests.
	Complete CompletionHandler `json:"-"`
}

// ResourceRequest is a resources/read request as its handler sees it.
type ResourceRequest struct {
	requestBase
	// Info describes the request: the protocol version and era, the client
	// identity, capabilities and log level its _meta declared, and the
	// verified principal.
	Info *RequestInfo
	inputs
	// URI is the URI being read.
	URI string
	// Template is the URI template the URI matched, or "" when a static
	// resource is read.
	Template string
	// Params holds the values of the template's variables, percent-decoded
	// (a list variable such as {/path*} holds its items joined with ",").
	// It is nil for a static resource.
	Params map[string]string
}

// ReadResourceResult is the result of reading a resource.
type ReadResourceResult struct {
	// Contents are the resource's contents; one item for most resources.
	// An item without a URI gets the requested URI, and one without a MIME
	// type gets the registered resource's or template's.
	Contents []*ResourceContents
	// CacheTTL and CacheScope, when not zero, override the caching hints
	// of this one result (see Resource.CacheTTL).
	CacheTTL   time.Duration
	CacheScope CacheScope
	Meta       Meta
}

// ResourceHandler reads a resource. Returning ResourceNotFound (or a nil
// result, or one without contents) answers that the resource does not
// exist; another *Error is sent as it is; an *InputRequired (from
// req.Elicit, Sample or ListRoots) becomes an input_required result; any
// other error becomes an internal error (-32603) whose details are logged,
// not sent.
type ResourceHandler func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error)

type resourceEntry struct {
	resource Resource
	encoded  []byte
	handler  ResourceHandler
}

type templateEntry struct {
	template ResourceTemplate
	tmpl     *uritemplate.Template
	vars     []string
	encoded  []byte
	handler  ResourceHandler
}

// AddResource registers a static resource, read by h, on s. It replaces a
// resource with the same URI. It panics on programmer errors (a URI that is
// not absolute, a missing name or handler), naming the resource. It is safe
// to call while serving.
func (s *Server) AddResource(r *Resource, h ResourceHandler) {
	what := fmt.Sprintf("AddResource %q", r.URI)
	if u, err := url.Parse(r.URI); err != nil || u.Scheme == "" {
		panic(what + ": the URI must be absolute, with a scheme")
	}
	if r.Name == "" {
		panic(what + ": missing name")
	}
	if h == nil {
		panic(what + ": missing handler")
	}
	checkCacheScope(what, r.CacheScope)
	checkScopes("AddResource", r.URI, r.Scopes)
	e := &resourceEntry{resource: *r, handler: h}
	e.resource.Scopes = slices.Clone(r.Scopes)
	e.encoded = mustMarshal(&e.resource)
	s.mu.Lock()
	s.reg.resources[r.URI] = e
	s.changed(ResourcesListChanged)
	s.mu.Unlock()
}

// AddResourceTemplate registers a resource template on s: every URI that
// matches t.URITemplate and no static resource is read by h, which receives
// the template's variables in ResourceRequest.Params. Templates are tried
// in the order of their URI templates, and the first match wins. It
// replaces a template with the same URI template and panics on programmer
// errors (an invalid template, a missing name or handler), naming the
// template. It is safe to call while serving.
func (s *Server) AddResourceTemplate(t *ResourceTemplate, h ResourceHandler) {
	what := fmt.Sprintf("AddResourceTemplate %q", t.URITemplate)
	tmpl, err := uritemplate.New(t.URITemplate)
	if err != nil {
		panic(what + ": " + err.Error())
	}
	if t.Name == "" {
		panic(what + ": missing name")
	}
	if h == nil {
		panic(what + ": missing handler")
	}
	checkCacheScope(what, t.CacheScope)
	checkScopes("AddResourceTemplate", t.URITemplate, t.Scopes)
	e := &templateEntry{template: *t, tmpl: tmpl, vars: tmpl.Varnames(), handler: h}
	e.template.Scopes = slices.Clone(t.Scopes)
	e.encoded = mustMarshal(&e.template)
	s.mu.Lock()
	s.reg.templates[t.URITemplate] = e
	s.changed(ResourcesListChanged)
	s.mu.Unlock()
}

// RemoveResources removes the static resources with the given URIs and the
// templates with the given URI templates; unknown ones are ignored.
func (s *Server) RemoveResources(uris ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, u := range uris {
		if _, ok := s.reg.resources[u]; ok {
			delete(s.reg.resources, u)
			n++
		}
		if _, ok := s.reg.templates[u]; ok {
			delete(s.reg.templates, u)
			n++
		}
	}
	if n > 0 {
		s.changed(ResourcesListChanged)
	}
}

func (r *registry) buildResources(s *Server, sn *snapshot) {
	if len(r.resources) == 0 && len(r.templates) == 0 && r.skills == nil {
		return
	}
	sn.caps.Resources = &ResourcesCapability{}
	sn.resources = make(map[string]*resourceEntry, len(r.resources))
	items := make([]listItem, 0, len(r.resources))
	for uri, e := range r.resources {
		sn.resources[uri] = e
		items = append(items, listItem{key: uri, json: e.encoded, scopes: e.resource.Scopes, v: e})
	}
	items = r.addSkillResources(sn, items)
	sn.resourcesList = newListing(s, "resources", items)

	items = make([]listItem, 0, len(r.templates))
	sn.templates = make([]*templateEntry, 0, len(r.templates))
	for t, e := range r.templates {
		sn.templates = append(sn.templates, e)
		items = append(items, listItem{key: t, json: e.encoded, scopes: e.template.Scopes, v: e})
	}
	sort.Slice(sn.templates, func(i, j int) bool {
		return sn.templates[i].template.URITemplate < sn.templates[j].template.URITemplate
	})
	sn.templatesList = newListing(s, "resourceTemplates", items)
}

func handleResourcesList(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	if x.snap.resourcesList == nil {
		return nil, methodNotFound(x.method)
	}
	return x.servePage(ctx, x.snap.resourcesList, dst)
}

func handleResourceTemplatesList(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	if x.snap.templatesList == nil {
		return nil, methodNotFound(x.method)
	}
	return x.servePage(ctx, x.snap.templatesList, dst)
}

// resolvedResource is what lookupResource found for a URI: a resource, or
// the first template that matches it, with what reading it needs.
type resolvedResource struct {
	handler  ResourceHandler
	mimeType string
	ttl      time.Duration
	scope    CacheScope
	scopes   []string
	template string            // the matched template's URITemplate; "" for a resource
	params   map[string]string // the template's variables
}

// lookupResource finds what a resources/read of uri reads: the resource
// registered under uri when the caller may see it, and otherwise the first
// visible template that matches uri; ResourceNotFound when there is none.
func (x *exchange) lookupResource(ctx context.Context, uri string) (resolvedResource, error) {
	if r := x.snap.resources[uri]; r != nil {
		visible, err := x.visible(ctx, r)
		if err != nil {
			return resolvedResource{}, err
		}
		if visible {
			return resolvedResource{handler: r.handler, mimeType: r.resource.MIMEType, ttl: r.resource.CacheTTL, scope: r.resource.CacheScope, scopes: r.resource.Scopes}, nil
		}
	}
	t, params, err := x.findTemplate(ctx, uri)
	if err != nil {
		return resolvedResource{}, err
	}
	if t == nil {
		return resolvedResource{}, kindResource.notFound(uri)
	}
	return resolvedResource{handler: t.handler, mimeType: t.template.MIMEType, ttl: t.template.CacheTTL, scope: t.template.CacheScope, scopes: t.template.Scopes, template: t.template.URITemplate, params: params}, nil
}

// findTemplate returns the first visible template that uri matches, with
// the matched variables.
func (x *exchange) findTemplate(ctx context.Context, uri string) (*templateEntry, map[string]string, error) {
	for _, t := range x.snap.templates {
		vals := t.tmpl.Match(uri)
		if vals == nil {
			continue
		}
		ok, err := x.visible(ctx, t)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		params := make(map[string]string, len(vals))
		for name, v := range vals {
			params[name] = strings.Join(v.V, ",")
		}
		return t, params, nil
	}
	return nil, nil, nil
}

func handleResourcesRead(ctx context.Context, x *exchange, dst []byte) ([]byte, error) {
	if x.snap.resourcesList == nil {
		return nil, methodNotFound(x.method)
	}
	var rp readParams
	if e := decodeParams(x, &rp); e != nil {
		return nil, e
	}
	uri := rp.uri
	r, err := x.lookupResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	var req *ResourceRequest
	p := primitive{kind: kindResource, name: uri, scopes: r.scopes}
	return callPrimitive(ctx, x, dst, p, nil, &primitiveCall[*ReadResourceResult]{
		prepare: func(info *RequestInfo) (*round, []byte, bool, error) {
			req = &ResourceRequest{requestBase: requestBase{x: x}, Info: info, URI: uri, Template: r.template, Params: r.params}
			return &req.rd, nil, false, nil
		},
		run: func(ctx context.Context) (*ReadResourceResult, error) { return r.handler(ctx, req) },
		encode: func(dst []byte, res *ReadResourceResult) ([]byte, error) {
			return x.appendReadResult(dst, uri, &r, res)
		},
	})
}

// appendReadResult appends the response carrying res, the result of
// reading uri as r.
func (x *exchange) appendReadResult(dst []byte, uri string, r *resolvedResource, res *ReadResourceResult) ([]byte, error) {
	mimeType, ttl, scope := r.mimeType, r.ttl, r.scope
	if res == nil || len(res.Contents) == 0 {
		return nil, ResourceNotFound(uri)
	}
	body := append(make([]byte, 0, 256), `{"contents":[`...)
	for i, c := range res.Contents {
		if c == nil {
			return nil, fmt.Errorf("reading resource %q: contents item %d is nil", uri, i)
		}
		cc := *c
		if cc.URI == "" {
			cc.URI = uri
		}
		if cc.MIMEType == "" {
			cc.MIMEType = mimeType
		}
		b, err := json.Marshal(&cc)
		if err != nil {
			return nil, fmt.Errorf("reading resource %q: encoding contents: %w", uri, err)
		}
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, b...)
	}
	body = append(body, "]}"...)
	var meta []byte
	if len(res.Meta) > 0 {
		var err error
		if meta, err = json.Marshal(res.Meta); err != nil {
			return nil, fmt.Errorf("reading resource %q: encoding _meta: %w", uri, err)
		}
	}
	if res.CacheTTL != 0 {
		ttl = res.CacheTTL
	}
	if res.CacheScope != "" {
		if res.CacheScope != CachePublic && res.CacheScope != CachePrivate {
			return nil, fmt.Errorf("reading resource %q: invalid CacheScope %q", uri, res.CacheScope)
		}
		scope = res.CacheScope
	}
	hint := x.s.appendHint(make([]byte, 0, 48), ttl, scope)
	return x.appendResultHint(dst, resultComplete, hint, body, meta), nil
}
