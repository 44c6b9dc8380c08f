package mcp

import (
	"context"
	"hash/maphash"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/protocol"
)

// ServerOptions configures a Server. Every field is optional, and the zero
// value of each field, and of each group of fields, is its default.
//
// One convention says how a setting is turned off. A numeric setting that
// can be off (a limit, an interval, a lifetime) says so in its comment and
// what off means for it; set it to Off (any negative value does the same).
// A numeric setting that cannot be off makes NewServer panic on a negative
// value. A feature is turned off by the Disable field of its group
// (Listen.Disable, Legacy.Disable); HTTP.DisableListenParking turns off a
// behaviour in the same way. The eras served are both by default,
// 2026-07-28 alone with Legacy.Disable, and the legacy era alone with
// Legacy.Only.
//
// The fields at the top level bind every transport (Streamable HTTP, stdio,
// and the legacy era on both). The groups name where they apply: HTTP only
// on Streamable HTTP, Legacy only to legacy clients.
type ServerOptions struct {
	// Info identifies the server in every result's
	// _meta["io.modelcontextprotocol/serverInfo"] and in the legacy
	// initialize result, as Options.ClientInfo identifies a client.
	// Info.Name defaults to "mcpkit" and Info.Version to "0.0.0"; Title,
	// Description, Icons and WebsiteURL are optional. NewServer copies Info
	// (Icons included), so changing the caller's value later has no effect.
	Info Implementation
	// Instructions is optional natural-language guidance for models, sent
	// in server/discover.
	Instructions string

	// Extensions are advertised in capabilities.extensions, keyed by
	// extension identifier; a nil value is sent as {}.
	Extensions map[string]any

	// MaxMessageBytes bounds one incoming message on every transport: a
	// Streamable HTTP request body (legacy ones too) and a stdio line.
	// Default 4 MiB. A larger message gets an error (HTTP 413; on stdio an
	// error line) and is not processed. It cannot be off.
	MaxMessageBytes int64

	// PageSize is the number of items per page of tools/list and the other
	// list methods. Default 100. It cannot be off.
	PageSize int

	// ListFilters optionally shape list results per request, for example
	// by the caller's identity. A family with a filter gets its lists
	// computed per request and marked CachePrivate, and items a filter
	// hides cannot be called, read or completed either.
	ListFilters ListFilters

	// Interceptors wrap the handling of every call, on every transport and
	// in both eras, the first outermost: tracing, metrics, auditing, rate
	// limits. See Interceptor. None by default, at no cost.
	Interceptors []Interceptor

	// Logger receives the server's own logs. Default slog.Default(). On
	// stdio, make sure it does not write to stdout.
	Logger *slog.Logger

	// Bus carries change notifications (list changes, resource updates)
	// to the subscriptions/listen streams (and legacy sessions) of this
	// server and, for a distributed Bus, of every replica sharing it.
	// Default: a LocalBus private to this server.
	Bus Bus

	// Cache sets the caching hints of server/discover and list results.
	Cache CacheOptions
	// HTTP configures what only Streamable HTTP has: origin and host
	// checks, header limits, keep-alive comments and listen parking.
	HTTP HTTPOptions
	// Listen configures subscriptions/listen on every transport.
	Listen ListenOptions
	// State configures the sealing of the requestState of input_required
	// results (see docs/mrtr.md).
	State StateOptions
	// Legacy configures the legacy era (revisions 2025-11-25 and older,
	// which open with initialize), or turns it off.
	Legacy LegacyOptions

	// Tasks configures the tasks extension (io.modelcontextprotocol/tasks),
	// which is on once a tool with TaskSupport is registered or
	// Tasks.Store is set. See TaskOptions.
	Tasks TaskOptions
	// Quotas bounds what one client may hold (tasks, listen streams,
	// legacy sessions) and the request bytes in flight server-wide. See
	// QuotaOptions and docs/security.md.
	Quotas QuotaOptions

	// Auth, when set, makes the server an OAuth 2.1 protected resource on
	// Streamable HTTP: requests need a bearer token that Auth.Verifier
	// accepts, and Protected Resource Metadata tells clients where to get
	// one. stdio is not affected. See AuthOptions.
	Auth *AuthOptions

	// Provider, when set, answers tools/list, tools/call, prompts/list,
	// prompts/get, resources/list, resources/templates/list,
	// resources/read and completion/complete per request, in place of the
	// registry (which keeps serving custom methods, skills, listen and
	// tasks). What server/discover declares is then set with
	// Server.Advertise. See Provider; a Provider that implements
	// TaskProvider turns the tasks extension on.
	Provider Provider

	// ReadyChecks are consulted by Ready (and /readyz) after the Bus and
	// the stores: the first error makes the server not ready. ReadyFunc
	// adapts a function. They are called concurrently and should return
	// quickly (a probe is bounded by two seconds).
	ReadyChecks []ReadyChecker
}

