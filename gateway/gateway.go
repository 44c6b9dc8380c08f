package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/clip"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/listenhook"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Backend is one server behind a Gateway.
type Backend struct {
	// Name is the server's name (^[a-z0-9-]{1,32}$), the prefix of its
	// tools and prompts.
	Name string
	// NoPrefix serves its tools and prompts under their own names; at
	// most one backend may set it. Its names whose part before the first
	// "_" is another backend's name are left out of lists (they would
	// route there) and logged.
	NoPrefix bool
	// Transport returns the transport of a new backend session, as
	// bridge.Options.Backend does.
	Transport func() client.Transport
	// Fingerprint identifies what Transport connects to (Config.Backends
	// sets it from the command, env, dir, url and headers): Reload keeps
	// a running backend whose name and Fingerprint are unchanged. ""
	// restarts it on every Reload.
	Fingerprint string
	// Timeout, when positive, bounds one tools/call, prompts/get or
	// resources/read round on the backend: past it the backend call is
	// cancelled (the backend gets notifications/cancelled) and the caller
	// gets -32603 naming the backend and the timeout.
	Timeout time.Duration
	// Required makes the gateway not ready (Server().Ready, /readyz 503)
	// while every required backend is down; a gateway without required
	// backends is ready whichever are down.
	Required bool
	// AllowTools, when not empty, are the only tools of the backend (its
	// own names) that the gateway lists and calls; DenyTools are never
	// listed nor called. A call to one that is not let through is
	// "Unknown tool", as for a name no backend has.
	AllowTools, DenyTools []string
	// Scopes are the OAuth scopes a caller's access token must all grant
	// to see and use anything of the backend. A caller without them does
	// not see its tools, prompts, resources and templates in the lists
	// (the lists of a backend with scopes are private), and its
	// tools/call, prompts/get, resources/read and completion/complete get
	// HTTP 403 with the step-up challenge of mcp.InsufficientScope, naming
	// the front's AuthOptions.RequiredScopes and these; the backend is not
	// asked. ToolScopes adds scopes for single tools, by the backend's own
	// names. A request without a principal holds no scope, so New refuses
	// a backend with scopes when Options.Server has no Auth (a stdio or
	// unauthenticated front).
	Scopes     []string
	ToolScopes map[string][]string
	// RateLimit, when set, bounds the calls (tools/call, prompts/get,
	// resources/read, completion/complete; not lists) each caller makes to
	// the backend with a token bucket per caller and per replica: behind
	// a load balancer, N replicas let a caller through up to N times the
	// rate. A caller is the principal (issuer and subject); the requests
	// without a principal share one bucket. Each round of a call that asks
	// for input (input_required, then the retry) counts. A call past it gets HTTP 429
	// with Retry-After (mcp.RateLimited) and the JSON-RPC error -32603
	// "Rate limit exceeded", data {"quota":"rateLimit","backend":NAME,
	// "limit":"10/s","burst":20}; the backend is not asked. Reload keeps
	// the buckets of a backend whose name and RateLimit are unchanged.
	RateLimit *RateLimit
	// Tasks and TaskTools are the backend's task support, as
	// bridge.Options.Tasks and TaskTools are a bridge's (TaskTools by the
	// backend's own tool names): its tools/call may run as tasks of the
	// gateway's front, which serves tasks/get, tasks/update and
	// tasks/cancel (see docs/gateway.md, "Tasks"). They replace
	// Options.Bridge.Tasks and TaskTools, which the gateway ignores. The
	// front serves the tasks extension when a backend given to New has
	// task support; Reload cannot turn it on later (restart the gateway).
	// Reload restarts a backend whose task support changed.
	Tasks     mcp.TaskSupport
	TaskTools map[string]bridge.TaskTool
	// secrets are values a reason the backend is down must not show on
	// /readyz (its header and env values, its URL's password), set by
	// Config.Backends.
	secrets []string
}

