package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/mcpkit/mcpkit/internal/protocol"
)

const defaultTimeout = 10 * time.Second

// Options configures Connect. The zero value is usable.
type Options struct {
	// Version is the preferred protocol version, sent in the first
	// server/discover. Default: the newest modern version. A legacy
	// version (2025-11-25 and earlier) makes Connect act as a legacy
	// client: it sends initialize at that version without probing.
	Version string
	// ClientInfo identifies the client in _meta and initialize: an
	// encoded mcp.Implementation, sent as it is (every field of it). Nil
	// sends none in _meta.
	ClientInfo json.RawMessage
	// Timeout bounds each request, the probe included: a stdio server
	// that does not answer server/discover within it is taken for
	// legacy. Default 10s.
	Timeout time.Duration
	// Capabilities is the client capabilities object declared in
	// initialize and, by default, in every modern request's _meta. Nil
	// declares none ({}).
	Capabilities json.RawMessage
	// HTTP configures the HTTP+SSE connection that the legacy fallback
	// may open (the Streamable HTTP connection is configured by whoever
	// made it).
	HTTP *HTTPOptions
}

// Step is one request Connect sent while telling the server's era, and
// what its answer meant.
type Step struct {
	// Request says what was sent: "server/discover at 2026-07-28", ...
	Request string `json:"request"`
	// Answer summarizes what came back.
	Answer string `json:"answer"`
	// Meaning is the conclusion drawn from it.
	Meaning string `json:"meaning"`
	// Status is the HTTP status of the answer; 0 on stdio or when
	// nothing came back.
	Status int `json:"status,omitempty"`
	// Latency is the round trip; zero when nothing came back.
	Latency time.Duration `json:"-"`
}

// FailKind classifies why Connect failed.
type FailKind int

// Kinds of failure.
const (
	// Unreachable: nothing answered (connection refused, command not
	// found, no answer to any request within the timeout).
	Unreachable FailKind = iota + 1
	// NotMCP: something answered, but not as an MCP server of either era.
	NotMCP
	// Incompatible: an MCP server, but no protocol version both sides
	// speak, or it refused every handshake this client can offer.
	Incompatible
)

func (k FailKind) String() string {
	switch k {
	case Unreachable:
		return "unreachable"
	case NotMCP:
		return "not MCP"
	case Incompatible:
		return "incompatible"
	}
	return "failed"
}

// ConnectError is why Connect failed, with the steps it took.
type ConnectError struct {
	Kind  FailKind
	Msg   string
	Steps []Step
	Err   error
}

func (e *ConnectError) Error() string {
	if e.Err != nil && e.Msg == "" {
		return e.Err.Error()
	}
	return e.Msg
}

func (e *ConnectError) Unwrap() error { return e.Err }

// prober runs one Connect.
type prober struct {
	conn      Conn
	opts      Options
	steps     []Step
	first     *Reply
	sawModern bool // a recognized modern error came back
	answered  bool // anything came back at all
}

// Connect tells the era of the server behind conn the way the
// specification describes, and returns a session at a version both
// sides speak. On success the session owns conn (or, after an HTTP+SSE
// fallback, a new connection, and conn is closed); on failure conn is
// left open for the caller to close.
//
// Modern probe: server/discover at the preferred version. A
// DiscoverResult means a modern server. A recognized modern error
// (-32020, -32021, -32022) also means a modern server: after -32022 the
// probe is retried at the newest mutually supported version from
// data.supported. Anything else (any other error, an HTTP 4xx without a
// modern error body, no answer within the timeout) means a legacy
// server: Connect sends initialize at the newest legacy version and, on
// HTTP, when that POST is refused with 400, 404 or 405, tries the
// 2024-11-05 HTTP+SSE transport (a GET whose first event is "endpoint").
func Connect(ctx context.Context, conn Conn, opts *Options) (*Session, error) {
	p := &prober{conn: conn}
	if opts != nil {
		p.opts = *opts
	}
	if p.opts.Timeout <= 0 {
		p.opts.Timeout = defaultTimeout
	}
	if p.opts.Version == "" {
		p.opts.Version = protocol.ModernVersions[0]
	}
	if protocol.IsLegacy(p.opts.Version) {
		s, err := p.legacy(ctx, p.opts.Version)
		var ce *ConnectError
		if errors.As(err, &ce) && ce.Kind == NotMCP {
			return nil, p.legacyClientHint(ctx, ce)
		}
		return s, err
	}
	return p.modern(ctx)
}

