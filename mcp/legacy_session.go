package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/jsonrpc"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// SessionState is what a legacy session remembers between requests: what
// the client said in initialize, and what it set since. Values handed to
// and returned by a SessionStore are never modified afterwards; a change is
// stored as a new value.
type SessionState struct {
	// ProtocolVersion is the negotiated legacy revision.
	ProtocolVersion string `json:"protocolVersion"`
	// ClientInfo and ClientCapabilities are what initialize declared.
	ClientInfo         Implementation     `json:"clientInfo"`
	ClientCapabilities ClientCapabilities `json:"clientCapabilities"`
	// LogLevel is the level set by logging/setLevel, "" until then.
	LogLevel LogLevel `json:"logLevel,omitempty"`
	// Subscriptions are the resource URIs of resources/subscribe.
	Subscriptions []string `json:"subscriptions,omitempty"`
	// Owner is the ID of the authenticated caller that opened the session
	// (Principal.ID), on servers with authentication; only that caller may
	// use the session.
	Owner string `json:"owner,omitempty"`
}

// ErrSessionNotFound is returned by a SessionStore for an id it does not
// know or that expired.
var ErrSessionNotFound = errors.New("mcp: session not found")

// SessionStore keeps the state of legacy Streamable HTTP sessions, so that a
// shared store can let several replicas serve one session. Live parts of a
// session (open SSE streams, requests in flight) stay in the process that
// holds them. Implementations must be safe for concurrent use.
type SessionStore interface {
	// Load returns the state of session id and renews its idle timer, or
	// ErrSessionNotFound when the id is unknown or the session expired.
	Load(ctx context.Context, id string) (*SessionState, error)
	// Store saves the state of session id, creating the session if needed,
	// and renews its idle timer.
	Store(ctx context.Context, id string, st *SessionState) error
	// Delete ends session id. Deleting an unknown id is not an error.
	Delete(ctx context.Context, id string) error
}

// DefaultSessionIdleTimeout is the default idle timeout of legacy sessions
// (ServerOptions.Legacy.SessionIdleTimeout) and of a MemorySessionStore.
const DefaultSessionIdleTimeout = 30 * time.Minute

// MemorySessionStore is a SessionStore in the memory of one process: it
// serves a single server (or several Servers in one process), and is the
// default of ServerOptions.Legacy.SessionStore. A session expires when it
// was neither loaded nor stored for the idle timeout. Use
// NewMemorySessionStore; it is safe for concurrent use.
type MemorySessionStore struct {
	idle time.Duration

	mu        sync.Mutex
	m         map[string]memoryEntry
	lastSweep time.Time
}

// NewMemorySessionStore returns an empty store whose sessions expire after
// idle without use (DefaultSessionIdleTimeout when idle is zero; never when
// it is Off).
func NewMemorySessionStore(idle time.Duration) *MemorySessionStore {
	return &MemorySessionStore{idle: offSetting(idle, DefaultSessionIdleTimeout), m: map[string]memoryEntry{}}
}

type memoryEntry struct {
	st      *SessionState
	expires time.Time // zero: never
}

func (m *MemorySessionStore) deadline(now time.Time) time.Time {
	if m.idle <= 0 {
		return time.Time{}
	}
	return now.Add(m.idle)
}

// Load implements SessionStore.
func (m *MemorySessionStore) Load(ctx context.Context, id string) (*SessionState, error) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[id]
	if !ok {
		return nil, ErrSessionNotFound
	}
	if !e.expires.IsZero() && now.After(e.expires) {
		delete(m.m, id)
		return nil, ErrSessionNotFound
	}
	e.expires = m.deadline(now)
	m.m[id] = e
	return e.st, nil
}

// Store implements SessionStore.
func (m *MemorySessionStore) Store(ctx context.Context, id string, st *SessionState) error {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[id] = memoryEntry{st: st, expires: m.deadline(now)}
	// Sweep expired sessions now and then, so that sessions nobody asks
	// about again do not stay forever.
	if m.idle > 0 && now.Sub(m.lastSweep) > m.idle/4 {
		m.lastSweep = now
		for k, e := range m.m {
			if now.After(e.expires) {
				delete(m.m, k)
			}
		}
	}
	return nil
}

// Delete implements SessionStore.
func (m *MemorySessionStore) Delete(ctx context.Context, id string) error {
	m.mu.Lock()
	delete(m.m, id)
	m.mu.Unlock()
	return nil
}

