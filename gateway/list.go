package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/clip"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
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
// It is about one backend's page or less, so that a page costs about one
// backend call (a backend that lists 32 tools or more gets a page of its
// own), while backends of a few tools each still share a page.
const MinPageItems = 32

// maxFanout bounds the backends one page asks at once.
const maxFanout = 4

// fetched is a backend's answer to one list request.
type fetched struct {
	res *mcp.ProvidedResult
	err error
}

// list serves one page of a merged list, from the sealed cursor's
// position: backends' pages joined until the page holds MinPageItems or a
// backend has more pages (the cursor then points into it). A backend that
// is down or fails is left out (a failure logged). The page is private if
// any part is, with the smallest TTL of its parts. The backends a page is
// expected to need (by the sizes of their last lists) are asked at once,
// at most maxFanout of them, and joined in config order; a backend asked
// for a page that then ended before it is not part of the page.
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
	method := req.Method
	body := append(append(append(make([]byte, 0, 4096), `{"`...), member...), `":[`...)
	n := 0 // items in body
	var hint *mcp.CacheHint
	var next *cursor
	var asked []int
	var got []fetched
	for i := pos.Backend; i < len(g.backends) && next == nil && n < MinPageItems; {
		// Which backends to ask at once: from i on, those that can
		// answer, until their last lists add up to the page.
		asked = asked[:0]
		end, expect := i, n
		for j := i; j < len(g.backends) && len(asked) < maxFanout; j++ {
			end = j + 1
			b := g.backends[j]
			if (b.scoped() && !hasScopes(caller, b.scopes)) || !b.has(method) || b.down(ctx) != nil {
				continue // hidden from this caller, or down: its items leave the list meanwhile
			}
			asked = append(asked, j)
			last := int(b.listed[k].Load()) - 1
			if last < 0 || (j == pos.Backend && pos.Cursor != "") {
				break // unknown: it may fill the page
			}
			if expect += last; expect >= MinPageItems {
				break
			}
		}
		got = g.fetch(ctx, req, asked, pos, got[:0])
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		a := 0
		for j := i; j < end; j++ {
			b := g.backends[j]
			if b.scoped() {
				// What the list holds depends on the caller's scopes.
				hint = mergeHint(hint, &mcp.CacheHint{Scope: mcp.CachePrivate})
			}
			if a == len(asked) || asked[a] != j {
				continue
			}
			f := got[a]
			a++
			if f.err != nil {
				if ctx.Err() != nil {
					return nil, f.err
				}
				g.log.Warn("gateway: a backend's list is left out", "backend", b.name, "method", method, "err", clip.String(f.err.Error(), 1024))
				continue
			}
			var nc string
			var added int
			body, added, nc, err = g.renamePage(b, member, k, f.res.Body, caller, body, n > 0)
			if err != nil {
				g.log.Warn("gateway: a backend's list is left out", "backend", b.name, "method", method, "err", clip.String(err.Error(), 1024))
				continue
			}
			n += added
			hint = mergeHint(hint, f.res.Cache)
			if j != pos.Backend || pos.Cursor == "" {
				seen := added
				if nc != "" {
					seen = MinPageItems
				}
				b.listed[k].Store(int32(min(seen, MinPageItems)) + 1)
			}
			if nc != "" {
				next = &cursor{Backend: j, Cursor: nc}
			} else if n >= MinPageItems && g.more(j+1, method) {
				next = &cursor{Backend: j + 1}
			}
			if next != nil || n >= MinPageItems {
				break
			}
		}
		i = end
	}
	body = append(body, ']')
	if next != nil {
		data, _ := json.Marshal(next)
		s, err := req.SealCursor(data)
		if err != nil {
			return nil, err
		}
		enc, _ := json.Marshal(s)
		body = append(append(body, `,"nextCursor":`...), enc...)
	}
	body = append(body, '}')
	if hint == nil {
		hint = &mcp.CacheHint{}
	}
	g.capTTL(hint)
	return &mcp.ProvidedResult{Body: body, Cache: hint}, nil
}

