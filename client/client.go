package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	iclient "github.com/mcpkit/mcpkit/internal/client"
	"github.com/mcpkit/mcpkit/internal/clip"
	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// EraPreference says which eras Connect may settle on. The era it settled
// on is Client.Era, an mcp.Era.
type EraPreference uint8

// The era preferences.
const (
	// AnyEra, the zero value, lets Connect find the server's era out.
	AnyEra EraPreference = iota
	// ModernOnly fails against a legacy server: only servers that answer
	// server/discover and take per-request _meta (revision 2026-07-28 and
	// later) are spoken to.
	ModernOnly
	// LegacyOnly initializes without probing, at mcp.LegacyVersion (or at
	// Options.Version), as a client written before 2026-07-28 does.
	LegacyOnly
)

// String returns "any", "modern-only" or "legacy-only".
func (p EraPreference) String() string {
	switch p {
	case ModernOnly:
		return "modern-only"
	case LegacyOnly:
		return "legacy-only"
	case AnyEra:
		return "any"
	}
	return "EraPreference(" + strconv.Itoa(int(p)) + ")"
}

// Errors a call can end with besides *mcp.Error, *ToolError and
// *ProtocolError. Match them with errors.Is.
var (
	// ErrTimeout: no answer within the request's timeout.
	ErrTimeout = iclient.ErrTimeout
	// ErrClosed: the server closed the connection (or its process exited)
	// before answering, or the client was closed.
	ErrClosed = iclient.ErrClosed
	// ErrTooLarge: the server sent a message over the 16 MiB bound.
	ErrTooLarge = iclient.ErrTooLarge
)

// TransportError is a failure to reach the server at all: a refused
// connection, a process that would not start, a broken pipe. Nothing the
// server said is in it. Match it with errors.As.
type TransportError struct {
	// Op says what failed: "POST https://example.com/mcp", "starting
	// my-server", "writing to the server".
	Op string
	// Err is the cause (a *net.OpError, an *exec.Error, io.ErrClosedPipe).
	Err error
}

func (e *TransportError) Error() string { return "client: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// publicError turns the internal transport error anywhere in err's chain
// into a *TransportError, keeping the rest of the message; other errors
// are returned as they are.
func publicError(err error) error {
	var te *iclient.TransportError
	if err == nil || !errors.As(err, &te) {
		return err
	}
	pub := &TransportError{Op: te.Op, Err: te.Err}
	if err == error(te) {
		return pub
	}
	return &wrapped{pub: pub, orig: err}
}

// wrapped is an error whose chain holds a *TransportError besides the
// original chain (whose other errors errors.Is still finds).
type wrapped struct {
	pub  *TransportError
	orig error
}

func (w *wrapped) Error() string   { return w.orig.Error() }
func (w *wrapped) Unwrap() []error { return []error{w.pub, w.orig} }

// ElicitHandler asks the user for input (form mode: fill in
// p.RequestedSchema; URL mode: open p.URL). For an accepted form, values
// the user left out get the schema's defaults before they are sent.
type ElicitHandler func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)

// SamplingHandler generates a message with the client's language model.
type SamplingHandler func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)

// RootsHandler lists the client's roots.
type RootsHandler func(ctx context.Context) ([]mcp.Root, error)

// InputHandler answers one input request of a server raw: method is
// "elicitation/create", "sampling/createMessage" or "roots/list", params
// the request's params as the server sent them; the result is sent as it
// is. See Options.Input.
type InputHandler func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

