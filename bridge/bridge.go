// Package bridge serves any MCP server, of either era, as a 2026-07-28
// endpoint: a Bridge is an mcp.Server whose tools, prompts, resources and
// completions come from a backend reached with a client.Client (a stdio
// command, a URL, or a server in the same process).
//
// At start-up the bridge opens a probe session and serves server/discover
// from the backend's answer. Calls go to backend sessions keyed by the
// caller's client capabilities, normalized to what a legacy backend can
// see (it learns them once, at initialize, and may list tools by them);
// one global cap bounds the sessions, idle ones are evicted least recently
// used first, and past the cap a caller gets 503 with Retry-After. A caller
// that declared sampling, elicitation or roots, or asked for a log level,
// gets its session to itself for the call (an exclusive lease): that is how
// the backend's requests and log messages are tied to the call that caused
// them (a modern backend needs none of this: it gets the caller's
// capabilities in each request, and its input_required becomes the
// front's). A backend's sampling/createMessage, elicitation/create and
// roots/list during tools/call, prompts/get or resources/read become one
// input_required result (keys r1, r2, ...); the retry's inputResponses
// answer the waiting backend requests and the call goes on. The held call
// lives on the replica that started it (see docs/bridge.md for running
// several). A backend that exits, or stops answering pings, is restarted
// with backoff; calls in flight on it get -32603 naming its exit status (or
// that it stopped answering), never its stderr. A front listen stream's
// resourceSubscriptions become the backend's resources/subscribe, one per
// (key, URI), reference-counted and renewed on a new session when the
// backend's ends; on a modern backend, they and the list changes become
// the backend's own listen streams, deduplicated (one per key for list
// changes, one per key and URI) and reopened with backoff.
package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/clip"
	"github.com/mcpkit/mcpkit/internal/listenhook"
	"github.com/mcpkit/mcpkit/mcp"
)