// fetch asks the backends at indexes asked for their list pages (the one
// at pos for pos's cursor), at once when there are several, and appends
// their answers to dst in the same order. The first request goes out as
// req; the others as requests of their own with req's Info and Method.
func (g *router) fetch(ctx context.Context, req *mcp.MethodRequest, asked []int, pos cursor, dst []fetched) []fetched {
	start := len(dst)
	for range asked {
		dst = append(dst, fetched{})
	}
	one := func(x int) {
		j := asked[x]
		r := req
		if x > 0 {
			r = &mcp.MethodRequest{Info: req.Info, Method: req.Method}
		}
		bp := map[string]json.RawMessage{}
		if j == pos.Backend && pos.Cursor != "" {
			bp["cursor"], _ = json.Marshal(pos.Cursor)
		}
		res, err := g.forward(ctx, g.backends[j], r, bp)
		if err == nil && res == nil {
			res = &mcp.ProvidedResult{} // no body: left out as not a list
		}
		dst[start+x] = fetched{res: res, err: err}
	}
	if len(asked) == 1 {
		one(0)
		return dst
	}
	var wg sync.WaitGroup
	for x := range asked {
		wg.Go(func() { one(x) })
	}
	wg.Wait()
	return dst
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

// capTTL lowers hint's TTL to Options.MaxListTTL when it is longer (a TTL
// of 0 stands for the front's Server.Cache.TTL, one hour by default).
func (g *router) capTTL(hint *mcp.CacheHint) {
	limit := g.maxTTL
	if limit <= 0 || hint.TTL == mcp.Off {
		return
	}
	ttl := hint.TTL
	if ttl == 0 {
		ttl = g.cacheTTL
		if ttl == 0 {
			ttl = time.Hour
		}
	}
	if ttl == mcp.Off {
		return
	}
	if ttl > limit {
		hint.TTL = limit
	}
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
	out, _, err := g.appendRenamed(b, member, k, raw, nil, false, nil, false, false)
	if err != nil {
		return nil, err
	}
	return splitArray(append(append([]byte{'['}, out...), ']')), nil
}

// splitArray returns the elements of a valid JSON array.
func splitArray(arr []byte) []json.RawMessage {
	var out []json.RawMessage
	for it := newArrayIter(arr); ; {
		v, ok := it.next()
		if !ok {
			return out
		}
		out = append(out, json.RawMessage(v))
	}
}

// arrayIter walks the elements of a JSON array known to be valid.
type arrayIter struct {
	b []byte
	i int
}

// newArrayIter returns an iterator over the array arr, which must be
// valid JSON and an array (jsonscan.Kind(arr) == '[').
func newArrayIter(arr []byte) arrayIter {
	return arrayIter{b: arr, i: jsonscan.SkipSpace(arr, 0) + 1}
}

// next returns the next element's span, or false at the end.
func (it *arrayIter) next() ([]byte, bool) {
	i := jsonscan.SkipSpace(it.b, it.i)
	if i < len(it.b) && it.b[i] == ',' {
		i = jsonscan.SkipSpace(it.b, i+1)
	}
	if i >= len(it.b) || it.b[i] == ']' {
		it.i = len(it.b)
		return nil, false
	}
	end := jsonscan.SkipValue(it.b, i)
	it.i = end
	return it.b[i:end], true
}

// renamePage appends the items of a backend's list page (its result body)
// to dst as rename does, for a caller (see appendRenamed), each after a
// comma when comma is set or an item came before it, and returns how many
// it appended and the page's nextCursor. A page that is not a valid JSON
// object, or whose items are not an array, is an error. The page is
// validated once (jsonscan, with its UTF-8) and its items are not decoded;
// a page that jsonscan refuses (nesting deeper than jsonscan.MaxDepth,
// invalid UTF-8) takes encoding/json's path instead, as before.
func (g *router) renamePage(b *backend, member string, k kind, page []byte, caller *mcp.Principal, dst []byte, comma bool) ([]byte, int, string, error) {
	var items, nc []byte
	walk := jsonscan.CheckObject(page)
	var m jsonscan.Member
	for walk.Next(&m) {
		switch {
		case m.KeyIs(member):
			items = m.Value
		case m.KeyIs("nextCursor"):
			nc = m.Value
		}
	}
	if !walk.Valid() || !utf8.Valid(page) {
		var p map[string]json.RawMessage
		if err := json.Unmarshal(page, &p); err != nil {
			return dst, 0, "", err
		}
		items, nc = p[member], p["nextCursor"]
		if len(items) > 0 && !utf8.Valid(items) {
			// encoding/json's own reading: invalid UTF-8 becomes U+FFFD.
			return g.appendDecoded(b, member, k, items, caller, true, dst, comma, nc)
		}
	}
	dst, added, err := g.appendRenamed(b, member, k, items, caller, true, dst, comma, true)
	if err != nil {
		return dst, 0, "", err
	}
	next, _ := jsonscan.String(nc)
	return dst, added, next, nil
}

// appendDecoded is renamePage's tail for items that only encoding/json
// reads: each decoded and encoded again.
func (g *router) appendDecoded(b *backend, member string, k kind, items []byte, caller *mcp.Principal, scoped bool, dst []byte, comma bool, nc []byte) ([]byte, int, string, error) {
	var list []map[string]json.RawMessage
	if len(items) > 0 && string(items) != "null" {
		if err := json.Unmarshal(items, &list); err != nil {
			return dst, 0, "", fmt.Errorf("%s: %w", member, err)
		}
	}
	mark, n := len(dst), 0
	for _, it := range list {
		enc, ok := g.keepDecoded(b, member, k, it, caller, scoped)
		if !ok {
			continue
		}
		if enc == nil {
			return dst[:mark], 0, "", fmt.Errorf("%s: an item does not encode", member)
		}
		if comma || n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, enc...)
		n++
	}
	var next string
	json.Unmarshal(nc, &next)
	return dst, n, next, nil
}