// Server is an MCP server. Create one with NewServer, register tools and
// other features, then serve it over HTTP (a Server is an http.Handler) or
// stdio. Registration may happen at any time, also while serving: every
// request sees one consistent snapshot of the registry. All methods are
// safe for concurrent use.
type Server struct {
	opts      ServerOptions
	quota     quotas
	log       *slog.Logger
	versions  []string                 // every served version, newest first: modern, then legacy
	modern    []string                 // the served modern versions (per-request _meta)
	legacy    *legacyEra               // nil with Legacy.Disable; see legacy.go
	identity  atomic.Pointer[identity] // the serverInfo in force: ServerOptions.Info, or the Advertisement's
	cacheHint []byte                   // `"ttlMs":N,"cacheScope":"..."`
	pageSize  int
	maxBody   int64
	// bodyTimeout is HTTP.BodyTimeout in force (Off: none).
	bodyTimeout time.Duration
	maxHeader   int
	auth        authState
	icpt        []Interceptor // nil when none
	chained     CallHandler   // the interceptors around a call's handler (intercept.go)

	shuttingDown atomic.Bool // Shutdown was called (Ready)

	mu   sync.Mutex // guards reg, rebuilding snap, and pending
	reg  registry
	snap atomic.Pointer[snapshot]
	bufs sync.Pool
	// clientInfo holds recently decoded clientInfo values (meta.go),
	// reused while requests carry the same bytes: a client sends the same
	// on each request.
	clientInfo clientInfoCache
	state      sealer // requestState sealing (state.go)

	// pending are the kinds of list change (bit 1<<ChangeKind) that
	// registrations made and that flushChanges has yet to publish;
	// flushing says that a flushChanges is on its way (at once, or by the
	// timer flush at quietUntil); quietUntil is the end of the window that
	// the last publication opened, which lasts changeDelay. Guarded by mu.
	pending     uint8
	flushing    bool
	served      bool // a snapshot has been built: a client may have seen the lists
	quietUntil  time.Time
	flush       *time.Timer
	changeDelay time.Duration

	bus       Bus
	keepAlive time.Duration
	listen    listeners
	tasks     taskState
	// skillsWatch is the watcher of the last AddSkills (skills.go), or
	// nil. Guarded by mu.
	skillsWatch *skillsWatch
	// advert is what Advertise set, or nil. Guarded by mu.
	advert *Advertisement
}