// legacyClientHint runs after a handshake that a legacy client attempted
// failed: if server/discover shows a modern server, the failure is the
// "legacy client, modern server" row of the compatibility matrix, and the
// error says so.
func (p *prober) legacyClientHint(ctx context.Context, ce *ConnectError) error {
	version := protocol.ModernVersions[0]
	what := "server/discover at " + version + " (to explain the failure)"
	r, err := p.roundTrip(ctx, p.conn, p.discoverRequest(version))
	if err != nil {
		p.step(what, nil, err, "no answer")
		ce.Steps = p.steps
		return ce
	}
	if res := r.Result(); res != nil {
		if d, perr := ParseDiscoverResult(res); perr == nil {
			p.step(what, r, nil, "a DiscoverResult: a modern server")
			return p.fail(Incompatible, nil, "%s; the server is modern (supported versions [%s]) and a legacy client at %s cannot talk to it", ce.Msg, ListSummary(d.SupportedVersions, " "), p.opts.Version)
		}
	}
	if IsModernError(r.RPCError()) {
		p.step(what, r, nil, "a modern error: a modern server")
		return p.fail(Incompatible, nil, "%s; the server is modern and a legacy client at %s cannot talk to it", ce.Msg, p.opts.Version)
	}
	p.step(what, r, nil, "not a modern server either")
	ce.Steps = p.steps
	return ce
}

func (p *prober) step(req string, r *Reply, err error, meaning string) {
	s := Step{Request: req, Meaning: meaning}
	if err != nil {
		s.Answer = err.Error()
	} else {
		s.Answer = r.Describe()
		s.Latency = r.Latency
		s.Status = r.Status
	}
	p.steps = append(p.steps, s)
}

func (p *prober) fail(kind FailKind, err error, format string, args ...any) error {
	return &ConnectError{Kind: kind, Msg: fmt.Sprintf(format, args...), Steps: p.steps, Err: err}
}

func (p *prober) roundTrip(ctx context.Context, conn Conn, req *Request) (*Reply, error) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	r, err := conn.RoundTrip(ctx, req)
	if r != nil {
		p.answered = true
		if p.first == nil {
			p.first = r
		}
		if IsModernError(r.RPCError()) {
			p.sawModern = true
		}
	}
	return r, err
}

// discoverRequest builds a modern server/discover request at version.
func (p *prober) discoverRequest(version string) *Request {
	s := NewModernSession(p.conn, version, p.opts.ClientInfo)
	s.caps = p.opts.Capabilities
	req, _ := s.request("server/discover", nil)
	return req
}