// maxSpliceKeys is the most members an item may have for appendRenamed
// to check its keys for repeats in place; an item with more is decoded.
const maxSpliceKeys = 32

// appendRenamed appends a backend's list items (raw, a JSON array, or
// null, or empty) to dst as the gateway lists them (see rename), each
// after a comma when comma is set or an item came before it, and returns
// how many it appended. When scoped, the tools whose ToolScopes caller
// lacks are left out too. When valid is false, raw is checked first (JSON,
// UTF-8); raw that fails is decoded with encoding/json, as are raw that is
// not an array of objects and null.
//
// An item is not decoded: its name member is rewritten in place, the rest
// of its bytes kept as they are. An item whose keys repeat or are escaped
// (which might spell "name" another way), or with more than maxSpliceKeys
// members, is decoded into a map and encoded again instead (the last of
// repeated keys wins, as in encoding/json), so that a client reading the
// first of repeated keys sees the name the gateway checked, never
// another. What a client decodes is the same either way
// (FuzzRenameSplice); only the bytes may differ (member order, escapes).
func (g *router) appendRenamed(b *backend, member string, k kind, raw []byte, caller *mcp.Principal, scoped bool, dst []byte, comma, valid bool) ([]byte, int, error) {
	switch {
	case len(raw) == 0:
		return dst, 0, nil
	case !valid && (!jsonscan.Valid(raw) || !utf8.Valid(raw)):
		dst, n, _, err := g.appendDecoded(b, member, k, raw, caller, scoped, dst, comma, nil)
		return dst, n, err
	}
	switch jsonscan.Kind(raw) {
	case 'n':
		return dst, 0, nil
	case '[':
	default:
		return dst, 0, fmt.Errorf("%s: not an array", member)
	}
	// Every item must be an object (or null), as encoding/json's []map
	// reads it, before any is kept or logged.
	for it := newArrayIter(raw); ; {
		v, ok := it.next()
		if !ok {
			break
		}
		if c := jsonscan.Kind(v); c != '{' && c != 'n' {
			return dst, 0, fmt.Errorf("%s: an item is not an object", member)
		}
	}
	field := "name"
	switch k {
	case kindResource:
		field = "uri"
	case kindTemplate:
		field = "uriTemplate"
	}
	n := 0
	var keys [maxSpliceKeys][]byte
	for it := newArrayIter(raw); ; {
		item, ok := it.next()
		if !ok {
			break
		}
		var value []byte
		found, decode := false, false
		if jsonscan.Kind(item) == 'n' {
			item = nil // encoding/json: a nil map, an item without members
		} else {
			obj, _ := jsonscan.Object(item)
			var m jsonscan.Member
			nk := 0
			for obj.Next(&m) {
				if m.Escaped || nk == len(keys) {
					decode = true
					break
				}
				for _, key := range keys[:nk] {
					if string(key) == string(m.Key) {
						decode = true
					}
				}
				keys[nk] = m.Key
				nk++
				if string(m.Key) == field {
					value, found = m.Value, true
				}
			}
		}
		if decode {
			var it map[string]json.RawMessage
			json.Unmarshal(item, &it) // valid JSON, an object
			enc, ok := g.keepDecoded(b, member, k, it, caller, scoped)
			if !ok {
				continue
			}
			if enc == nil {
				return dst, 0, fmt.Errorf("%s: an item does not encode", member)
			}
			if comma || n > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, enc...)
			n++
			continue
		}
		var s string
		if found {
			s, found = jsonscan.String(value)
		}
		if comma || n > 0 {
			dst = append(dst, ',')
		}
		switch k {
		case kindTool, kindPrompt:
			full, keep := g.keepName(b, member, k, s, found, caller, scoped)
			if !keep {
				if comma || n > 0 {
					dst = dst[:len(dst)-1]
				}
				continue
			}
			// full has only name characters: quoting is escaping enough.
			off := cap(item) - cap(value) // value is a slice of item
			dst = append(dst, item[:off]...)
			dst = append(append(append(dst, '"'), full...), '"')
			dst = append(dst, item[off+len(value):]...)
		default:
			if !g.keepRoute(b, k, s, found) {
				if comma || n > 0 {
					dst = dst[:len(dst)-1]
				}
				continue
			}
			dst = append(dst, item...)
		}
		n++
	}
	return dst, n, nil
}