// NewServer returns a Server configured by opts (nil means defaults).
func NewServer(opts *ServerOptions) *Server {
	s := &Server{}
	s.clientInfo.seed = maphash.MakeSeed()
	if opts != nil {
		s.opts = *opts
	}
	o := &s.opts
	o.Info.Icons = slices.Clone(o.Info.Icons)
	if o.Info.Name == "" {
		o.Info.Name = "mcpkit"
	}
	if o.Info.Version == "" {
		o.Info.Version = "0.0.0"
	}
	if o.Cache.Scope == "" {
		o.Cache.Scope = CachePublic
	}
	if o.Cache.Scope != CachePublic && o.Cache.Scope != CachePrivate {
		panic("mcp.NewServer: Cache.Scope must be CachePublic or CachePrivate, not " + strconv.Quote(string(o.Cache.Scope)))
	}
	if len(o.Interceptors) > 0 {
		s.icpt = slices.Clone(o.Interceptors)
		s.chained = s.chain()
	}
	s.log = o.Logger
	if s.log == nil {
		s.log = slog.Default()
	}
	s.pageSize = setting("PageSize", o.PageSize, 100)
	s.maxBody = setting("MaxMessageBytes", o.MaxMessageBytes, 4<<20)
	s.maxHeader = setting("HTTP.MaxHeaderBytes", o.HTTP.MaxHeaderBytes, 64<<10)
	s.modern = slices.Clone(protocol.ModernVersions)
	s.versions = s.modern
	if o.Legacy.Only && o.Legacy.Disable {
		panic("mcp.NewServer: Legacy.Only and Legacy.Disable together leave no era to serve")
	}
	if !o.Legacy.Disable {
		s.initLegacy() // legacy.go: adds the legacy versions and the sessions
	}

	s.setIdentity(s.opts.Info)

	o.Cache.TTL = offSetting(o.Cache.TTL, time.Hour)
	s.cacheHint = s.appendHint(nil, 0, "")
	s.initAuth()
	s.tasks.init(s, &o.Tasks)
	if _, ok := o.Provider.(TaskProvider); ok {
		s.tasks.enable() // as registering a task-capable tool does
	}

	s.initState()
	s.keepAlive = offSetting(o.HTTP.KeepAlive, 15*time.Second)
	s.bodyTimeout = offSetting(o.HTTP.BodyTimeout, 30*time.Second)
	s.bus = o.Bus
	if s.bus == nil {
		s.bus = new(LocalBus)
	}
	s.listen.init(s, &o.Listen)
	s.quota.init(&o.Quotas)
	s.changeDelay = changeDelay

	s.reg.init()
	return s
}

// identity is the serverInfo a server declares, and its _meta member.
type identity struct {
	info Implementation
	meta []byte // `"io.modelcontextprotocol/serverInfo":{...}`
}

// setIdentity makes info the serverInfo of later results.
func (s *Server) setIdentity(info Implementation) {
	info.Icons = slices.Clone(info.Icons)
	s.identity.Store(&identity{info: info, meta: appendMember(nil, protocol.MetaServerInfo, mustMarshal(info))})
}

// implementation is the serverInfo in force: what ServerOptions describe,
// or what Server.Advertise set.
func (s *Server) implementation() Implementation {
	return s.identity.Load().info
}

// SupportedVersions returns the protocol versions this server serves, newest
// first. server/discover and UnsupportedProtocolVersion errors list exactly
// these.
func (s *Server) SupportedVersions() []string { return slices.Clone(s.versions) }

// supports returns the canonical version string for v, or "" if v is not
// a served modern version (legacy versions are reached only through
// initialize). It does not allocate.
func (s *Server) supports(v []byte) string {
	for _, sv := range s.modern {
		if string(v) == sv {
			return sv
		}
	}
	return ""
}