func (p *prober) modern(ctx context.Context) (*Session, error) {
	version := p.opts.Version
	// A version is tried at most twice: a server may reject the first
	// request once (a version it serves on a later try is still served).
	tried := map[string]int{}
	for {
		tried[version]++
		what := "server/discover at " + version
		r, err := p.roundTrip(ctx, p.conn, p.discoverRequest(version))
		switch {
		case errors.Is(err, ErrTimeout):
			p.step(what, nil, err, fmt.Sprintf("no answer within %s: a legacy server", p.opts.Timeout))
			return p.legacy(ctx, protocol.LegacyVersions[0])
		case errors.Is(err, ErrClosed):
			p.step(what, nil, err, "the server went away")
			return nil, p.fail(NotMCP, err, "the server closed the connection without answering server/discover: %v", err)
		case err != nil:
			p.step(what, nil, err, "unreachable")
			return nil, p.fail(Unreachable, err, "%v", err)
		}
		if res := r.Result(); res != nil {
			d, perr := ParseDiscoverResult(res)
			if perr != nil {
				p.step(what, r, nil, "not a DiscoverResult ("+perr.Error()+"): a legacy server")
				return p.legacy(ctx, protocol.LegacyVersions[0])
			}
			if slices.Contains(d.SupportedVersions, version) {
				p.step(what, r, nil, "a DiscoverResult: a modern server")
				s := NewModernSession(p.conn, version, p.opts.ClientInfo)
				s.timeout = p.opts.Timeout
				s.caps = p.opts.Capabilities
				s.Server, s.Steps, s.Latency, s.FirstReply = *d, p.steps, r.Latency, p.first
				return s, nil
			}
			// A DiscoverResult whose supportedVersions leave out the
			// version asked for: select a mutually supported one.
			next := mutualVersion(d.SupportedVersions)
			switch {
			case next == "":
				p.step(what, r, nil, "a DiscoverResult with no version in common")
				return nil, p.fail(Incompatible, nil, "no protocol version in common: the server supports [%s], this client speaks %v", ListSummary(d.SupportedVersions, " "), allVersions())
			case protocol.IsLegacy(next):
				p.step(what, r, nil, fmt.Sprintf("a DiscoverResult without %s; the newest version in common, %s, is a legacy one", version, next))
				return p.legacy(ctx, next)
			case tried[next] > 0:
				p.step(what, r, nil, "a DiscoverResult that leaves out the version it was asked at")
				return nil, p.fail(Incompatible, nil, "the server's supportedVersions [%s] leave out %s, which it was asked at", ListSummary(d.SupportedVersions, " "), next)
			}
			p.step(what, r, nil, "a DiscoverResult without "+version+": retrying at "+next)
			version = next
			continue
		}
		e := r.RPCError()
		if !IsModernError(e) {
			p.step(what, r, nil, "not a modern answer: a legacy server")
			return p.legacy(ctx, protocol.LegacyVersions[0])
		}
		if e.Code != protocol.CodeUnsupportedVersion {
			p.step(what, r, nil, "a modern error: a modern server, which rejected the probe")
			return nil, p.fail(Incompatible, nil, "the server is modern but rejected server/discover: %s", r.Describe())
		}
		var data struct {
			Supported []string `json:"supported"`
		}
		json.Unmarshal(e.Data, &data)
		next := mutualVersion(data.Supported)
		switch {
		case len(data.Supported) == 0:
			p.step(what, r, nil, "UnsupportedProtocolVersion without data.supported: a modern server")
			return nil, p.fail(Incompatible, nil, "the server does not support %s and did not say which versions it does", version)
		case next == "":
			p.step(what, r, nil, "UnsupportedProtocolVersion: a modern server, with no version in common")
			return nil, p.fail(Incompatible, nil, "no protocol version in common: the server supports [%s], this client speaks %v", ListSummary(data.Supported, " "), allVersions())
		case protocol.IsLegacy(next):
			p.step(what, r, nil, "UnsupportedProtocolVersion: the newest version in common, "+next+", is a legacy one")
			return p.legacy(ctx, next)
		case tried[next] > 1:
			p.step(what, r, nil, "UnsupportedProtocolVersion for a version the server lists as supported")
			return nil, p.fail(Incompatible, nil, "the server rejects %s although it lists it in data.supported [%s]", next, ListSummary(data.Supported, " "))
		}
		p.step(what, r, nil, "UnsupportedProtocolVersion: a modern server; retrying at "+next)
		version = next
	}
}

func allVersions() []string {
	return append(slices.Clone(protocol.ModernVersions), protocol.LegacyVersions...)
}

// mutualVersion returns the newest version in supported that this client
// speaks, or "".
func mutualVersion(supported []string) string {
	for _, v := range allVersions() {
		if slices.Contains(supported, v) {
			return v
		}
	}
	return ""
}

// legacy runs the initialize handshake at version.
func (p *prober) legacy(ctx context.Context, version string) (*Session, error) {
	s, r, err := p.initialize(ctx, p.conn, version)
	if s != nil || err != nil {
		return s, err
	}
	hc, ok := p.conn.(*HTTPConn)
	if !ok || r == nil || (r.Status != http.StatusBadRequest && r.Status != http.StatusNotFound && r.Status != http.StatusMethodNotAllowed) || r.Result() != nil {
		return nil, p.fail(p.initFailKind(), nil, "initialize at %s failed: %s", version, r.Describe())
	}
	// The 2024-11-05 HTTP+SSE transport.
	what := "GET " + hc.URL() + " (HTTP+SSE)"
	gctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	sc, err := DialSSE(gctx, hc.URL(), p.opts.HTTP)
	cancel()
	if err != nil {
		var ns *NotSSEError
		if errors.As(err, &ns) {
			p.step(what, ns.Reply, nil, "not an HTTP+SSE endpoint ("+ns.Reason+")")
		} else {
			p.step(what, nil, err, "no HTTP+SSE stream")
		}
		return nil, p.fail(p.initFailKind(), nil, "initialize at %s failed: %s; and %s is no HTTP+SSE endpoint either", version, r.Describe(), hc.URL())
	}
	p.steps = append(p.steps, Step{Request: what, Answer: "an endpoint event: " + sc.Endpoint(), Meaning: "a 2024-11-05 HTTP+SSE server"})
	s, r, err = p.initialize(ctx, sc, version)
	if s != nil {
		hc.Close()
		return s, nil
	}
	sc.Close()
	if err != nil {
		return nil, err
	}
	return nil, p.fail(p.initFailKind(), nil, "initialize over HTTP+SSE at %s failed: %s", version, r.Describe())
}