// Backends returns the backends of c in its order; stderr, when not nil,
// returns where the stderr of a command backend goes.
func (c *Config) Backends(stderr func(name string) io.Writer) []Backend {
	out := make([]Backend, len(c.Servers))
	for i := range c.Servers {
		s := &c.Servers[i]
		var w io.Writer
		if stderr != nil {
			w = stderr(s.Name)
		}
		out[i] = Backend{Name: s.Name, NoPrefix: s.NoPrefix, Required: s.Required, Timeout: s.Timeout, AllowTools: s.AllowTools, DenyTools: s.DenyTools,
			Scopes: s.Scopes, ToolScopes: s.ToolScopes, RateLimit: s.RateLimit, secrets: s.secrets(),
			Tasks: s.Tasks, TaskTools: s.TaskTools,
			Transport: func() client.Transport { return s.Transport(w) }, Fingerprint: s.fingerprint()}
	}
	return out
}

// BackendAttribute is the key of the call attribute (mcp.Annotate) naming
// the backend a tools/call, prompts/get, resources/read or
// completion/complete was routed to, whether the backend answered or the
// gateway did for it (a scope, a rate limit, a backend that is down): the
// otel interceptor records it on the call's span and metrics, and
// --log-requests logs it. Lists, merged from every backend, have none.
const BackendAttribute = "mcp.backend"

// Options configures a Gateway. The zero value is usable.
type Options struct {
	// Server configures the front server. Its Provider is the gateway.
	// An empty Info.Name is "mcpkit-gateway". Its Instructions, when set,
	// come before the backends' sections. A nil Bus is a LocalBus shared
	// with the backends' bridges, so their list changes and resource
	// updates reach the front's listeners. Its Listen.Observe, when set,
	// runs before the gateway's own, which routes resource subscriptions
	// to the backends.
	Server mcp.ServerOptions
	// Bridge is the template of every backend's bridge.Options; its
	// Backend, Server and Logger are set per backend.
	Bridge bridge.Options
	// Prefer names the backend a resource URI routes to when the
	// templates of several match it; "" means none (such a read is -32602
	// naming them).
	Prefer string
	// Logger gets the gateway's logs. Default: Server.Logger, else
	// slog.Default().
	Logger *slog.Logger
	// HealthInterval is how often the gateway looks at which backends are
	// down: when one goes down or comes back, listeners get list_changed
	// and server/discover is declared again. Default 1s; mcp.Off never.
	HealthInterval time.Duration
	// MaxListTTL, when positive, caps the ttlMs of merged lists:
	// replicas that reload their file on their own (mcpkit gateway
	// --watch sets it to the poll interval) may list differently for one
	// poll interval, and a client should not reuse a list longer than
	// that. 0 leaves the backends' hints (and Server.Cache.TTL) as they
	// are.
	MaxListTTL time.Duration
}

// Gateway is an MCP server made of many: one bridge per backend, and a
// router. Create one with New, serve Server() over any transport, change
// its backends with Reload, and Close it at the end. It is safe for
// concurrent use.
type Gateway struct {
	srv  *mcp.Server
	log  *slog.Logger
	opts Options // with Server.Bus set
	cur  atomic.Pointer[router]

	tasks bool // the front serves the tasks extension (taskGateway)

	mu     sync.Mutex // serializes Reload and Close
	closed bool
	stop   chan struct{} // closed by Close: ends watch and the start retries
	done   chan struct{} // closed when watch returned
	ctx    context.Context
	cancel context.CancelFunc
}

// router is one configuration of a Gateway: its backends and the routing
// state built from them. Reload swaps it whole; a request uses the one it
// loaded first.
type router struct {
	log      *slog.Logger
	backends []*backend
	named    map[string]*backend
	bare     *backend // the backend without a prefix, or nil
	prefer   string
	required []string // the front's AuthOptions.RequiredScopes
	res      resourceIndex
	maxTTL   time.Duration // Options.MaxListTTL
	cacheTTL time.Duration // the front's Server.Cache.TTL
}

// backend is one backend of a Gateway.
type backend struct {
	name      string
	index     int
	noPrefix  bool
	required  bool
	timeout   time.Duration
	allow     map[string]bool // nil: every tool
	deny      map[string]bool
	scopes    []string                      // Backend.Scopes
	toolScope map[string][]string           // Backend.ToolScopes
	limits    *limiter                      // nil: no rate limit
	tasks     mcp.TaskSupport               // Backend.Tasks
	taskTools map[string]bridge.TaskTool    // Backend.TaskTools
	secrets   []string                      // Backend.secrets
	print     string                        // Backend.Fingerprint
	brp       atomic.Pointer[bridge.Bridge] // nil until it started
	why       atomic.Pointer[string]        // why it has not started yet

	// listed is, per kind of list, one more than the items the backend's
	// first page held when last listed (0: not listed yet), or
	// MinPageItems+1 when it had more pages: what list expects of the
	// backend when it decides which backends to ask at once.
	listed [4]atomic.Int32

	// ctx ends when the backend is removed (or restarted) by a Reload, or
	// the gateway closes: the calls in flight on it end then.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	retired bool           // replaced by a Reload, or the gateway closed
	inner   *client.Client // a client of the bridge's server, for the resource index
}