// snapshot returns the current registry snapshot, building it if a
// registration changed the registry since the last build.
func (s *Server) snapshot() *snapshot {
	if sn := s.snap.Load(); sn != nil {
		return sn
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sn := s.snap.Load(); sn != nil {
		return sn
	}
	sn := s.reg.build(s)
	s.snap.Store(sn)
	s.served = true
	return sn
}

// changed invalidates the snapshot after a registration that changed the
// list of the given kind (ToolsListChanged, PromptsListChanged or
// ResourcesListChanged), and schedules publishing that change on the Bus.
//
// Changes made before the server first served a request (registrations at
// start-up) are not published: no client can have seen the lists as they
// were. (A client that re-listed on another replica since the last
// notification cannot be told apart from one that did not, so later
// changes are always published.)
//
// Publication is leading-edge: a change after a quiet spell is published
// at once, and opens a window of changeDelay; the changes made within the
// window are published together when it ends (which opens the next one).
// So an isolated change reaches listeners without delay, registering many
// items at once sends at most two notifications per kind, and a steady
// stream of changes at most one per changeDelay. No change is lost, and at
// most one publication is pending. Callers hold s.mu.
func (s *Server) changed(k ChangeKind) {
	s.snap.Store(nil)
	if !s.served {
		return
	}
	s.pending |= 1 << k
	if s.flushing {
		return // the pending publication will carry it
	}
	s.flushing = true
	d := time.Until(s.quietUntil)
	switch {
	case d <= 0:
		go s.flushChanges()
	case s.flush == nil:
		s.flush = time.AfterFunc(d, s.flushChanges)
	default:
		s.flush.Reset(d)
	}
}

// changeDelay is the window after a publication of list changes within
// which further changes are gathered into one publication at its end.
const changeDelay = 10 * time.Millisecond

// flushChanges publishes the list changes that registrations made, and
// opens the window in which the next ones wait.
func (s *Server) flushChanges() {
	s.mu.Lock()
	p := s.pending
	s.pending = 0
	s.flushing = false
	s.quietUntil = time.Now().Add(s.changeDelay)
	s.mu.Unlock()
	for k := ToolsListChanged; k <= ResourcesListChanged; k++ {
		if p&(1<<k) != 0 {
			s.bus.Publish(Change{Kind: k})
		}
	}
}

// NotifyResourceUpdated tells the subscriptions/listen streams that listed
// uri in their resourceSubscriptions (on every replica, with a distributed
// Bus) that the resource changed, with notifications/resources/updated.
// It returns without waiting for delivery and is safe for concurrent use.
func (s *Server) NotifyResourceUpdated(uri string) {
	if uri == "" {
		return
	}
	s.bus.Publish(Change{Kind: ResourceUpdated, URI: uri})
}

func (s *Server) getBuf() *[]byte {
	if b, ok := s.bufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 1024)
	return &b
}

// putBuf gives a buffer from getBuf back to the pool. Buffers smaller than
// getBuf makes them (an empty one in particular) are dropped, and so are
// huge ones.
func (s *Server) putBuf(b *[]byte) {
	if c := cap(*b); c < 1024 || c > 1<<20 {
		return // do not keep huge buffers alive, nor small ones
	}
	*b = (*b)[:0]
	s.bufs.Put(b)
}

// Shutdown stops the server's long-lived work gracefully, for a process
// that is about to exit:
//   - every open subscriptions/listen stream gets its completion result
//     (SubscriptionsListenResult) and ends;
//   - the tasks this server runs are cancelled, and end failed, so that
//     clients polling them (on another replica) learn that the work
//     stopped;
//   - later listen requests and calls that would start a task are refused
//     with -32603 (HTTP 503), so that a load balancer retries them on
//     another replica. Other requests are not affected.
//
// From the first call on, Ready reports ErrShuttingDown, so that /readyz
// takes the replica out of a load balancer's rotation.
//
// Shutdown waits until the listen and task handlers have returned or ctx
// is done, whichever comes first, and returns ctx's error in the latter
// case. Call it before http.Server.Shutdown, which waits for active
// handlers and would otherwise wait for the listen streams until its own
// deadline. It is safe to call more than once and concurrently.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shuttingDown.Store(true)
	s.stopSkillsWatch()
	if s.legacy != nil {
		s.legacy.workers.stop()
	}
	errc := make(chan error, 1)
	go func() { errc <- s.tasks.shutdown(ctx) }()
	err := s.shutdownListen(ctx)
	if terr := <-errc; err == nil {
		err = terr
	}
	return err
}