// initFailKind classifies a failed handshake: Incompatible when a
// recognized modern error showed an MCP server, NotMCP otherwise.
func (p *prober) initFailKind() FailKind {
	if p.sawModern {
		return Incompatible
	}
	return NotMCP
}

// initialize sends initialize and notifications/initialized over conn. It
// returns a session on success; (nil, reply, nil) when the server
// answered but not with an InitializeResult; and an error when nothing
// came back.
func (p *prober) initialize(ctx context.Context, conn Conn, version string) (*Session, *Reply, error) {
	what := "initialize at " + version
	if conn.Transport() == protocol.TransportSSE {
		what += " over HTTP+SSE"
	}
	caps := p.opts.Capabilities
	if len(caps) == 0 {
		caps = json.RawMessage("{}")
	}
	params, _ := json.Marshal(map[string]any{
		"protocolVersion": version,
		"capabilities":    caps,
		"clientInfo":      clientInfoOrEmpty(p.opts.ClientInfo),
	})
	r, err := p.roundTrip(ctx, conn, &Request{Method: "initialize", Params: params})
	if err != nil {
		kind := NotMCP
		switch {
		case errors.Is(err, ErrTimeout):
			p.step(what, nil, err, "no answer")
			if !p.answered {
				kind = Unreachable // silent to every request
			}
		case errors.Is(err, ErrClosed):
			p.step(what, nil, err, "the server went away")
		default:
			p.step(what, nil, err, "unreachable")
			kind = Unreachable
		}
		if kind == Unreachable && errors.Is(err, ErrTimeout) {
			return nil, nil, p.fail(kind, err, "the server answered nothing within %s, neither server/discover nor initialize", p.opts.Timeout)
		}
		return nil, nil, p.fail(kind, err, "%s: %v", what, err)
	}
	res := r.Result()
	if res == nil {
		p.step(what, r, nil, "no InitializeResult")
		return nil, r, nil
	}
	var ir initializeResult
	err = json.Unmarshal(res, &ir)
	if err == nil {
		ir.ServerInfo, err = checkServerInfo(ir.ServerInfo)
	}
	if err != nil || ir.ProtocolVersion == "" {
		p.step(what, r, nil, "not an InitializeResult")
		return nil, r, nil
	}
	if !protocol.IsLegacy(ir.ProtocolVersion) {
		p.step(what, r, nil, "an InitializeResult at "+ir.ProtocolVersion+", a version this client does not speak")
		return nil, nil, p.fail(Incompatible, nil, "the server answered initialize with protocol version %q, which this client does not speak", ir.ProtocolVersion)
	}
	p.step(what, r, nil, "an InitializeResult at "+ir.ProtocolVersion+": a legacy server")
	if hc, ok := conn.(*HTTPConn); ok {
		hc.setLegacy(r.Header.Get(protocol.HeaderSessionID), ir.ProtocolVersion)
	}
	nctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	nr, err := conn.Notify(nctx, &Request{Method: "notifications/initialized"})
	cancel()
	if err != nil {
		return nil, nil, p.fail(NotMCP, err, "notifications/initialized: %v", err)
	}
	if nr.Status >= 300 {
		p.steps = append(p.steps, Step{Request: "notifications/initialized", Answer: nr.Describe(), Meaning: "refused"})
		return nil, nil, p.fail(NotMCP, nil, "the server refused notifications/initialized: %s", nr.Describe())
	}
	s := &Session{conn: conn, era: protocol.EraLegacy, version: ir.ProtocolVersion, clientInfo: p.opts.ClientInfo, timeout: p.opts.Timeout, caps: p.opts.Capabilities}
	s.Server = ServerDescription{Info: ir.ServerInfo, Capabilities: ir.Capabilities, Instructions: ir.Instructions, Result: res}
	s.Steps, s.Latency, s.FirstReply = p.steps, r.Latency, p.first
	return s, r, nil
}

// clientInfoOrEmpty is the clientInfo of initialize, which requires one:
// info, or an empty name and version when the caller gave none.
func clientInfoOrEmpty(info json.RawMessage) json.RawMessage {
	if len(info) == 0 {
		return json.RawMessage(`{"name":"","version":""}`)
	}
	return info
}
