package bridge

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Key normalizes client capabilities to what a legacy backend can see and
// key its sessions by: sampling (with tools and context), elicitation
// (form and url), roots (with listChanged) and the extensions named in
// exts. Everything else (the tasks extension, unknown members, settings
// inside the capabilities) is stripped. The key is the canonical JSON of
// the normalized capabilities, which are returned too.
func Key(c *mcp.ClientCapabilities, exts []string) (string, mcp.ClientCapabilities) {
	var n mcp.ClientCapabilities
	empty := json.RawMessage("{}")
	if c.Sampling != nil {
		n.Sampling = &mcp.SamplingCapability{}
		if c.Sampling.Tools != nil {
			n.Sampling.Tools = empty
		}
		if c.Sampling.Context != nil {
			n.Sampling.Context = empty
		}
	}
	if c.Elicitation != nil {
		n.Elicitation = &mcp.ElicitationCapability{}
		if c.CanElicit(mcp.ElicitModeForm) {
			n.Elicitation.Form = empty
		}
		if c.CanElicit(mcp.ElicitModeURL) {
			n.Elicitation.URL = empty
		}
	}
	if c.Roots != nil {
		n.Roots = &mcp.RootsCapability{ListChanged: c.Roots.ListChanged}
	}
	for _, e := range exts {
		if v, ok := c.Extensions[e]; ok {
			if n.Extensions == nil {
				n.Extensions = map[string]json.RawMessage{}
			}
			n.Extensions[e] = v
		}
	}
	k, _ := json.Marshal(&n) // struct fields in order, map keys sorted
	return string(k), n
}

// route returns the pool key of a request's backend sessions and the
// capabilities to declare in them: Key's, and with IsolatePrincipal the
// caller's principal ID in front (Go-quoted; a capabilities key starts
// with "{"). A request without a principal gets errNoPrincipal then.
func (b *Bridge) route(info *mcp.RequestInfo) (string, mcp.ClientCapabilities, error) {
	key, caps := Key(&info.ClientCapabilities, b.opts.Extensions)
	key, err := b.scoped(info, key)
	return key, caps, err
}

// scoped puts the caller's principal ID in front of key with
// IsolatePrincipal; else it returns key.
func (b *Bridge) scoped(info *mcp.RequestInfo, key string) (string, error) {
	if b.opts.Isolate != IsolatePrincipal {
		return key, nil
	}
	if info.Principal == nil {
		return "", errNoPrincipal
	}
	return strconv.Quote(info.Principal.ID()) + key, nil
}

// keyScope returns the principal ID a pool key is scoped to, or "".
func keyScope(key string) string {
	q, err := strconv.QuotedPrefix(key)
	if err != nil {
		return ""
	}
	s, _ := strconv.Unquote(q)
	return s
}

// errNoPrincipal refuses a request without an authenticated caller when
// backends are isolated by principal.
var errNoPrincipal = &mcp.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid request: this bridge runs backends per authenticated caller, and the request has none"}

// session is one backend session (a process, for a stdio backend) and who
// uses it: calls share it, or one call leases it exclusively.
type session struct {
	key   string
	scope string // the principal ID of an isolated session, else ""
	c     *client.Client
	done  <-chan struct{}

	// Guarded by pool.mu.
	users     int
	exclusive bool
	lastUsed  time.Time
	dead      bool

	hung atomic.Bool // the watchdog ended the session: it stopped answering

	mu  sync.Mutex
	cur *heldCall // the call of an exclusive lease, whose caller gets the backend's requests
}

// ask routes a backend's input request to the call holding the session.
func (s *session) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	s.mu.Lock()
	h := s.cur
	s.mu.Unlock()
	if h == nil || h.ctx == nil {
		// No call, or one leased for its logs only (a modern backend's
		// input requests come as input_required, never as requests).
		return nil, errNoCaller
	}
	return h.ask(ctx, method, params)
}

// pool holds the backend sessions of a bridge, by key, within one global
// cap.
type pool struct {
	b     *Bridge
	mu    sync.Mutex
	byKey map[string][]*session
	total int           // sessions open or opening
	free  chan struct{} // closed (and replaced) when a session is released
	shut  bool
}

func newPool(b *Bridge) *pool {
	return &pool{b: b, byKey: map[string][]*session{}, free: make(chan struct{})}
}

// errBusy is the answer past the cap or the lease wait.
func errBusy() *mcp.Error {
	return mcp.Unavailable("Server busy: no backend session is free; retry later")
}