// bridge returns the backend's bridge, or nil while it has not started.
func (b *backend) bridge() *bridge.Bridge { return b.brp.Load() }

// retire marks the backend replaced and returns its bridge, if any: a
// start still being retried then closes what it starts.
func (b *backend) retire() *bridge.Bridge {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.retired = true
	return b.bridge()
}

// New starts a gateway: one bridge per backend (see bridge.New), then the
// front server, which declares the union of the backends' capabilities.
// It returns an error naming the backend when one does not start. ctx
// bounds the start only.
func New(ctx context.Context, backends []Backend, opts *Options) (*Gateway, error) {
	g := &Gateway{}
	if opts != nil {
		g.opts = *opts
	}
	g.log = g.opts.Logger
	if g.log == nil {
		g.log = g.opts.Server.Logger
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	if g.opts.Server.Bus == nil {
		g.opts.Server.Bus = new(mcp.LocalBus)
	}
	g.stop, g.done = make(chan struct{}), make(chan struct{})
	if g.opts.Server.Auth == nil {
		for _, b := range backends {
			if len(b.Scopes) > 0 || len(b.ToolScopes) > 0 {
				return nil, fmt.Errorf("gateway: backend %q has scopes, but the front server has no Auth: no request would carry a principal with scopes (a stdio front has none); serve the gateway over HTTP with AuthOptions, or drop the scopes", b.Name)
			}
		}
	}
	for _, b := range backends {
		g.tasks = g.tasks || b.hasTasks()
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	r, _, err := g.build(ctx, backends, g.opts.Prefer, nil)
	if err != nil {
		g.cancel()
		return nil, err
	}
	g.cur.Store(r)
	so := g.opts.Server
	if so.Info.Name == "" {
		so.Info = mcp.Implementation{Name: "mcpkit-gateway", Version: "0.1.0"}
	}
	so.Provider = g
	if g.tasks {
		so.Provider = taskGateway{g}
	}
	so.Listen.Observe = listenhook.Chain(so.Listen.Observe, g.observe)
	so.ReadyChecks = append(append([]mcp.ReadyChecker(nil), so.ReadyChecks...), readiness{g})
	g.srv = mcp.NewServer(&so)
	g.srv.Advertise(r.advertisement(g.opts.Server.Instructions))
	switch iv := g.opts.HealthInterval; {
	case iv == mcp.Off:
		close(g.done)
	case iv < 0:
		panic("gateway.New: Options.HealthInterval cannot be negative (mcp.Off turns it off)")
	default:
		if iv == 0 {
			iv = time.Second
		}
		go g.watch(iv)
	}
	return g, nil
}

// ready is the gateway's readiness check: not ready while every required
// backend is down, the error naming them and why.
func (g *Gateway) ready(ctx context.Context) error {
	var why []string
	for _, b := range g.cur.Load().backends {
		if !b.required {
			continue
		}
		err := b.down(ctx)
		if err == nil {
			return nil
		}
		why = append(why, err.Error())
	}
	if len(why) == 0 {
		return nil
	}
	return errors.New("gateway: every required backend is down: " + strings.Join(why, "; "))
}

// readiness is the gateway's mcp.ReadyDescriber: Gateway.ready, and one
// line per backend on /readyz.
type readiness struct{ g *Gateway }

func (r readiness) Ready(ctx context.Context) error { return r.g.ready(ctx) }

// DescribeReady returns one line per backend, in configuration order:
// "backend NAME: up" or "backend NAME: down: WHY", with " (required)"
// after the name of a required one. WHY is the bridge's reason, cut to
// maxWhyBytes, with the backend's header and env values and URL password
// replaced by "[redacted]".
func (r readiness) DescribeReady(ctx context.Context) []string {
	bs := r.g.cur.Load().backends
	out := make([]string, 0, len(bs))
	for _, b := range bs {
		line := "backend " + b.name
		if b.required {
			line += " (required)"
		}
		if why := b.downReason(ctx); why != "" {
			out = append(out, line+": down: "+why)
		} else {
			out = append(out, line+": up")
		}
	}
	return out
}

// maxWhyBytes bounds the reason a backend is down on /readyz.
const maxWhyBytes = 300

// downReason is why backend b is down, safe for /readyz; "" when it is up.
func (b *backend) downReason(ctx context.Context) string {
	var why string
	if br := b.bridge(); br == nil {
		why = "not started"
		if w := b.why.Load(); w != nil {
			why += ": " + *w
		}
	} else if err := br.Server().Ready(ctx); err != nil {
		why = err.Error()
	} else {
		return ""
	}
	for _, s := range b.secrets {
		if len(s) >= minSecretLen {
			why = strings.ReplaceAll(why, s, "[redacted]")
		}
	}
	return clip.String(why, maxWhyBytes)
}

// minSecretLen is the length from which a header or env value is
// redacted from a reason: shorter ones ("info", "1") are not secrets, and
// replacing them would garble the reason.
const minSecretLen = 6

// watch tells listeners when a backend goes down or comes back, until
// Close: its tools leave or rejoin the lists.
func (g *Gateway) watch(every time.Duration) {
	defer close(g.done)
	t := time.NewTicker(every)
	defer t.Stop()
	was := map[*backend]bool{} // of the router last seen: Reload tells listeners itself
	for _, b := range g.cur.Load().backends {
		was[b] = b.down(context.Background()) != nil // a change before the first tick counts
	}
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		r := g.cur.Load()
		changed := false
		now := make(map[*backend]bool, len(r.backends))
		for _, b := range r.backends {
			down := b.down(context.Background()) != nil
			now[b] = down
			if prev, ok := was[b]; ok && prev != down {
				changed = true
				g.log.Info("gateway: a backend changed state", "backend", b.name, "down", down)
			}
		}
		was = now
		if changed {
			g.mu.Lock()
			if !g.closed && g.cur.Load() == r {
				g.srv.Advertise(r.advertisement(g.opts.Server.Instructions))
				for k := mcp.ToolsListChanged; k <= mcp.ResourcesListChanged; k++ {
					g.srv.NotifyListChanged(k)
				}
			}
			g.mu.Unlock()
		}
	}
}

// build makes the router of backends, reusing the running bridges of old
// whose backend has the same name and a non-empty, unchanged Fingerprint,
// and starting the others. A backend that does not start is retried in the
// background (down meanwhile), unless every backend of a first build
// failed: that is an error. It returns the router and the old bridges it
// reused. It fails only when no backend of a first build started, so
// nothing is left to close then.
func (g *Gateway) build(ctx context.Context, backends []Backend, prefer string, old *router) (*router, map[*bridge.Bridge]bool, error) {
	r := &router{log: g.log, named: map[string]*backend{}, prefer: prefer, maxTTL: g.opts.MaxListTTL, cacheTTL: g.opts.Server.Cache.TTL}
	if a := g.opts.Server.Auth; a != nil {
		r.required = a.RequiredScopes
	}
	if len(backends) == 0 {
		return nil, nil, errors.New("gateway: no backends")
	}
	for i, b := range backends {
		switch {
		case !nameRE.MatchString(b.Name):
			return nil, nil, fmt.Errorf("gateway: backend name %q: want 1 to 32 of a-z, 0-9 and -", b.Name)
		case r.named[b.Name] != nil:
			return nil, nil, fmt.Errorf("gateway: two backends are named %q", b.Name)
		case b.Transport == nil:
			return nil, nil, fmt.Errorf("gateway: backend %q has no Transport", b.Name)
		case b.NoPrefix && r.bare != nil:
			return nil, nil, fmt.Errorf("gateway: backends %q and %q both have NoPrefix; at most one may", r.bare.name, b.Name)
		case g.opts.Server.Auth == nil && (len(b.Scopes) > 0 || len(b.ToolScopes) > 0):
			return nil, nil, fmt.Errorf("gateway: backend %q has scopes, but the front server has no Auth", b.Name)
		case b.RateLimit != nil && (b.RateLimit.Count <= 0 || b.RateLimit.Per <= 0 || b.RateLimit.Burst < 0):
			return nil, nil, fmt.Errorf("gateway: backend %q: RateLimit %+v: want a positive Count and Per", b.Name, *b.RateLimit)
		case b.hasTasks() && !g.tasks:
			return nil, nil, fmt.Errorf("gateway: backend %q has task support, but the gateway started without any: its front does not serve the tasks extension; restart the gateway to turn tasks on", b.Name)
		}
		if err := b.checkTasks(); err != nil {
			return nil, nil, err
		}
		be := &backend{name: b.Name, index: i, noPrefix: b.NoPrefix, required: b.Required, timeout: b.Timeout, allow: set(b.AllowTools), deny: set(b.DenyTools), print: b.Fingerprint,
			scopes: b.Scopes, toolScope: b.ToolScopes, secrets: b.secrets, tasks: b.Tasks, taskTools: maps.Clone(b.TaskTools)}
		if b.RateLimit != nil {
			if o := old.lookup(b.Name); o != nil && o.limits != nil && o.limits.limit == newLimiter(*b.RateLimit).limit {
				be.limits = o.limits // unchanged: the callers keep their buckets
			} else {
				be.limits = newLimiter(*b.RateLimit)
			}
		}
		r.named[b.Name] = be
		r.backends = append(r.backends, be)
		if b.NoPrefix {
			r.bare = be
		}
	}
	if r.prefer != "" && r.named[r.prefer] == nil {
		return nil, nil, fmt.Errorf("gateway: Options.Prefer names no backend: %q", r.prefer)
	}
	for _, be := range r.backends {
		be.ctx, be.cancel = context.WithCancel(context.Background())
	}
	reused := map[*bridge.Bridge]bool{}
	var failed []int
	var firstErr error
	for i, b := range backends {
		if old != nil {
			if o := old.named[b.Name]; o != nil && b.Fingerprint != "" && o.print == b.Fingerprint && o.bridge() != nil &&
				o.tasks == b.Tasks && maps.Equal(o.taskTools, b.TaskTools) {
				r.backends[i].brp.Store(o.bridge())
				reused[o.bridge()] = true
				continue
			}
		}
		br, err := bridge.New(ctx, g.bridgeOptions(b))
		if err != nil {
			why := err.Error()
			r.backends[i].why.Store(&why)
			failed = append(failed, i)
			if firstErr == nil {
				firstErr = fmt.Errorf("gateway: backend %q: %w", b.Name, err)
			}
			continue
		}
		r.backends[i].brp.Store(br)
	}
	if old == nil && len(failed) == len(backends) {
		for _, be := range r.backends {
			be.cancel()
		}
		return nil, nil, firstErr
	}
	for _, i := range failed {
		g.log.Warn("gateway: a backend did not start; retrying in the background", "backend", backends[i].Name, "err", *r.backends[i].why.Load())
		go g.retry(r.backends[i], backends[i])
	}
	return r, reused, nil
}

// lookup returns the backend named name of r, or nil (also for a nil r).
func (r *router) lookup(name string) *backend {
	if r == nil {
		return nil
	}
	return r.named[name]
}

// bridgeOptions are the bridge options of backend b.
func (g *Gateway) bridgeOptions(b Backend) *bridge.Options {
	bo := g.opts.Bridge
	bo.Backend = b.Transport
	bo.Logger = g.log.With("backend", b.Name)
	bo.Server = mcp.ServerOptions{Bus: g.opts.Server.Bus, Logger: bo.Logger}
	bo.Tasks, bo.TaskTools = b.Tasks, b.TaskTools // the front runs the tasks; the bridge starts them (InputStartsTask)
	return &bo
}

// retry starts backend be (configured as b) with backoff until it starts,
// it is retired, or the gateway closes.
func (g *Gateway) retry(be *backend, b Backend) {
	backoff := g.opts.Bridge.MinBackoff
	if backoff <= 0 {
		backoff = 100 * time.Millisecond
	}
	maxBackoff := g.opts.Bridge.MaxBackoff
	if maxBackoff <= 0 {
		maxBackoff = 30 * time.Second
	}
	for {
		select {
		case <-g.stop:
			return
		case <-time.After(backoff):
		}
		be.mu.Lock()
		retired := be.retired
		be.mu.Unlock()
		if retired {
			return
		}
		br, err := bridge.New(g.ctx, g.bridgeOptions(b))
		if err != nil {
			why := err.Error()
			be.why.Store(&why)
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		be.mu.Lock()
		if be.retired {
			be.mu.Unlock()
			br.Close()
			return
		}
		be.brp.Store(br)
		be.mu.Unlock()
		g.log.Info("gateway: a backend started", "backend", b.Name)
		return
	}
}

// Reload changes the gateway's backends to backends (and resources.prefer
// to prefer): a backend with the same name and the same non-empty
// Fingerprint keeps running; the others start, and the backends no longer
// there (or changed) are closed after the switch, their calls in flight
// ending with an error. Listeners get list_changed, and server/discover
// the new union. A backend that does not start is down, retried in the
// background. On an error (a bad backend) nothing changes. Cursors of the old lists may skip or repeat items. It
// is safe for concurrent use; reloads run one at a time.
func (g *Gateway) Reload(ctx context.Context, backends []Backend, prefer string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errors.New("gateway: closed")
	}
	old := g.cur.Load()
	r, reused, err := g.build(ctx, backends, prefer, old)
	if err != nil {
		return err
	}
	g.cur.Store(r)
	g.srv.Advertise(r.advertisement(g.opts.Server.Instructions))
	for k := mcp.ToolsListChanged; k <= mcp.ResourcesListChanged; k++ {
		g.srv.NotifyListChanged(k)
	}
	for _, b := range old.backends {
		b.closeInner()
		br := b.retire()
		if br == nil || !reused[br] {
			b.cancel() // its calls in flight end
		}
		if br != nil && !reused[br] {
			br.Close()
		}
	}
	return nil
}

// Server returns the front server: serve it over Streamable HTTP (it is an
// http.Handler) or stdio.
func (g *Gateway) Server() *mcp.Server { return g.srv }

// Close ends every backend (see bridge.Bridge.Close). It is safe to call
// more than once.
func (g *Gateway) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	close(g.stop)
	<-g.done
	g.cancel()
	if r := g.cur.Load(); r != nil {
		for _, b := range r.backends {
			b.closeInner()
			b.cancel()
			if br := b.retire(); br != nil {
				br.Close()
			}
		}
	}
	return nil
}