// session is one legacy client: an HTTP session, or a stdio connection
// that sent initialize. It holds the live parts that a SessionStore does
// not: streams, server-to-client requests awaiting answers, and requests in
// flight.
type session struct {
	srv *Server
	id  string // the Mcp-Session-Id; "" on stdio
	// quotaKey is the client that opened the session, whose
	// MaxSessionsPerClient quota it counts against until it closes.
	quotaKey string
	// ctx ends when the session does; handlers of its requests derive
	// from it.
	ctx    context.Context
	cancel context.CancelFunc

	st          atomic.Pointer[SessionState] // nil until initialize
	initialized atomic.Bool                  // notifications/initialized arrived
	nextReq     atomic.Int64                 // ids of server-to-client requests

	// out writes a server-initiated message on stdio; nil on HTTP, where
	// the standalone GET stream carries them.
	out func(msg []byte)

	mu          sync.Mutex
	closed      bool
	pending     map[int64]chan clientReply
	inflight    map[string]context.CancelFunc // HTTP requests, for notifications/cancelled
	streams     map[int64]*sseStream          // HTTP streams by number
	nextStream  int64
	standalone  *sseStream // the GET stream, number 0
	undelivered []int64    // complete streams kept for a resumption, oldest first
	active      int        // open connections and requests in flight
	lastSeen    time.Time
	updates     int64 // local state changes, so that a refresh from the store never undoes one
	// observed are the end functions of ListenOptions.Observe for the
	// resources/subscribe of this session served in this process, by URI.
	observed map[string]func()
}

func newSession(s *Server, id string) *session {
	ctx, cancel := context.WithCancel(context.Background())
	ss := &session{srv: s, id: id, ctx: ctx, cancel: cancel,
		pending: map[int64]chan clientReply{}, lastSeen: time.Now()}
	if id != "" {
		ss.inflight = map[string]context.CancelFunc{}
		ss.streams = map[int64]*sseStream{}
		ss.standalone = &sseStream{sess: ss, num: 0, standalone: true}
		ss.nextStream = 1
	}
	return ss
}

// newSessionID returns a fresh session id: 128 random bits, base64url, so
// visible ASCII only.
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	return b64.EncodeToString(b[:])
}

// state returns the session's state, or nil before initialize.
func (ss *session) state() *SessionState { return ss.st.Load() }

// begin records the state of a successful initialize; it reports false if
// the session was already initialized.
func (ss *session) begin(st *SessionState) bool {
	return ss.st.CompareAndSwap(nil, st)
}

// unbegin takes back the state st that begin recorded, when the initialize
// that recorded it failed after all (an interceptor refused it).
func (ss *session) unbegin(st *SessionState) { ss.st.CompareAndSwap(st, nil) }

func (ss *session) markInitialized() { ss.initialized.Store(true) }

// update changes the session's state and saves it in the store.
func (ss *session) update(ctx context.Context, change func(st *SessionState)) {
	ss.mu.Lock()
	cur := ss.st.Load()
	if cur == nil {
		ss.mu.Unlock()
		return
	}
	next := *cur
	change(&next)
	ss.st.Store(&next)
	ss.updates++
	ss.mu.Unlock()
	if ss.id != "" && ss.srv.legacy != nil {
		if err := ss.srv.legacy.sessions.store.Store(ctx, ss.id, &next); err != nil {
			ss.srv.log.Error("mcp: saving session state", "err", err)
		}
	}
}