// Options configures a Bridge. Backend is required; the zero value of every
// other field is its default.
type Options struct {
	// Backend returns the transport of a new backend session. It is
	// called once per session: a *client.CommandTransport starts a new
	// process each time. The command comes from the operator, never from
	// a request.
	Backend func() client.Transport
	// Eras says which eras the bridge may speak to the backend
	// (client.AnyEra, the default, finds out; client.LegacyOnly
	// initializes even a server that answers server/discover).
	Eras client.EraPreference
	// ClientInfo is how the bridge introduces itself to the backend.
	// Default: name "mcpkit-bridge".
	ClientInfo mcp.Implementation
	// Interceptors wrap each call the bridge makes to the backend for a
	// caller (client.Options.Interceptors), the first outermost; their
	// context is the front request's, so with the otel module's
	// ServerInterceptor in front (Server.Interceptors) and its
	// ClientInterceptor here, a bridged call is a CLIENT span under the
	// front's SERVER span and the backend request's params._meta carries
	// the caller's trace (traceparent, tracestate). The pings the bridge
	// sends on its own do not go through them.
	Interceptors []client.Interceptor

	// Server configures the front server. Its Provider is the bridge; its
	// ReadyChecks get the bridge's own. An empty Info.Name takes the
	// backend's serverInfo (name, title, version, description, icons,
	// website).
	Server mcp.ServerOptions

	// Isolate says which callers may share a backend session (a process,
	// for a stdio backend). IsolateNone, the default, keys sessions by the
	// caller's capabilities only. IsolatePrincipal gives every
	// authenticated principal (mcp.Principal.ID) sessions of its own, and
	// scopes what they report (list changes, resources/updated) to that
	// principal's listen streams; it needs Server.Auth, and a request
	// without a principal is refused.
	Isolate Isolation
	// Tasks makes the bridged tools/call task-capable on the front (the
	// tasks extension, io.modelcontextprotocol/tasks, of which the
	// backend knows nothing): TaskOptional or TaskRequired, with the
	// meanings they have for mcp.Tool.TaskSupport, for every tool that
	// TaskTools does not name. The front then serves tasks/get,
	// tasks/update and tasks/cancel and advertises the extension;
	// Server.Tasks configures them (store, TTL, SyncWait). The default,
	// TaskNone, with TaskTools empty, leaves the extension off. See
	// docs/bridge.md.
	Tasks mcp.TaskSupport
	// TaskTools sets the task support of the tools it names, in place of
	// Tasks (say TaskRequired for a tool known to take minutes, TaskNone
	// for one that must answer directly). It is copied by New.
	TaskTools map[string]TaskTool

	// Extensions names the client extensions that reach the backend and
	// key its sessions; the others (the tasks extension, unknown ones)
	// are stripped.
	Extensions []string
	// MaxSessions bounds the backend sessions over all keys, the probe
	// session not counted. Default 16. It cannot be off.
	MaxSessions int
	// MaxListenStreams bounds the subscriptions/listen streams the bridge
	// keeps open on a modern backend, over all keys: one for list changes
	// per key, and one per (key, resource URI) that front listen streams
	// subscribe to (see docs/bridge.md). A front listen stream that needs
	// one more gets 503 with Retry-After. Default 1024. It cannot be off.
	MaxListenStreams int
	// LeaseWait bounds how long a call waits for a backend session when
	// all are busy; then it gets 503 with Retry-After. Default 5s. It
	// cannot be off.
	LeaseWait time.Duration
	// HoldTimeout bounds how long a backend call waits for the retry that
	// answers its input requests; then the call is cancelled and its
	// session freed. Default 60s (the TypeScript SDK's own request
	// timeout); it is also capped by ServerOptions.State.TTL.
	HoldTimeout time.Duration
	// Gather is the quiet time after a backend request within which
	// another one joins the same input_required result (the wait ends at
	// ten times Gather in all). Default 20ms.
	Gather time.Duration
	// MinBackoff and MaxBackoff bound the delay before restarting a
	// backend whose probe session ended: it doubles from MinBackoff
	// (default 100ms) to MaxBackoff (default 30s) while starts fail.
	MinBackoff, MaxBackoff time.Duration
	// PingInterval is how often the probe session, and every backend
	// session while calls are in flight on it, is pinged, to find a
	// backend that stops answering without exiting. Default 10s; mcp.Off
	// turns the pings off.
	PingInterval time.Duration
	// PingTimeout bounds the wait for a ping's answer: past it the
	// backend session is ended (a stdio backend's process too), its calls
	// in flight get -32603, and the backend is restarted as after an
	// exit. Default 5s.
	PingTimeout time.Duration
	// AdvertiseURL is this replica's own MCP endpoint as the other
	// replicas reach it (an internal address). It is sealed into the
	// requestState of held calls, and a replica that gets the retry of a
	// call it does not hold forwards the request there. Empty: retries
	// must reach the replica that started the call (or they get -32603).
	AdvertiseURL string
	// ForwardClient sends forwarded retries. Default: http.DefaultClient.
	ForwardClient *http.Client

	// Logger gets the bridge's logs (backend exits, restarts, log messages
	// outside a call). Default: Server.Logger, else slog.Default().
	Logger *slog.Logger
}

// Isolation says which callers may share a backend session
// (Options.Isolate).
type Isolation uint8

const (
	// IsolateNone: callers with the same capabilities share sessions.
	IsolateNone Isolation = iota
	// IsolatePrincipal: each authenticated principal has sessions of its
	// own (within the one global MaxSessions), and what a principal's
	// sessions report reaches only that principal's listen streams.
	IsolatePrincipal
)

// Bridge is an MCP server whose primitives come from a backend. Create one
// with New, serve Server() over any transport, and Close it at the end. It
// is safe for concurrent use.
type Bridge struct {
	opts Options
	srv  *mcp.Server
	// front is srv once New has made it: the probe session's reader may
	// deliver a notification before that, and onNotification reads it here.
	front atomic.Pointer[mcp.Server]
	log   *slog.Logger
	pool  *pool
	held  heldCalls
	// modern reports that the backend speaks 2026-07-28 (modern.go).
	modern atomic.Bool
	subs   subscriptions
	// streams are the backend listen streams of a modern backend
	// (listen.go).
	streams backendStreams
	// life ends when the bridge closes: it bounds the background work
	// (renewing subscriptions).
	life context.Context
	// schemas are the backend's tool schemas, for Mcp-Param-* checks.
	schemas schemas
	id      string // this replica, in sealed states

	mu      sync.Mutex
	probe   *client.Client
	notOK   error // why the bridge is not ready; nil when ready
	closed  bool
	stop    context.CancelFunc
	stopped chan struct{}
}