// closeInner closes the backend's in-process client, if any.
func (b *backend) closeInner() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inner != nil {
		b.inner.Close()
		b.inner = nil
	}
}

// advertisement is the union of the backends' capabilities, and their
// instructions each in a section of its own after intro.
func (g *router) advertisement(intro string) *mcp.Advertisement {
	var caps mcp.ServerCapabilities
	list := func(dst **mcp.ListCapability, c *mcp.ListCapability) {
		if c == nil {
			return
		}
		// The gateway changes its lists itself (reload, a backend down).
		*dst = &mcp.ListCapability{ListChanged: true}
	}
	var sections []string
	if intro != "" {
		sections = append(sections, intro)
	}
	for _, b := range g.backends {
		br := b.bridge()
		if br == nil {
			continue
		}
		d := br.Describe()
		c := &d.Capabilities
		list(&caps.Tools, c.Tools)
		list(&caps.Prompts, c.Prompts)
		if c.Resources != nil {
			// Subscriptions are routed to the owner of each URI
			// (subscribe.go): declared when a backend declares them.
			caps.Resources = &mcp.ResourcesCapability{ListChanged: true, Subscribe: g.subscribable()}
		}
		if c.Completions != nil {
			caps.Completions = &struct{}{}
		}
		if c.Logging != nil {
			caps.Logging = &struct{}{}
		}
		if d.Instructions != "" {
			sections = append(sections, "## "+b.name+"\n\n"+strings.TrimSpace(d.Instructions))
		}
	}
	return &mcp.Advertisement{Capabilities: caps, Instructions: strings.Join(sections, "\n\n")}
}