// keepDecoded is appendRenamed for one decoded item: the item encoded
// again as the gateway lists it and true, or false when it is left out;
// nil and true when it does not encode.
func (g *router) keepDecoded(b *backend, member string, k kind, it map[string]json.RawMessage, caller *mcp.Principal, scoped bool) ([]byte, bool) {
	switch k {
	case kindTool, kindPrompt:
		var name string
		found := json.Unmarshal(it["name"], &name) == nil
		full, keep := g.keepName(b, member, k, name, found, caller, scoped)
		if !keep {
			return nil, false
		}
		it["name"], _ = json.Marshal(full)
	default:
		var s string
		field := "uri"
		if k == kindTemplate {
			field = "uriTemplate"
		}
		if !g.keepRoute(b, k, s, json.Unmarshal(it[field], &s) == nil) {
			return nil, false
		}
	}
	enc, err := json.Marshal(it)
	if err != nil {
		return nil, true
	}
	return enc, true
}

// keepName decides whether a tool or prompt named name (found: the item
// has a string name) is listed, and under which name; it logs why one is
// left out, unless policy left it out.
func (g *router) keepName(b *backend, member string, k kind, name string, found bool, caller *mcp.Principal, scoped bool) (string, bool) {
	if !found || name == "" {
		g.log.Warn("gateway: an item without a name is left out", "backend", b.name, "list", member)
		return "", false
	}
	if k == kindTool && !b.toolAllowed(name) {
		return "", false // the policy: not logged, it is no fault
	}
	if k == kindTool && scoped && len(b.toolScope[name]) > 0 && !hasScopes(caller, b.toolScope[name]) {
		return "", false // the caller lacks the tool's own scopes
	}
	full, err := g.publicName(b, name)
	if err != nil {
		g.log.Warn("gateway: an item is left out", "backend", b.name, "list", member, "name", clip.String(name, 256), "reason", clip.String(err.Error(), 1024))
		return "", false
	}
	return full, true
}

// keepRoute decides whether a resource or template (s: its uri or
// uriTemplate, found: a string) is listed, and records it for routing.
func (g *router) keepRoute(b *backend, k kind, s string, found bool) bool {
	if !found || s == "" {
		return false
	}
	if k == kindResource {
		g.res.saw(g, b, s)
	} else {
		g.res.sawTemplate(b, s)
	}
	return true
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