// errNotStarted is the readiness error before the first probe answered.
var errNotStarted = errors.New("bridge: the backend has not started")

// New starts a bridge: it opens the probe session (without client
// capabilities), takes the backend's identity, capabilities and
// instructions from it, and supervises it. It returns an error when the
// first start fails. ctx bounds the start only.
func New(ctx context.Context, opts *Options) (*Bridge, error) {
	if opts == nil || opts.Backend == nil {
		return nil, errors.New("bridge: Options.Backend is required")
	}
	switch opts.Isolate {
	case IsolateNone:
	case IsolatePrincipal:
		if opts.Server.Auth == nil {
			return nil, errors.New("bridge: Options.Isolate IsolatePrincipal needs Server.Auth: only an authenticated caller has a principal")
		}
	default:
		return nil, fmt.Errorf("bridge: unknown Options.Isolate %d", opts.Isolate)
	}
	b := &Bridge{opts: *opts, notOK: errNotStarted, stopped: make(chan struct{})}
	o := &b.opts
	if o.ClientInfo.Name == "" {
		o.ClientInfo = mcp.Implementation{Name: "mcpkit-bridge", Version: "0.1.0"}
	}
	if o.Tasks > mcp.TaskRequired {
		return nil, fmt.Errorf("bridge: Options.Tasks: invalid TaskSupport %d", o.Tasks)
	}
	for name, t := range o.TaskTools {
		if t.Support > mcp.TaskRequired {
			return nil, fmt.Errorf("bridge: Options.TaskTools[%q]: invalid TaskSupport %d", name, t.Support)
		}
	}
	o.MaxSessions = setting("MaxSessions", o.MaxSessions, 16)
	o.MaxListenStreams = setting("MaxListenStreams", o.MaxListenStreams, 1024)
	o.LeaseWait = setting("LeaseWait", o.LeaseWait, 5*time.Second)
	o.HoldTimeout = setting("HoldTimeout", o.HoldTimeout, 60*time.Second)
	if ttl := o.Server.State.TTL; ttl > 0 && ttl < o.HoldTimeout {
		o.HoldTimeout = ttl
	}
	o.Gather = setting("Gather", o.Gather, 20*time.Millisecond)
	o.MinBackoff = setting("MinBackoff", o.MinBackoff, 100*time.Millisecond)
	o.MaxBackoff = setting("MaxBackoff", o.MaxBackoff, 30*time.Second)
	if o.PingInterval != mcp.Off {
		o.PingInterval = setting("PingInterval", o.PingInterval, 10*time.Second)
	}
	o.PingTimeout = setting("PingTimeout", o.PingTimeout, 5*time.Second)
	b.log = o.Logger
	if b.log == nil {
		b.log = o.Server.Logger
	}
	if b.log == nil {
		b.log = slog.Default()
	}
	b.id = newID()
	sctx, cancel := context.WithCancel(context.Background())
	b.life, b.stop = sctx, cancel
	probe, err := b.connect(ctx, mcp.ClientCapabilities{}, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("bridge: starting the backend: %w", err)
	}
	so := o.Server
	if so.Info.Name == "" {
		if info := probe.ServerInfo(); info != nil {
			so.Info = *info
		}
	}
	so.Provider = b
	if o.Tasks != mcp.TaskNone || len(o.TaskTools) > 0 {
		o.TaskTools = maps.Clone(o.TaskTools)
		so.Provider = taskBridge{b}
	}
	so.Listen.Observe = listenhook.Chain(so.Listen.Observe, b.observeListen)
	so.ReadyChecks = append(append([]mcp.ReadyChecker(nil), so.ReadyChecks...), mcp.ReadyFunc(b.ready))
	b.srv = mcp.NewServer(&so)
	b.front.Store(b.srv)
	b.pool = newPool(b)
	b.adopt(probe)
	if b.modern.Load() && o.Isolate == IsolateNone {
		if f := b.listFilter(); f.ToolsListChanged || f.PromptsListChanged || f.ResourcesListChanged {
			// The bridge's own list-changes stream (listen.go), which
			// Close stops. New waits for its acknowledgement (at most
			// LeaseWait), so that no list change after New is missed; a
			// stream not acknowledged by then goes on trying.
			st, _, err := b.hold(streamKey{key: emptyKey})
			if err == nil {
				t := time.NewTimer(o.LeaseWait)
				select {
				case <-st.ready:
					err = st.err
				case <-t.C:
					err = errors.New("not acknowledged within LeaseWait")
				case <-ctx.Done():
					err = ctx.Err()
				}
				t.Stop()
			}
			if err != nil {
				b.log.Warn("bridge: opening the backend's list-changes stream failed", "err", clip.String(err.Error(), 256))
			}
		}
	}
	go b.supervise(sctx, probe)
	return b, nil
}