// Options configures Connect. The zero value is usable.
type Options struct {
	// ClientInfo identifies the client (in _meta, or in initialize).
	// Default: name "mcpkit-client".
	ClientInfo mcp.Implementation
	// Version pins the protocol version: a modern one is the only one
	// server/discover is sent at, a legacy one (2025-11-25 and earlier)
	// makes the client initialize at it without probing. Default: the
	// newest, with negotiation.
	Version string
	// Eras says which eras Connect may settle on. Default AnyEra: the
	// server's era is found out (server/discover first).
	Eras EraPreference
	// Timeout bounds every request whose context has no deadline.
	// Default 60s; Off (any negative value) means no bound, the context
	// alone decides.
	Timeout time.Duration
	// ConnectTimeout bounds each request of the negotiation; a stdio
	// server silent to server/discover for that long is taken for a
	// legacy one. Default 10s. It cannot be off: Connect treats a
	// negative value as the default.
	ConnectTimeout time.Duration

	// Elicit, Sample and Roots answer the server's requests for input, in
	// either era. Each one set declares the matching client capability.
	Elicit ElicitHandler
	Sample SamplingHandler
	Roots  RootsHandler
	// ElicitURL declares URL-mode elicitation besides form mode (Elicit
	// must be set).
	ElicitURL bool
	// Capabilities, when set, is declared exactly as it is, in place of
	// what Elicit, Sample, Roots, ElicitURL, Extensions and Tasks imply: it
	// can say roots.listChanged, sampling.tools and sampling.context,
	// elicitation form and url, and any extension. The handlers still
	// answer (Tasks still makes CallTool wait for a task); a request the
	// client declared but has no handler for gets an error.
	Capabilities *mcp.ClientCapabilities
	// Input, when set, answers every input request (elicitation/create,
	// sampling/createMessage and roots/list, a legacy server's real
	// requests and a modern server's input_required rounds alike) with the
	// params and result passed verbatim, in place of Elicit, Sample and
	// Roots; it declares no capability (set Capabilities). A *mcp.Error it
	// returns is sent to a legacy server as that error. It is called
	// concurrently, one goroutine per request.
	Input InputHandler
	// MaxInputRounds bounds the input_required rounds of one request.
	// Default 10.
	MaxInputRounds int
	// Extensions are declared in the client capabilities.
	Extensions map[string]json.RawMessage
	// Tasks declares the tasks extension: the server may then run a tool
	// call as a task, which CallTool waits for and StartTool returns.
	Tasks bool

	// Cache, when set, is the cache the client shares with other clients;
	// by default each client has its own (of DefaultCacheEntries results).
	// NoCache set disables caching.
	Cache   *Cache
	NoCache bool
	// CacheCredential names the authorization context of the client's
	// requests (a user, a token's subject): results with cacheScope
	// "private" are shared only between clients of a shared Cache with the
	// same value, and with none when it is empty.
	CacheCredential string

	// OnNotification gets every notification no request or Listen took,
	// list changes included.
	OnNotification func(n *Notification)
	// OnLog gets log messages (notifications/message) that no request's
	// WithLog took.
	OnLog func(m *LogMessage)
	// Interceptors wrap each call the client makes, the first outermost:
	// tracing, metrics, logging. See Interceptor.
	Interceptors []Interceptor

	// Logger gets the client's warnings (a dropped tool, say). Default:
	// slog.Default().
	Logger *slog.Logger
}

// Client is a connection to one server whose era and protocol version
// are settled. It is safe for concurrent use.
type Client struct {
	sess   *iclient.Session
	ev     clientEra // the era seam (era.go)
	opts   Options
	caps   mcp.ClientCapabilities
	meta   json.RawMessage // client capabilities, encoded
	info   *mcp.Implementation
	scaps  *mcp.ServerCapabilities
	instr  string
	supVer []string
	log    *slog.Logger

	cache *clientCache // nil: no caching
	http  bool         // Streamable HTTP: requests carry the MCP headers
	// legacy is set once Connect settled on the legacy era (read by the
	// connection's reading goroutines).
	legacy atomic.Bool

	prefixOnce sync.Once
	prefix     []byte // the encoded start of every modern _meta
	headers    headerCache

	// life ends when the client is closed (Listen streams end with it).
	life context.Context
	kill context.CancelFunc
	// done is Done's channel, made once.
	doneOnce sync.Once
	done     <-chan struct{}

	mu       sync.Mutex
	progress map[string]*callState // progress token -> request
	// headerTools holds the input schemas of listed tools with
	// x-mcp-header parameters.
	headerTools map[string]json.RawMessage
	// subs are the open subscriptions/listen streams by request id (raw
	// JSON), legacySubs the legacy listeners.
	subs       map[string]func(*jsonrpc.Message)
	legacySubs map[string]func(*jsonrpc.Message) bool // reports whether it took the notification
	nextTok    int64
	// subMu serializes the legacy resources/subscribe and
	// resources/unsubscribe calls, and guards uriRefs: how many legacy
	// Listen streams hold each subscribed URI.
	subMu   sync.Mutex
	uriRefs map[string]int
	closed  bool
}