// observe tells ListenOptions.Observe of the session's resources/subscribe
// of uri (sub) or resources/unsubscribe (!sub), as it is told of a listen
// stream's resourceSubscriptions: a subscribe that the server advertises
// (resources.subscribe) and that this process has not observed for the
// session yet is observed with a filter naming uri alone, and its end
// function runs at the unsubscribe, or when the session ends. An error of
// Observe refuses the subscribe. Calls for one session may overlap: the
// first subscribe of a URI observes it, the others wait for nothing.
func (ss *session) observe(ctx context.Context, x *exchange, uri string, sub bool) error {
	obs := ss.srv.listen.observe
	if obs == nil {
		return nil
	}
	if !sub {
		ss.mu.Lock()
		end := ss.observed[uri]
		delete(ss.observed, uri)
		ss.mu.Unlock()
		if end != nil {
			end()
		}
		return nil
	}
	if r := x.snap.caps.Resources; r == nil || !r.Subscribe {
		return nil
	}
	ss.mu.Lock()
	_, seen := ss.observed[uri]
	if !seen && !ss.closed {
		if ss.observed == nil {
			ss.observed = map[string]func(){}
		}
		ss.observed[uri] = nil // taken: a concurrent subscribe does not observe it again
	}
	closed := ss.closed
	ss.mu.Unlock()
	if seen || closed {
		return nil
	}
	info, err := x.requestInfo()
	if err != nil {
		return err
	}
	end, err := obs(ctx, info, SubscriptionFilter{ResourceSubscriptions: []string{uri}})
	ss.mu.Lock()
	_, still := ss.observed[uri]
	if err != nil || !still || ss.closed {
		// Refused, or unsubscribed or ended meanwhile.
		if still && err != nil {
			delete(ss.observed, uri)
		}
		ss.mu.Unlock()
		if err == nil && end != nil {
			end()
		}
		return err
	}
	if end == nil {
		end = func() {}
	}
	ss.observed[uri] = end
	ss.mu.Unlock()
	return nil
}

// touch records activity.
func (ss *session) touch() {
	ss.mu.Lock()
	ss.lastSeen = time.Now()
	ss.mu.Unlock()
}

// begun and ended count open connections and requests in flight; a session
// with any is never idle.
func (ss *session) begun() {
	ss.mu.Lock()
	ss.active++
	ss.mu.Unlock()
}

func (ss *session) ended() {
	ss.mu.Lock()
	ss.active--
	ss.lastSeen = time.Now()
	ss.mu.Unlock()
}

// idleFor returns how long the session has been idle, or 0 if it is busy.
func (ss *session) idleFor(now time.Time) time.Duration {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.active > 0 {
		return 0
	}
	return now.Sub(ss.lastSeen)
}

// close ends the session: its requests are cancelled, its streams closed,
// and the server-to-client requests awaiting answers fail.
func (ss *session) close() {
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return
	}
	ss.closed = true
	if ss.quotaKey != "" {
		ss.srv.quota.release(quotaSessions, ss.quotaKey)
	}
	streams := make([]*sseStream, 0, len(ss.streams)+1)
	for _, st := range ss.streams {
		streams = append(streams, st)
	}
	if ss.standalone != nil {
		streams = append(streams, ss.standalone)
	}
	cancels := make([]context.CancelFunc, 0, len(ss.inflight))
	for _, cancel := range ss.inflight {
		cancels = append(cancels, cancel)
	}
	observed := ss.observed
	ss.observed = nil
	ss.mu.Unlock()
	for _, end := range observed {
		if end != nil { // nil: still being observed (observe ends it)
			end()
		}
	}
	ss.cancel()
	for _, cancel := range cancels {
		cancel() // the HTTP requests in flight (trackRequest)
	}
	for _, st := range streams {
		st.shut()
	}
}

// sendServerMessage sends a message that relates to no request
// (list_changed, resources/updated): on stdio as a line, on HTTP on the
// standalone GET stream (kept for a replay when no GET is open).
func (ss *session) sendServerMessage(msg []byte) {
	if ss.out != nil {
		ss.out(msg)
		return
	}
	if ss.standalone != nil {
		ss.standalone.Notify(msg)
	}
}

// trackRequest registers an HTTP request in flight, whose context cancel
// ends, for notifications/cancelled and the end of the session (close); it
// reports false when the id is already in flight. In a session that has
// ended, the request is cancelled at once.
func (ss *session) trackRequest(id jsonrpc.ID, cancel context.CancelFunc) bool {
	ss.mu.Lock()
	if _, dup := ss.inflight[string(id.Raw())]; dup {
		ss.mu.Unlock()
		return false
	}
	ss.inflight[string(id.Raw())] = cancel
	ss.active++
	closed := ss.closed
	ss.mu.Unlock()
	if closed {
		cancel()
	}
	return true
}

func (ss *session) untrackRequest(id jsonrpc.ID) {
	ss.mu.Lock()
	delete(ss.inflight, string(id.Raw()))
	ss.active--
	ss.lastSeen = time.Now()
	ss.mu.Unlock()
}