// Server returns the front server: serve it over Streamable HTTP (it is an
// http.Handler) or stdio.
func (b *Bridge) Server() *mcp.Server { return b.srv }

// Close ends the backend sessions (their processes exit) and the
// supervision. Held calls are cancelled. It is safe to call more than once.
func (b *Bridge) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.notOK = errors.New("bridge: closed")
	probe := b.probe
	b.mu.Unlock()
	b.stop()
	<-b.stopped
	b.held.cancelAll()
	b.closeStreams()
	b.pool.closeAll()
	if probe != nil {
		probe.Close()
	}
	return nil
}

// ready is the bridge's readiness check: the probe succeeded, the last
// start succeeded, no restart backoff is running.
func (b *Bridge) ready(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.notOK
}

// adopt makes probe the bridge's probe session and advertises what the
// backend declared in it: its capabilities, instructions and (unless the
// operator named the front in Server.Info) its serverInfo, which a
// restarted backend may have changed.
func (b *Bridge) adopt(probe *client.Client) {
	caps := *probe.Capabilities()
	adv := mcp.ServerCapabilities{
		Tools:       caps.Tools,
		Prompts:     caps.Prompts,
		Completions: caps.Completions,
		Logging:     caps.Logging,
	}
	if caps.Resources != nil {
		// Subscriptions are relayed as the legacy resources/subscribe
		// (subscribe.go), or as a modern backend's listen streams
		// (listen.go).
		adv.Resources = &mcp.ResourcesCapability{ListChanged: caps.Resources.ListChanged,
			Subscribe: caps.Resources.Subscribe}
	}
	b.modern.Store(probe.Era() != mcp.EraLegacy)
	a := &mcp.Advertisement{Capabilities: adv, Instructions: probe.Instructions()}
	if b.opts.Server.Info.Name == "" {
		a.Info = probe.ServerInfo()
	}
	b.srv.Advertise(a)
	b.mu.Lock()
	b.probe, b.notOK = probe, nil
	b.mu.Unlock()
}

// supervise restarts the backend when the probe session ends, with
// backoff, until ctx ends.
func (b *Bridge) supervise(ctx context.Context, probe *client.Client) {
	defer close(b.stopped)
	for {
		var hung atomic.Bool
		go b.watch(probe, &hung, func() bool { return true })
		select {
		case <-ctx.Done():
			return
		case <-probe.Done():
		}
		reason := exitReason(probe)
		if hung.Load() {
			reason = b.hungReason()
		}
		b.log.Warn("bridge: the backend exited; restarting", "exit", reason)
		probe.Close()
		backoff := b.opts.MinBackoff
		for {
			b.mu.Lock()
			b.notOK = fmt.Errorf("bridge: the backend exited (%s); restarting", reason)
			b.mu.Unlock()
			c, err := b.connect(ctx, mcp.ClientCapabilities{}, nil)
			if err == nil {
				probe = c
				b.schemas.forget()
				b.adopt(c)
				for k := mcp.ToolsListChanged; k <= mcp.ResourcesListChanged; k++ {
					b.srv.NotifyListChanged(k) // a new backend may list other things
				}
				b.log.Info("bridge: the backend restarted")
				break
			}
			if ctx.Err() != nil {
				return
			}
			b.log.Warn("bridge: restarting the backend failed", "err", err, "retry_in", backoff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, b.opts.MaxBackoff)
		}
	}
}

