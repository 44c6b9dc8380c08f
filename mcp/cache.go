package mcp

import (
	"context"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// ListFilters decide, per request, which registered items a caller sees,
// for example by the caller's identity (from ctx or info.Header). Each
// function reports whether the item is visible; a nil function shows every
// item of its family. The functions are called concurrently, once per item
// considered, and must not modify the item.
//
// A family with a filter has its list results computed per request, not
// served from the pages encoded once per registry snapshot, and marked
// cacheScope "private". An item its filter hides is also hidden from
// tools/call, prompts/get, resources/read and completion/complete, which
// answer as they would for an item that does not exist.
type ListFilters struct {
	Tools             func(ctx context.Context, info *RequestInfo, t *Tool) bool
	Prompts           func(ctx context.Context, info *RequestInfo, p *Prompt) bool
	Resources         func(ctx context.Context, info *RequestInfo, r *Resource) bool
	ResourceTemplates func(ctx context.Context, info *RequestInfo, t *ResourceTemplate) bool
}

// visible reports whether the registry entry v (a *toolEntry,
// *promptEntry, *resourceEntry or *templateEntry) passes its family's
// filter for this request.
func (x *exchange) visible(ctx context.Context, v any) (bool, error) {
	f := &x.s.opts.ListFilters
	var keep func(*RequestInfo) bool
	switch e := v.(type) {
	case *toolEntry:
		if f.Tools != nil {
			keep = func(i *RequestInfo) bool { return f.Tools(ctx, i, &e.tool) }
		}
	case *promptEntry:
		if f.Prompts != nil {
			keep = func(i *RequestInfo) bool { return f.Prompts(ctx, i, &e.prompt) }
		}
	case *resourceEntry:
		if f.Resources != nil {
			keep = func(i *RequestInfo) bool { return f.Resources(ctx, i, &e.resource) }
		}
	case *templateEntry:
		if f.ResourceTemplates != nil {
			keep = func(i *RequestInfo) bool { return f.ResourceTemplates(ctx, i, &e.template) }
		}
	}
	if keep == nil {
		return true, nil
	}
	info, err := x.requestInfo()
	if err != nil {
		return false, err
	}
	return keep(info), nil
}

// hasFilter reports whether the family of the listing l has a filter.
func (s *Server) hasFilter(field string) bool {
	f := &s.opts.ListFilters
	switch field {
	case "tools":
		return f.Tools != nil
	case "prompts":
		return f.Prompts != nil
	case "resources":
		return f.Resources != nil
	case "resourceTemplates":
		return f.ResourceTemplates != nil
	}
	return false
}

// servePage answers a list request from l: the page cached in the snapshot,
// or, when the family has a filter, a page computed for this request.
func (x *exchange) servePage(ctx context.Context, l *listing, dst []byte) ([]byte, error) {
	cursor, err := cursorParam(x.params)
	if err != nil {
		return nil, err
	}
	scoped := l.scoped && x.info.Principal != nil
	if !x.s.hasFilter(l.field) && !scoped {
		page, perr := l.page(cursor)
		if perr != nil {
			return nil, perr
		}
		return x.appendRaw(dst, page), nil
	}
	start, perr := l.start(cursor)
	if perr != nil {
		return nil, perr
	}
	body := append(make([]byte, 0, 512), '{', '"')
	body = append(body, l.field...)
	body = append(body, `":[`...)
	n := 0
	for i := start; i < len(l.items); i++ {
		if scoped && !x.info.Principal.hasScopes(l.items[i].scopes) {
			continue
		}
		ok, err := x.visible(ctx, l.items[i].v)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if n == x.s.pageSize {
			body = append(body, `],"nextCursor":`...)
			body = wire.AppendString(body, encodeCursor(l.items[i].key))
			body = append(body, '}')
			return x.appendResultHint(dst, resultComplete, x.s.appendHint(nil, 0, CachePrivate), body, nil), nil
		}
		if n > 0 {
			body = append(body, ',')
		}
		body = append(body, l.items[i].json...)
		n++
	}
	body = append(body, "]}"...)
	return x.appendResultHint(dst, resultComplete, x.s.appendHint(nil, 0, CachePrivate), body, nil), nil
}

// appendHint appends the cache hint members `"ttlMs":N,"cacheScope":"..."`
// for ttl and scope; zero values take the server's (ServerOptions.Cache,
// resolved by NewServer), and Off (a negative ttl) is sent as 0.
func (s *Server) appendHint(dst []byte, ttl time.Duration, scope CacheScope) []byte {
	if ttl == 0 {
		ttl = s.opts.Cache.TTL
	}
	ttl = max(ttl, 0)
	if scope == "" {
		scope = s.opts.Cache.Scope
	}
	dst = append(dst, `"ttlMs":`...)
	dst = strconv.AppendInt(dst, ttl.Milliseconds(), 10)
	dst = append(dst, `,"cacheScope":`...)
	return wire.AppendString(dst, string(scope))
}

// checkCacheScope panics unless scope is empty or a known CacheScope; what names
// the registration in the message.
func checkCacheScope(what string, scope CacheScope) {
	if scope != "" && scope != CachePublic && scope != CachePrivate {
		panic(what + ": CacheScope must be CachePublic or CachePrivate, not " + strconv.Quote(string(scope)))
	}
}

// appendResultHint is appendResult with explicit cache hint members (nil:
// not cacheable).
func (x *exchange) appendResultHint(dst []byte, resultType string, hint, body, meta []byte) []byte {
	dst = appendResponsePrefix(dst, x.id)
	dst = x.s.appendResultObjectHint(dst, x.era(), resultType, hint, body, meta)
	return append(dst, '}')
}

// orError returns err when it is not nil, and otherwise e.
func orError(err error, e *Error) error {
	if err != nil {
		return err
	}
	return e
}