// cancelRequest handles notifications/cancelled on HTTP (stdio connections
// track their own requests).
func (ss *session) cancelRequest(params []byte) {
	v, ok := jsonscan.Lookup(params, "requestId")
	if !ok {
		return
	}
	var rid jsonrpc.ID
	if rid.UnmarshalJSON(v) != nil {
		return
	}
	ss.mu.Lock()
	cancel := ss.inflight[string(rid.Raw())]
	ss.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// clientReply is a client's response to a server-to-client request.
type clientReply struct {
	result json.RawMessage
	err    *jsonrpc.Error
}

// clientError is a legacy client's error response to a request the server
// sent it (elicitation/create, sampling/createMessage, roots/list), or the
// failure to get one (timeout, session ended).
type clientError struct {
	// Method is the method of the server's request.
	Method string
	// Code and Message come from the client's error response; Code is 0
	// when there was none.
	Code    int
	Message string
}

func (e *clientError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("the client answered %s with error %d: %s", e.Method, e.Code, e.Message)
	}
	return "the client did not answer " + e.Method + ": " + e.Message
}

// callID is call with the request's id, n, already taken from
// ss.nextReq.
func (ss *session) callID(ctx context.Context, send func(msg []byte), n int64, method string, params []byte) (json.RawMessage, error) {
	ch := make(chan clientReply, 1)
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return nil, &clientError{Method: method, Message: "the session has ended"}
	}
	ss.pending[n] = ch
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		delete(ss.pending, n)
		ss.mu.Unlock()
	}()
	id := jsonrpc.IntID(n)
	send(jsonrpc.AppendRequest(nil, id, method, params))

	timeout := 5 * time.Minute
	if ss.srv.legacy != nil {
		timeout = ss.srv.legacy.clientTimeout
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	var why string
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, &clientError{Method: method, Code: r.err.Code, Message: r.err.Message}
		}
		return r.result, nil
	case <-t.C:
		why = "no answer within " + timeout.String()
	case <-ctx.Done():
		why = "the request was cancelled"
	case <-ss.ctx.Done():
		return nil, &clientError{Method: method, Message: "the session has ended"}
	}
	p := []byte(`{"requestId":`)
	p = strconv.AppendInt(p, n, 10)
	p = append(p, `,"reason":`...)
	p = wire.AppendString(p, why)
	p = append(p, '}')
	send(jsonrpc.AppendNotification(nil, "notifications/cancelled", p))
	return nil, &clientError{Method: method, Message: why}
}

// deliver routes a client's response to the server-to-client request it
// answers. Responses to unknown ids (late, or never sent) are dropped.
func (ss *session) deliver(msg *jsonrpc.Message) {
	n, err := strconv.ParseInt(string(msg.ID.Raw()), 10, 64)
	if err != nil {
		return
	}
	ss.mu.Lock()
	ch := ss.pending[n]
	delete(ss.pending, n)
	ss.mu.Unlock()
	if ch == nil {
		return
	}
	r := clientReply{err: msg.Error}
	if msg.Error == nil {
		r.result = bytes.Clone(msg.Result)
	}
	ch <- r
}

// sessions is the registry of the live legacy sessions of one Server.
type sessions struct {
	s     *Server
	store SessionStore
	idle  time.Duration
	max   int

	mu        sync.Mutex
	live      map[string]*session   // HTTP sessions by id
	local     map[*session]struct{} // stdio connections in the legacy era
	lastSweep time.Time
}

func newSessions(s *Server, store SessionStore, idle time.Duration, max int) *sessions {
	return &sessions{s: s, store: store, idle: idle, max: max,
		live: map[string]*session{}, local: map[*session]struct{}{}, lastSweep: time.Now()}
}

// errTooManySessions is returned by add past MaxSessions.
var errTooManySessions = errors.New("too many sessions")

// add registers a freshly initialized HTTP session.
func (m *sessions) add(ctx context.Context, ss *session) error {
	m.s.legacy.subscribeBus(m.s)
	m.sweep(false)
	m.mu.Lock()
	if len(m.live) >= m.max {
		m.mu.Unlock()
		m.sweep(true)
		m.mu.Lock()
		if len(m.live) >= m.max {
			m.mu.Unlock()
			return errTooManySessions
		}
	}
	m.live[ss.id] = ss
	m.mu.Unlock()
	if err := m.store.Store(ctx, ss.id, ss.state()); err != nil {
		m.mu.Lock()
		delete(m.live, ss.id)
		m.mu.Unlock()
		return err
	}
	return nil
}