// connect opens a backend session declaring caps; s, when not nil, is the
// session the backend's input requests are routed through.
func (b *Bridge) connect(ctx context.Context, caps mcp.ClientCapabilities, s *session) (*client.Client, error) {
	o := &b.opts
	co := &client.Options{
		ClientInfo:   o.ClientInfo,
		Eras:         o.Eras,
		Capabilities: &caps,
		NoCache:      true,
		Timeout:      -1, // the caller's context decides
		Logger:       b.log,
		Input: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			if s == nil {
				return nil, errNoCaller
			}
			return s.ask(ctx, method, params)
		},
		OnNotification: func(n *client.Notification) {
			scope := ""
			if s != nil {
				scope = s.scope
			}
			b.onNotification(n, scope)
		},
		OnLog: func(m *client.LogMessage) {
			// On stdio a log message names no request: on a leased
			// session it belongs to the call holding the lease.
			if s != nil {
				s.mu.Lock()
				h := s.cur
				s.mu.Unlock()
				if h != nil {
					h.log(m)
					return
				}
			}
			b.log.Info("bridge: backend log message outside a call", "level", m.Level, "logger", clip.String(m.Logger, 256), "data", clip.String(string(m.Data), maxLogData))
		},
	}
	if len(o.Interceptors) > 0 {
		co.Interceptors = []client.Interceptor{b.intercept}
	}
	return client.Connect(ctx, o.Backend(), co)
}

// ownCall marks the context of a call the bridge makes on its own (a
// ping): Options.Interceptors do not see it.
type ownCall struct{}

// intercept runs a backend call through Options.Interceptors, unless the
// bridge makes it on its own.
func (b *Bridge) intercept(ctx context.Context, c *client.Call, next client.CallHandler) client.Outcome {
	if ctx.Value(ownCall{}) != nil {
		return next(ctx, c)
	}
	h := next
	ics := b.opts.Interceptors
	for i := len(ics) - 1; i >= 0; i-- {
		icp, nx := ics[i], h
		h = func(ctx context.Context, c *client.Call) client.Outcome { return icp(ctx, c, nx) }
	}
	return h(ctx, c)
}

// maxLogData bounds what the bridge logs of a backend's log message
// outside a call: the backend chooses its size.
const maxLogData = 4 << 10

// errNoCaller answers a backend's input request that no call can carry.
var errNoCaller = &mcp.Error{Code: -32603, Message: "no caller to ask: the request arrived outside a call whose caller declared the capability"}

// onNotification relays the backend's list changes and resource updates
// to the front's listeners, on every replica through the Bus: those of the
// principal whose session reported them when scope (its ID) is not empty.
func (b *Bridge) onNotification(n *client.Notification, scope string) {
	srv := b.front.Load()
	if srv == nil {
		// The front does not exist yet: nobody has listed or listens, so
		// there is nothing to tell.
		return
	}
	switch n.Method {
	case "notifications/tools/list_changed":
		b.schemas.forget()
		srv.NotifyChange(mcp.Change{Kind: mcp.ToolsListChanged, Scope: scope})
	case "notifications/prompts/list_changed":
		srv.NotifyChange(mcp.Change{Kind: mcp.PromptsListChanged, Scope: scope})
	case "notifications/resources/list_changed":
		srv.NotifyChange(mcp.Change{Kind: mcp.ResourcesListChanged, Scope: scope})
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(n.Params, &p) == nil && p.URI != "" {
			srv.NotifyChange(mcp.Change{Kind: mcp.ResourceUpdated, URI: p.URI, Scope: scope})
		}
	}
}

// exitReason describes how a backend session ended, without its stderr.
func exitReason(c *client.Client) string {
	if e, ok := c.ProcessExit(); ok {
		if e.Forced != "" {
			return "killed by " + e.Forced
		}
		if e.Code < 0 {
			return "killed by a signal"
		}
		return "exit status " + strconv.Itoa(e.Code)
	}
	return "the connection closed"
}

// setting resolves a numeric option that cannot be off.
func setting[T ~int | ~int64](name string, v, def T) T {
	if v < 0 {
		panic("bridge.New: Options." + name + " cannot be negative")
	}
	if v == 0 {
		return def
	}
	return v
}