// Connect opens t and negotiates a protocol version with the server behind
// it, as the package documentation describes.
func Connect(ctx context.Context, t Transport, opts *Options) (*Client, error) {
	c := &Client{progress: map[string]*callState{}, headerTools: map[string]json.RawMessage{}, subs: map[string]func(*jsonrpc.Message){}, legacySubs: map[string]func(*jsonrpc.Message) bool{}}
	c.life, c.kill = context.WithCancel(context.Background())
	if opts != nil {
		c.opts = *opts
	}
	o := &c.opts
	if o.ClientInfo.Name == "" {
		o.ClientInfo = mcp.Implementation{Name: "mcpkit-client", Version: "0.1.0"}
	}
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.MaxInputRounds <= 0 {
		o.MaxInputRounds = 10
	}
	c.log = o.Logger
	if c.log == nil {
		c.log = slog.Default()
	}
	version := o.Version
	switch o.Eras {
	case LegacyOnly:
		if version == "" {
			version = mcp.LegacyVersion
		}
		if !protocol.IsLegacy(version) {
			return nil, fmt.Errorf("client: Eras is LegacyOnly but Version %q is not a legacy version", version)
		}
	case ModernOnly:
		if version != "" && protocol.IsLegacy(version) {
			return nil, fmt.Errorf("client: Eras is ModernOnly but Version %q is a legacy version", version)
		}
	case AnyEra:
	default:
		return nil, fmt.Errorf("client: unknown Eras %v", o.Eras)
	}
	if version != "" && !slices.Contains(protocol.ModernVersions, version) && !protocol.IsLegacy(version) {
		return nil, fmt.Errorf("client: unknown protocol version %q", version)
	}
	if !o.NoCache {
		cache := o.Cache
		if cache == nil {
			cache = NewCache(0)
		}
		server := ""
		if ht, ok := t.(*HTTPTransport); ok {
			server = ht.URL
		}
		c.cache = newClientCache(cache, server, o.CacheCredential)
	}
	c.caps = c.declaredCapabilities()
	c.meta, _ = json.Marshal(&c.caps)

	conn, err := t.open(ctx, version != "" && protocol.IsLegacy(version))
	if err != nil {
		return nil, publicError(err)
	}
	iopts := &iclient.Options{
		Version:      version,
		ClientInfo:   mustMarshal(&o.ClientInfo),
		Timeout:      o.ConnectTimeout,
		Capabilities: c.meta,
	}
	if ht, ok := t.(*HTTPTransport); ok {
		iopts.HTTP = ht.httpOptions()
	}
	// The handler must be in place before the handshake: a legacy server
	// may ping or ask for input at once.
	c.install(conn)
	sess, err := iclient.Connect(ctx, conn, iopts)
	if err != nil {
		conn.Close()
		return nil, connectError(err, conn)
	}
	if sess.Conn() != conn {
		c.install(sess.Conn()) // the HTTP+SSE fallback
	}
	c.sess, c.ev = sess, eraFor(sess)
	c.legacy.Store(c.ev.era() == mcp.EraLegacy)
	_, c.http = sess.Conn().(*iclient.HTTPConn)
	c.ev.started(c)
	if o.Eras == ModernOnly && c.ev.era() != mcp.EraModern {
		sess.Close()
		return nil, errors.New("client: the server is a legacy one and Eras is ModernOnly")
	}
	if o.Version != "" && !protocol.IsLegacy(o.Version) && sess.Version() != o.Version {
		sess.Close()
		return nil, fmt.Errorf("client: the server does not serve the pinned version %s (it speaks %s)", o.Version, sess.Version())
	}
	d := sess.Server
	if d.Info != nil {
		c.info = new(mcp.Implementation)
		if err := json.Unmarshal(d.Info, c.info); err != nil {
			// The name, title and version are strings (the negotiation
			// checked them); an optional member is not what the
			// specification says. Keep what is sound.
			c.log.Warn("client: ignoring malformed optional members of the server's serverInfo", "reason", err.Error())
			var core struct{ Name, Title, Version string }
			json.Unmarshal(d.Info, &core)
			*c.info = mcp.Implementation{Name: core.Name, Title: core.Title, Version: core.Version}
		}
	}
	c.scaps = &mcp.ServerCapabilities{}
	if len(d.Capabilities) > 0 {
		if err := json.Unmarshal(d.Capabilities, c.scaps); err != nil {
			sess.Close()
			return nil, &ProtocolError{Method: "server/discover", Msg: "the server's capabilities are malformed: " + err.Error()}
		}
	}
	c.instr = d.Instructions
	c.supVer = d.SupportedVersions
	iclient.HandOver(ctx, sess) // for `mcpkit discover --check` (internal/client/bridge.go)
	return c, nil
}

func (c *Client) install(conn iclient.Conn) {
	if h, ok := conn.(iclient.Handled); ok {
		h.SetHandler(&iclient.Handler{Notify: c.onNotify, Request: c.onServerRequest})
	}
}