// set returns names as a set, nil when there are none.
func set(names []string) map[string]bool {
	if len(names) == 0 {
		return nil
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// toolAllowed reports whether the policy lets the backend's tool through.
func (b *backend) toolAllowed(name string) bool {
	return !b.deny[name] && (b.allow == nil || b.allow[name])
}

// has reports whether backend b declared the capability of method.
func (b *backend) has(method string) bool {
	br := b.bridge()
	if br == nil {
		return false
	}
	c := br.Describe().Capabilities
	switch method {
	case "tools/list", "tools/call":
		return c.Tools != nil
	case "prompts/list", "prompts/get":
		return c.Prompts != nil
	case "resources/list", "resources/templates/list", "resources/read":
		return c.Resources != nil
	case "completion/complete":
		return c.Completions != nil
	}
	return false
}

// Provide implements mcp.Provider: it merges lists and routes calls.
func (g *Gateway) Provide(ctx context.Context, req *mcp.MethodRequest) (*mcp.ProvidedResult, error) {
	return g.cur.Load().provide(ctx, req)
}

// provide serves one request with this router.
func (g *router) provide(ctx context.Context, req *mcp.MethodRequest) (*mcp.ProvidedResult, error) {
	switch req.Method {
	case "tools/list":
		return g.list(ctx, req, "tools", kindTool)
	case "prompts/list":
		return g.list(ctx, req, "prompts", kindPrompt)
	case "resources/list":
		return g.list(ctx, req, "resources", kindResource)
	case "resources/templates/list":
		return g.list(ctx, req, "resourceTemplates", kindTemplate)
	case "tools/call", "prompts/get":
		return g.callNamed(ctx, req)
	case "resources/read":
		return g.read(ctx, req)
	case "completion/complete":
		return g.complete(ctx, req)
	}
	return nil, &mcp.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + req.Method}
}

// params decodes the request's params as an object (nil for none).
func params(req *mcp.MethodRequest) (map[string]json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(req.Params) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(req.Params, &m); err != nil {
		return nil, mcp.InvalidParams("Invalid params: params must be an object")
	}
	return m, nil
}

// down returns why backend b cannot serve now (it exited and is being
// restarted, say), or nil.
func (b *backend) down(ctx context.Context) error {
	br := b.bridge()
	if br == nil {
		why := "not started"
		if w := b.why.Load(); w != nil {
			why = *w
		}
		return mcp.Unavailable("Backend unavailable: backend " + b.name + " has not started (" + why + "); retrying")
	}
	if err := br.Server().Ready(ctx); err != nil {
		return mcp.Unavailable("Backend unavailable: backend " + b.name + " is down (" + err.Error() + ")")
	}
	return nil
}

// forward sends req to backend b with params p, and names b in its
// internal errors. A backend that is down is not asked: the error names it.
func (g *router) forward(ctx context.Context, b *backend, req *mcp.MethodRequest, p map[string]json.RawMessage) (*mcp.ProvidedResult, error) {
	var tool string
	json.Unmarshal(p["name"], &tool)
	if err := g.admitCall(ctx, req, b, tool); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return g.forwardRaw(ctx, b, req, raw)
}

// admitCall names backend b in the attributes of a call routed to it
// (tools/call, prompts/get, resources/read, completion/complete) and
// applies b's policy to it: scopes and rate limit (admit). tool is the
// backend's name of the tool or prompt, "" for the other methods.
func (g *router) admitCall(ctx context.Context, req *mcp.MethodRequest, b *backend, tool string) error {
	switch req.Method {
	case "tools/call", "prompts/get", "resources/read", "completion/complete":
		mcp.Annotate(ctx, BackendAttribute, b.name)
		return g.admit(req, b, tool)
	}
	return nil
}

// forwardRaw is forward with the params already encoded; the caller has
// applied admitCall.
func (g *router) forwardRaw(ctx context.Context, b *backend, req *mcp.MethodRequest, raw []byte) (*mcp.ProvidedResult, error) {
	if err := b.down(ctx); err != nil {
		return nil, err
	}
	req.Params = raw
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(b.ctx, cancel)() // a reload that removes b ends the call
	if b.timeout > 0 && (req.Method == "tools/call" || req.Method == "prompts/get" || req.Method == "resources/read") {
		var cancelT context.CancelFunc
		cctx, cancelT = context.WithTimeout(cctx, b.timeout)
		defer cancelT()
	}
	res, err := b.bridge().Provide(cctx, req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
		case b.ctx.Err() != nil:
			return nil, &mcp.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: backend " + b.name + " was removed or restarted by a reload while the call ran; the call was cancelled"}
		case cctx.Err() != nil:
			return nil, &mcp.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: backend " + b.name + ": the call took longer than its timeout (" + b.timeout.String() + ") and was cancelled"}
		}
		return nil, b.wrap(err)
	}
	return res, nil
}

