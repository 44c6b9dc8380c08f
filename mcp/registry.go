package mcp

import (
	"encoding/json"
	"maps"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// registry is the mutable set of registered features. It is guarded by
// Server.mu and turned into an immutable snapshot for serving.
type registry struct {
	tools     map[string]*toolEntry
	resources map[string]*resourceEntry // by URI
	templates map[string]*templateEntry // by URI template
	prompts   map[string]*promptEntry
	custom    map[string]*customMethod // AddMethod; nil when none
	skills    *skillsServe             // AddSkills (skills.go); nil without skills
}

func (r *registry) init() {
	r.tools = make(map[string]*toolEntry)
	r.resources = make(map[string]*resourceEntry)
	r.templates = make(map[string]*templateEntry)
	r.prompts = make(map[string]*promptEntry)
}

// snapshot is an immutable view of the registry with everything that can be
// encoded ahead of time already encoded. Requests load it with one atomic
// read; registrations swap in a new one.
type snapshot struct {
	// discover is the complete server/discover result object.
	discover []byte
	caps     ServerCapabilities

	tools     map[string]*toolEntry
	toolsList *listing

	resources     map[string]*resourceEntry
	resourcesList *listing
	templates     []*templateEntry // sorted by URI template: the match order
	templatesList *listing
	prompts       map[string]*promptEntry
	promptsList   *listing
	skills        *skillsServe // nil without skills

	// custom are the custom methods (AddMethod); nil when none.
	custom map[string]*customMethod
	// advertised is set when Server.Advertise set the capabilities.
	advertised bool
	// instructions are what server/discover and initialize send.
	instructions string
	// provider serves ProvidedMethods when ServerOptions.Provider is set
	// (provider.go); nil otherwise.
	provider methodHandler

	// listenKinds has bit 1<<ChangeKind set for every kind of change a
	// subscriptions/listen stream can ask for; 0 when listen is off.
	listenKinds uint8
}

func (r *registry) build(s *Server) *snapshot {
	sn := &snapshot{}
	if len(r.tools) > 0 {
		sn.caps.Tools = &ListCapability{}
		sn.tools = make(map[string]*toolEntry, len(r.tools))
		items := make([]listItem, 0, len(r.tools))
		for name, t := range r.tools {
			sn.tools[name] = t
			items = append(items, listItem{key: name, json: t.encoded, scopes: t.tool.Scopes, v: t})
		}
		sn.toolsList = newListing(s, "tools", items)
	}
	r.buildResources(s, sn)
	r.buildPrompts(s, sn)
	buildUtilities(sn)
	sn.setListenCaps(s.listen.enabled())
	tasks := false
	for _, t := range r.tools {
		tasks = tasks || t.tool.TaskSupport != TaskNone
	}
	if _, ok := s.opts.Provider.(TaskProvider); ok {
		tasks = true
	}
	if len(r.custom) > 0 {
		sn.custom = maps.Clone(r.custom)
		sn.caps.Extensions = r.customExtensions(nil)
	}
	if len(s.opts.Extensions) > 0 || tasks {
		if sn.caps.Extensions == nil {
			sn.caps.Extensions = make(map[string]json.RawMessage, len(s.opts.Extensions)+1)
		}
		if tasks {
			// The extension has no settings yet: an empty object.
			sn.caps.Extensions[TasksExtension] = json.RawMessage("{}")
		}
		for k, v := range s.opts.Extensions {
			if v == nil {
				sn.caps.Extensions[k] = json.RawMessage("{}")
			} else {
				sn.caps.Extensions[k] = mustMarshal(v)
			}
		}
	}

	sn.advertise(s.advert, s.listen.enabled())
	instructions := s.opts.Instructions
	if s.opts.Provider != nil {
		sn.provider = serveProvided
	}
	if s.advert != nil && s.advert.Instructions != "" {
		instructions = s.advert.Instructions
	}
	sn.instructions = instructions
	body := []byte(`{"supportedVersions":`)
	body = append(body, mustMarshal(s.versions)...)
	body = append(body, `,"capabilities":`...)
	body = append(body, mustMarshal(sn.caps)...)
	if instructions != "" {
		body = append(body, `,"instructions":`...)
		body = wire.AppendString(body, instructions)
	}
	body = append(body, '}')
	sn.discover = s.appendResultObject(nil, modernWire{}, resultComplete, true, body, nil)
	return sn
}

// setListenCaps advertises listChanged (and resources.subscribe) on every
// feature family the snapshot has, and records which changes listen
// streams can ask for, when subscriptions/listen is enabled. It runs after
// the families' capabilities are set.
func (sn *snapshot) setListenCaps(enabled bool) {
	if !enabled {
		return
	}
	c := &sn.caps
	if c.Tools != nil {
		c.Tools.ListChanged = true
		sn.listenKinds |= 1 << ToolsListChanged
	}
	if c.Prompts != nil {
		c.Prompts.ListChanged = true
		sn.listenKinds |= 1 << PromptsListChanged
	}
	if c.Resources != nil {
		c.Resources.ListChanged = true
		c.Resources.Subscribe = true
		sn.listenKinds |= 1<<ResourcesListChanged | 1<<ResourceUpdated
	}
}

// listItem is one entry of a list result: its sort key, its encoding, and
// the scopes a caller needs to see it (see exchange.servePage).
type listItem struct {
	key    string
	json   []byte
	scopes []string // scopes a caller needs to see the item (see exchange.visible)
	v      any      // the registry entry, for per-request list filters
}

// listing is a sorted, paginated list result (tools/list and friends). Pages
// are encoded on first use and kept for the life of the snapshot.
type listing struct {
	s     *Server
	field string
	items []listItem
	pages []atomic.Pointer[[]byte]
	// scoped is set when an item needs scopes: the list is then filtered
	// per caller (see exchange.servePage).
	scoped bool
}

func newListing(s *Server, field string, items []listItem) *listing {
	sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
	n := (len(items) + s.pageSize - 1) / s.pageSize
	if n == 0 {
		n = 1
	}
	l := &listing{s: s, field: field, items: items, pages: make([]atomic.Pointer[[]byte], n)}
	for _, it := range items {
		l.scoped = l.scoped || len(it.scopes) > 0
	}
	return l
}

// start returns the index of the first item of the page the cursor names.
// The cursor is opaque to clients: it encodes the key of the first item of
// the page, so a cursor stays meaningful across registry changes.
func (l *listing) start(cursor string) (int, *Error) {
	if cursor == "" {
		return 0, nil
	}
	key, ok := decodeCursor(cursor)
	if !ok {
		return 0, InvalidParams("Invalid params: invalid cursor")
	}
	return sort.Search(len(l.items), func(i int) bool { return l.items[i].key >= key }), nil
}

// page returns the complete result object of the page the cursor names.
// The cursor is opaque to clients: it encodes the key of the first item of
// the page, so a cursor stays meaningful across registry changes.
func (l *listing) page(cursor string) ([]byte, *Error) {
	start, err := l.start(cursor)
	if err != nil {
		return nil, err
	}
	ps := l.s.pageSize
	if start%ps == 0 && start/ps < len(l.pages) {
		p := &l.pages[start/ps]
		if b := p.Load(); b != nil {
			return *b, nil
		}
		b := l.encode(start)
		p.Store(&b)
		return b, nil
	}
	return l.encode(start), nil
}

func (l *listing) encode(start int) []byte {
	end := min(start+l.s.pageSize, len(l.items))
	body := make([]byte, 0, 64+(end-start)*128)
	body = append(body, '{', '"')
	body = append(body, l.field...)
	body = append(body, `":[`...)
	for i := start; i < end; i++ {
		if i > start {
			body = append(body, ',')
		}
		body = append(body, l.items[i].json...)
	}
	body = append(body, ']')
	if end < len(l.items) {
		body = append(body, `,"nextCursor":`...)
		body = wire.AppendString(body, encodeCursor(l.items[end].key))
	}
	body = append(body, '}')
	return l.s.appendResultObject(nil, modernWire{}, resultComplete, true, body, nil)
}

const cursorPrefix = "c1:"

func encodeCursor(key string) string {
	return cursorPrefix + b64.EncodeToString([]byte(key))
}

func decodeCursor(c string) (string, bool) {
	rest, ok := strings.CutPrefix(c, cursorPrefix)
	if !ok {
		return "", false
	}
	b, err := b64.DecodeString(rest)
	if err != nil {
		return "", false
	}
	return string(b), true
}