// acquire returns a session for key: shared, or leased exclusively. It
// opens one within the cap (evicting the least recently used idle session
// of another key past it), or waits up to LeaseWait for one to be
// released.
func (p *pool) acquire(ctx context.Context, key string, caps mcp.ClientCapabilities, exclusive bool) (*session, error) {
	deadline := time.NewTimer(p.b.opts.LeaseWait)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		if p.shut {
			p.mu.Unlock()
			return nil, mcp.Unavailable("Server shutting down")
		}
		var gone []*session
		for _, s := range p.byKey[key] {
			if !s.dead && s.ended() {
				s.dead = true // its backend exited while idle
			}
			if s.dead && s.users == 0 {
				gone = append(gone, s)
			}
		}
		for _, s := range gone {
			p.remove(s)
		}
		for _, s := range p.byKey[key] {
			if s.dead || s.exclusive || (exclusive && s.users > 0) {
				continue
			}
			s.users++
			s.exclusive = exclusive
			p.mu.Unlock()
			p.closeGone(gone)
			return s, nil
		}
		var evict *session
		if p.total >= p.b.opts.MaxSessions {
			evict = p.lruIdle()
			if evict != nil {
				p.remove(evict)
			}
		}
		if p.total < p.b.opts.MaxSessions {
			p.total++
			p.mu.Unlock()
			p.closeGone(gone)
			if evict != nil {
				evict.c.Close()
			}
			return p.open(ctx, key, caps, exclusive)
		}
		free := p.free
		p.mu.Unlock()
		p.closeGone(gone)
		select {
		case <-free:
		case <-deadline.C:
			return nil, errBusy()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// open starts a session for key; the caller reserved its place in total.
func (p *pool) open(ctx context.Context, key string, caps mcp.ClientCapabilities, exclusive bool) (*session, error) {
	s := &session{key: key, scope: keyScope(key), users: 1, exclusive: exclusive}
	c, err := p.b.connect(ctx, caps, s)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.total--
		p.signal()
		p.b.log.Warn("bridge: opening a backend session failed", "err", err)
		return nil, mcp.Unavailable("Backend unavailable: a backend session could not be opened")
	}
	s.c, s.done = c, c.Done()
	if p.shut {
		p.total--
		go c.Close()
		return nil, mcp.Unavailable("Server shutting down")
	}
	p.byKey[key] = append(p.byKey[key], s)
	go p.b.watch(c, &s.hung, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return s.users > 0
	})
	return s, nil
}

// ended reports whether the session's backend connection ended.
func (s *session) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// closeGone closes sessions acquire took out of the pool (removed from it
// when they were found dead and idle); a removed one is closed once.
func (p *pool) closeGone(gone []*session) {
	for _, s := range gone {
		go s.c.Close()
	}
}

// release gives a session back; a dead one is closed and forgotten.
func (p *pool) release(s *session) {
	p.mu.Lock()
	s.users--
	s.exclusive = false
	s.lastUsed = time.Now()
	dead := s.dead
	if !dead {
		select {
		case <-s.done:
			dead = true
		default:
		}
	}
	if dead && !s.dead {
		s.dead = true
	}
	closeIt := dead && s.users == 0 && p.remove(s)
	p.signal()
	p.mu.Unlock()
	if closeIt {
		s.c.Close()
	}
}

// markDead takes a session whose backend ended out of rotation.
func (p *pool) markDead(s *session) {
	p.mu.Lock()
	s.dead = true
	p.mu.Unlock()
}

// lruIdle returns the idle session used least recently, or nil. Callers
// hold p.mu.
func (p *pool) lruIdle() *session {
	var best *session
	for _, ss := range p.byKey {
		for _, s := range ss {
			if s.users == 0 && (best == nil || s.lastUsed.Before(best.lastUsed)) {
				best = s
			}
		}
	}
	return best
}

// remove forgets s and reports whether it was there. Callers hold p.mu.
func (p *pool) remove(s *session) bool {
	ss := p.byKey[s.key]
	i := slices.Index(ss, s)
	if i < 0 {
		return false
	}
	ss = slices.Delete(ss, i, i+1)
	if len(ss) == 0 {
		delete(p.byKey, s.key)
	} else {
		p.byKey[s.key] = ss
	}
	p.total--
	return true
}

// signal wakes the callers waiting for a session. Callers hold p.mu.
func (p *pool) signal() {
	close(p.free)
	p.free = make(chan struct{})
}

// closeAll ends every session.
func (p *pool) closeAll() {
	p.mu.Lock()
	p.shut = true
	var all []*session
	for _, ss := range p.byKey {
		all = append(all, ss...)
	}
	p.byKey = map[string][]*session{}
	p.total = 0
	p.signal()
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() { defer wg.Done(); s.c.Close() }()
	}
	wg.Wait()
}