// wrap names the backend in an error: in the message of an internal
// *mcp.Error (a backend that exited, that is busy), in the log of any
// other error. Protocol errors the backend sent pass as they are.
func (b *backend) wrap(err error) error {
	var e *mcp.Error
	if errors.As(err, &e) {
		if e.Code != jsonrpc.CodeInternalError {
			return err
		}
		c := *e
		c.Message = "backend " + b.name + ": " + e.Message
		return &c
	}
	var ir *mcp.InputRequired
	if errors.As(err, &ir) {
		return err
	}
	return fmt.Errorf("backend %s: %w", b.name, err)
}

// route returns the backend of a tool or prompt name and the name the
// backend knows it by.
func (g *router) route(name string) (*backend, string, bool) {
	if i := strings.IndexByte(name, '_'); i > 0 {
		if b := g.named[name[:i]]; b != nil && !b.noPrefix {
			return b, name[i+1:], true
		}
	}
	if g.bare != nil {
		return g.bare, name, true
	}
	return nil, "", false
}

// callNamed routes tools/call and prompts/get by their name.
func (g *router) callNamed(ctx context.Context, req *mcp.MethodRequest) (*mcp.ProvidedResult, error) {
	name, rename, err := nameParam(req.Params)
	if err != nil {
		return nil, err
	}
	b, inner, ok := g.route(name)
	if ok && (len(name) > MaxNameLen || !nameChars.MatchString(name)) {
		ok = false // never listed: see publicName
	}
	if ok && req.Method == "tools/call" && !b.toolAllowed(inner) {
		ok = false
	}
	if ok && b.bridge() == nil {
		mcp.Annotate(ctx, BackendAttribute, b.name)
		if err := g.checkScopes(req, b, inner); err != nil {
			return nil, err // a caller without the scopes learns nothing more
		}
		return nil, b.down(ctx) // not started yet: it cannot say what it has
	}
	if !ok || !b.has(req.Method) {
		if req.Method == "tools/call" {
			return nil, mcp.InvalidParams("Unknown tool: " + name)
		}
		return nil, mcp.InvalidParams("Unknown prompt: " + name)
	}
	if err := g.admitCall(ctx, req, b, inner); err != nil {
		return nil, err
	}
	return g.forwardRaw(ctx, b, req, rename(inner))
}

