package client

import (
	"container/list"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Cache holds the cacheable results of the specification's caching model
// (server/discover, the lists and resources/read) for as long as their
// ttlMs says, at most a bounded number of them (the least recently used
// goes first). A result with cacheScope "private" is only served to a
// client with the same Options.CacheCredential (and never shared when that
// is empty); a "public" one to any client of the same server. The matching
// notification (a list_changed, a resources/updated) invalidates results
// at once. One Cache may be shared by many clients; it is safe for
// concurrent use.
type Cache struct {
	mu      sync.Mutex
	max     int
	entries map[string]*list.Element
	lru     *list.List // front: most recently used
}

type cacheEntry struct {
	key     string
	server  string
	method  string
	uri     string
	res     json.RawMessage
	expires time.Time
}

// DefaultCacheEntries bounds a client's own cache.
const DefaultCacheEntries = 1000

// NewCache returns a cache of at most maxEntries results
// (DefaultCacheEntries when maxEntries <= 0).
func NewCache(maxEntries int) *Cache {
	if maxEntries <= 0 {
		maxEntries = DefaultCacheEntries
	}
	return &Cache{max: maxEntries, entries: map[string]*list.Element{}, lru: list.New()}
}

// Len returns the number of results held (expired ones included until
// they are looked up or evicted).
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

func (c *Cache) get(key string, now time.Time) (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expires) {
		c.lru.Remove(el)
		delete(c.entries, key)
		return nil, false
	}
	c.lru.MoveToFront(el)
	return e.res, true
}

func (c *Cache) put(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[e.key]; ok {
		el.Value = e
		c.lru.MoveToFront(el)
		return
	}
	c.entries[e.key] = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.entries, last.Value.(*cacheEntry).key)
	}
}

// drop removes the results of server that match.
func (c *Cache) drop(server string, match func(*cacheEntry) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		e := el.Value.(*cacheEntry)
		if e.server == server && match(e) {
			c.lru.Remove(el)
			delete(c.entries, e.key)
		}
		el = next
	}
}

// cacheable reports whether method's results are cacheable.
func cacheable(method string) bool {
	switch method {
	case "server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read":
		return true
	}
	return false
}

// clientCache is one client's view of a Cache.
type clientCache struct {
	c       *Cache
	server  string // the server's identity: its URL, or this client alone
	private string // the partition of private results
}

func (cc *clientCache) keys(method string, params map[string]any) (public, private string) {
	p, _ := json.Marshal(params) // map keys are sorted: a canonical form
	base := method + "\x00" + string(p)
	return cc.server + "\x00public\x00" + base, cc.server + "\x00private\x00" + cc.private + "\x00" + base
}

func (cc *clientCache) lookup(method string, params map[string]any) (json.RawMessage, bool) {
	pub, priv := cc.keys(method, params)
	now := time.Now()
	if res, ok := cc.c.get(priv, now); ok {
		return res, true
	}
	return cc.c.get(pub, now)
}

// store caches res if its hints allow it.
func (cc *clientCache) store(method string, params map[string]any, res json.RawMessage) {
	var h struct {
		ResultType string `json:"resultType"`
		TTLMs      *int64 `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
	}
	if json.Unmarshal(res, &h) != nil || h.TTLMs == nil || *h.TTLMs <= 0 || (h.ResultType != "" && h.ResultType != "complete") {
		return
	}
	ttl := time.Duration(min(*h.TTLMs, int64(365*24*time.Hour/time.Millisecond))) * time.Millisecond
	pub, priv := cc.keys(method, params)
	key := priv // an unknown or absent scope is treated as private
	if h.CacheScope == "public" {
		key = pub
	}
	e := &cacheEntry{key: key, server: cc.server, method: method, res: res, expires: time.Now().Add(ttl)}
	if method == "resources/read" {
		e.uri, _ = params["uri"].(string)
	}
	cc.c.put(e)
}

// invalidate drops what a notification says has changed.
func (cc *clientCache) invalidate(m *jsonrpc.Message) {
	var match func(*cacheEntry) bool
	switch m.Method {
	case "notifications/tools/list_changed":
		match = func(e *cacheEntry) bool { return e.method == "tools/list" }
	case "notifications/prompts/list_changed":
		match = func(e *cacheEntry) bool { return e.method == "prompts/list" }
	case "notifications/resources/list_changed":
		match = func(e *cacheEntry) bool {
			return e.method == "resources/list" || e.method == "resources/templates/list"
		}
	case "notifications/resources/updated":
		var w struct {
			URI string `json:"uri"`
		}
		json.Unmarshal(m.Params, &w)
		match = func(e *cacheEntry) bool { return e.method == "resources/read" && e.uri == w.URI }
	default:
		return
	}
	cc.c.drop(cc.server, match)
}

var clientSeq struct {
	sync.Mutex
	n int64
}

// newClientCache returns the client's view of cache for a server named
// server ("" for a server no other client can name).
func newClientCache(cache *Cache, server, credential string) *clientCache {
	clientSeq.Lock()
	clientSeq.n++
	self := "client-" + strconv.FormatInt(clientSeq.n, 10)
	clientSeq.Unlock()
	if server == "" {
		server = self
	}
	private := "cred:" + credential
	if credential == "" {
		private = self
	}
	return &clientCache{c: cache, server: strings.TrimRight(server, "/"), private: private}
}