// lookup finds the live session id of caller p (nil without
// authentication), renewing it; it returns ErrSessionNotFound when the
// session is unknown, expired, ended, or belongs to another caller.
func (m *sessions) lookup(ctx context.Context, id string, p *Principal) (*session, error) {
	m.mu.Lock()
	ss := m.live[id]
	m.mu.Unlock()
	var updates int64
	if ss != nil {
		now := time.Now()
		ss.mu.Lock()
		updates = ss.updates
		ss.lastSeen = now // touch, in the same critical section
		ss.mu.Unlock()
	}
	st, err := m.store.Load(ctx, id)
	if err != nil {
		if ss != nil && errors.Is(err, ErrSessionNotFound) {
			m.drop(ss)
		}
		return nil, err
	}
	if st.Owner != "" && (p == nil || p.ID() != st.Owner) {
		return nil, ErrSessionNotFound // do not tell others the session exists
	}
	if ss == nil {
		// The store knows the session but this process does not hold it
		// (another replica created it, or this process restarted): serve
		// it from its stored state.
		ss = newSession(m.s, id) // lastSeen now
		ss.st.Store(st)
		ss.initialized.Store(true)
		m.mu.Lock()
		if cur := m.live[id]; cur != nil {
			ss = cur
		} else {
			m.live[id] = ss
		}
		m.mu.Unlock()
	} else if ss.st.Load() != st {
		// With a shared store, another replica may have changed the
		// session (logging/setLevel, resources/subscribe): serve the
		// stored state, unless this process changed it since the Load.
		ss.mu.Lock()
		if ss.updates == updates {
			ss.st.Store(st)
		}
		ss.mu.Unlock()
	}
	return ss, nil
}

// remove ends session id of caller p (DELETE); it reports whether it was
// known.
func (m *sessions) remove(ctx context.Context, id string, p *Principal) bool {
	ss, err := m.lookup(ctx, id, p)
	if err != nil {
		return false
	}
	m.drop(ss)
	if err := m.store.Delete(ctx, id); err != nil {
		m.s.log.Error("mcp: deleting session", "err", err)
	}
	return true
}

func (m *sessions) drop(ss *session) {
	m.mu.Lock()
	if m.live[ss.id] == ss {
		delete(m.live, ss.id)
	}
	m.mu.Unlock()
	ss.close()
}

// sweep forgets the live sessions idle in this process for longer than the
// idle timeout. It runs now and then, when sessions are added, unless
// forced. It leaves the store alone: with a shared store another replica
// may be serving the session, and the store expires idle sessions itself.
func (m *sessions) sweep(force bool) {
	now := time.Now()
	m.mu.Lock()
	if !force && now.Sub(m.lastSweep) < m.idle/4 {
		m.mu.Unlock()
		return
	}
	m.lastSweep = now
	var idle []*session
	for _, ss := range m.live {
		if ss.idleFor(now) > m.idle {
			idle = append(idle, ss)
		}
	}
	m.mu.Unlock()
	for _, ss := range idle {
		m.drop(ss)
	}
}

// addLocal and removeLocal register stdio connections in the legacy era,
// so that broadcasts reach them.
func (m *sessions) addLocal(ss *session) {
	m.s.legacy.subscribeBus(m.s)
	m.mu.Lock()
	m.local[ss] = struct{}{}
	m.mu.Unlock()
}

func (m *sessions) removeLocal(ss *session) {
	m.mu.Lock()
	delete(m.local, ss)
	m.mu.Unlock()
	ss.close()
}

// broadcast sends msg to every initialized session for which want says
// yes. It does not block on clients.
func (m *sessions) broadcast(want func(ss *session, st *SessionState) bool, msg []byte) {
	m.mu.Lock()
	all := make([]*session, 0, len(m.live)+len(m.local))
	for _, ss := range m.live {
		all = append(all, ss)
	}
	for ss := range m.local {
		all = append(all, ss)
	}
	m.mu.Unlock()
	for _, ss := range all {
		if st := ss.state(); st != nil && want(ss, st) {
			ss.sendServerMessage(msg)
		}
	}
}

// newStdioSession returns the session of a stdio connection that sent
// initialize; write sends a line to the client.
func (s *Server) newStdioSession(write func(msg []byte)) *session {
	ss := newSession(s, "")
	ss.out = write
	s.legacy.sessions.addLocal(ss)
	return ss
}