func (c *Client) declaredCapabilities() mcp.ClientCapabilities {
	var caps mcp.ClientCapabilities
	if c.opts.Capabilities != nil {
		caps = *c.opts.Capabilities
		caps.Extensions = maps.Clone(caps.Extensions)
		return caps
	}
	if c.opts.Elicit != nil {
		caps.Elicitation = &mcp.ElicitationCapability{Form: json.RawMessage("{}")}
		if c.opts.ElicitURL {
			caps.Elicitation.URL = json.RawMessage("{}")
		}
	}
	if c.opts.Sample != nil {
		caps.Sampling = &mcp.SamplingCapability{}
	}
	if c.opts.Roots != nil {
		caps.Roots = &mcp.RootsCapability{}
	}
	if len(c.opts.Extensions) > 0 || c.opts.Tasks {
		caps.Extensions = map[string]json.RawMessage{}
		for k, v := range c.opts.Extensions {
			caps.Extensions[k] = v
		}
		if c.opts.Tasks {
			caps.Extensions[mcp.TasksExtension] = json.RawMessage("{}")
		}
	}
	return caps
}

// ServerInfo returns the server's self-reported identity, every field it
// sent (description, icons and websiteUrl too), or nil when it sent none.
// The value is shared: treat it as read-only.
func (c *Client) ServerInfo() *mcp.Implementation { return c.info }

// Capabilities returns what the server advertised (never nil).
func (c *Client) Capabilities() *mcp.ServerCapabilities { return c.scaps }

// Instructions returns the server's guidance for models, or "".
func (c *Client) Instructions() string { return c.instr }

// Era returns the server's era: mcp.EraModern or mcp.EraLegacy.
func (c *Client) Era() mcp.Era { return c.ev.era() }

// Transport names the transport the client speaks over:
// mcp.TransportStreamableHTTP, mcp.TransportSSE (the deprecated 2024-11-05
// HTTP+SSE transport a legacy server may fall back to) or
// mcp.TransportStdio; "" for a MemoryTransport.
func (c *Client) Transport() mcp.Transport { return mcp.Transport(c.sess.Conn().Transport()) }

// ProtocolVersion returns the version the client and server speak.
func (c *Client) ProtocolVersion() string { return c.sess.Version() }

// SupportedVersions returns the versions a modern server listed in
// server/discover; nil for a legacy server.
func (c *Client) SupportedVersions() []string { return slices.Clone(c.supVer) }

// ClientCapabilities returns the capabilities the client declares.
func (c *Client) ClientCapabilities() mcp.ClientCapabilities { return c.caps }

// Close ends the connection: a legacy HTTP session is deleted, a stdio
// server's stdin is closed, and the process is waited for and then killed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.kill()
	return c.sess.Close()
}

// ProtocolError says that the server broke the protocol: no JSON-RPC
// response, or a result of the wrong shape.
type ProtocolError struct {
	// Method is the request's method.
	Method string
	// Status is the HTTP status (0 on other transports).
	Status int
	// Msg says what was wrong.
	Msg string
}

func (e *ProtocolError) Error() string {
	s := "client: " + e.Method + ": " + e.Msg
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	return s
}

// ToolError is returned with a tool result whose isError is set: the tool
// ran and failed, and Result's content says how.
type ToolError struct {
	Name   string
	Result *mcp.CallToolResult
}

func (e *ToolError) Error() string {
	msg := ""
	for _, ct := range e.Result.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			msg = t.Text
			break
		}
	}
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	if msg == "" {
		return "client: tool " + e.Name + " failed"
	}
	return "client: tool " + e.Name + " failed: " + msg
}

// MaxErrorMessage bounds the message of an error a server answers with, as
// the client returns it (an *mcp.Error): the server chooses its size, and
// the message goes on to logs and terminals (a bridge logs its backend's).
// A longer message is cut at a rune boundary and ends with "… (N bytes in
// all)"; invalid UTF-8 is replaced. The error's data is kept as sent.
const MaxErrorMessage = 4 << 10

// boundMessage bounds a server's error message to MaxErrorMessage bytes.
func boundMessage(m string) string {
	if len(m) <= MaxErrorMessage {
		return clip.String(m, MaxErrorMessage)
	}
	tail := " (" + strconv.Itoa(len(m)) + " bytes in all)"
	return clip.String(m, MaxErrorMessage-len(tail)) + tail
}

// rpcError converts a JSON-RPC error to an *mcp.Error; Data keeps the raw
// data.
func rpcError(e *jsonrpc.Error) *mcp.Error {
	me := &mcp.Error{Code: e.Code, Message: boundMessage(e.Message)}
	if len(e.Data) > 0 {
		me.Data = json.RawMessage(append([]byte(nil), e.Data...))
	}
	return me
}

// mustMarshal encodes a value that always encodes.
func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("client: " + err.Error())
	}
	return b
}