// nameParam reads the "name" member of the params of a tools/call or
// prompts/get (an object) without decoding the rest, and returns it with a
// function that returns a copy of params whose name is another: the rest
// of the params (arguments, _meta) goes to the backend byte for byte, not
// decoded and encoded again. params is valid JSON (the front decoded the
// request). Params with a key that repeats, or with an escaped key, are
// decoded and encoded again instead (the last of each key wins, as in
// encoding/json), so that a backend that reads the first of repeated keys
// sees the name the gateway routed and checked, never another.
func nameParam(params []byte) (string, func(string) []byte, error) {
	it, ok := jsonscan.Object(params)
	if !ok && len(bytes.TrimSpace(params)) > 0 && !bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
		return "", nil, mcp.InvalidParams("Invalid params: params must be an object")
	}
	var m jsonscan.Member
	var span []byte
	var keysBuf [8][]byte // params have a few keys: no allocation
	keys := keysBuf[:0]
	repeated := false
	for ok && it.Next(&m) {
		repeated = repeated || m.Escaped // an escaped key may spell another: compare decoded
		for _, k := range keys {
			repeated = repeated || bytes.Equal(k, m.Key)
		}
		keys = append(keys, m.Key)
		if m.KeyIs("name") {
			span = m.Value
		}
	}
	name, isString := jsonscan.String(span)
	if !isString || name == "" {
		return "", nil, mcp.InvalidParams("Invalid params: name must be a non-empty string")
	}
	if repeated {
		var p map[string]json.RawMessage
		if err := json.Unmarshal(params, &p); err != nil {
			return "", nil, mcp.InvalidParams("Invalid params: params must be an object")
		}
		return name, func(to string) []byte {
			p["name"], _ = json.Marshal(to)
			out, _ := json.Marshal(p)
			return out
		}, nil
	}
	off := cap(params) - cap(span) // span is a slice of params
	return name, func(to string) []byte {
		enc, _ := json.Marshal(to)
		out := make([]byte, 0, len(params)-len(span)+len(enc))
		out = append(out, params[:off]...)
		out = append(out, enc...)
		return append(out, params[off+len(span):]...)
	}, nil
}
