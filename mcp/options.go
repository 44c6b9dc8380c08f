package mcp

import (
	"context"
	"strconv"
	"time"
)

// Off turns off a numeric setting of ServerOptions, of its groups or of a
// Resource that says it can be off (see ServerOptions for the convention).
// It is an untyped constant, so it fits int, int64 and time.Duration
// fields alike; any negative value means the same.
const Off = -1

// CacheOptions sets the caching hints (ttlMs, cacheScope) of
// server/discover and list results. Resource.CacheTTL and
// Resource.CacheScope override them for one resource's resources/read.
type CacheOptions struct {
	// TTL is the freshness hint (ttlMs). Default one hour. Off sends
	// ttlMs 0 ("immediately stale").
	TTL time.Duration
	// Scope is the cacheScope. Default CachePublic.
	Scope CacheScope
}

// HTTPOptions configures what only Streamable HTTP has. The message size
// limit, which binds stdio too, is ServerOptions.MaxMessageBytes.
type HTTPOptions struct {
	// AllowedOrigins lists the Origin header values accepted besides
	// loopback origins (http(s)://localhost, 127.0.0.1 and [::1] on any
	// port), which are always accepted. A request with an Origin header
	// that is not allowed gets 403. "*" allows every origin.
	AllowedOrigins []string
	// AllowedHosts lists Host header values (host or host:port) accepted
	// when the server is reached on a loopback address, besides loopback
	// names. It protects local servers from DNS rebinding. "*" disables
	// the check.
	AllowedHosts []string
	// MaxHeaderBytes bounds the total size of a request's header names and
	// values. Default 64 KiB. A request over it gets 431 with a JSON-RPC
	// error. (NewHTTPServer also sets net/http's own limit, at four times
	// this value, for requests too large to parse at all.) It cannot be
	// off.
	MaxHeaderBytes int
	// KeepAlive is the interval of the SSE comment lines (":") that keep
	// an idle response stream open through proxies and client timeouts:
	// listen streams, tool calls streaming progress, and legacy SSE
	// streams. Default 15 seconds. Off sends none.
	KeepAlive time.Duration
	// DisableListenParking keeps every subscriptions/listen stream in its
	// HTTP handler. By default, on HTTP/1.x, an open listen stream takes
	// its connection from net/http (http.Hijacker) and leaves the handler,
	// so that an idle stream costs about 2 KB instead of net/http's
	// goroutines and buffers (about 28 KB); its events are written by a
	// few shared goroutines and one ticker sends every keep-alive. A
	// parked stream's response ends when its connection closes
	// (Connection: close), it bypasses middleware that wraps the
	// ResponseWriter (status and byte counts, compression), http.Server's
	// Shutdown and Close do not end it (Server.Shutdown does), and a client
	// that went away is noticed at the next keep-alive or notification
	// rather than at once. HTTP/2 streams are never parked. Set this when
	// any of that matters more than memory.
	DisableListenParking bool
	// BodyTimeout bounds the time to read one request body, from the
	// moment the request is admitted: a body that has not arrived whole by
	// then gets 408 Request Timeout with the JSON-RPC error -32600, and
	// its in-flight slot and bytes are given back, so that clients that
	// trickle their bodies cannot hold MaxInFlightRequests. Default 30
	// seconds (4 MiB at about 1 Mbit/s). Off removes it. (A declared
	// Content-Length above MaxMessageBytes is refused with 413 before any
	// of the body is read.)
	BodyTimeout time.Duration
}

// ListenOptions configures subscriptions/listen, on every transport.
type ListenOptions struct {
	// Disable turns subscriptions/listen off: it answers -32601, and
	// capabilities advertise no listChanged or subscribe.
	Disable bool
	// MaxSubscriptions caps the subscriptions/listen streams open at once
	// on this server. Past it, a listen request gets error -32603 with
	// HTTP status 503 and data {"maxSubscriptions": N}. Default 10000.
	// Off removes the cap.
	MaxSubscriptions int
	// Observe, when not nil, is called as a subscriptions/listen stream
	// opens, after its limits and quotas are checked and before its
	// acknowledgement is sent, with the request's information and the
	// filter the acknowledgement grants (which it must not modify). An
	// error refuses the stream and is sent as the answer, as a handler's
	// is. The function it returns, when not nil, is called once when the
	// stream ends, however it ends. It is for servers whose notifications
	// come from elsewhere (the bridge package subscribes to the backend's
	// resources with it); it is called concurrently and must be safe for
	// that. ctx is the listen request's.
	//
	// It is also called for a legacy session's resources/subscribe of a
	// URI, when the server advertises resources.subscribe (a filter naming
	// that URI alone; once per session and URI), and the function it
	// returns when the session unsubscribes from the URI or ends. Sessions
	// shared between replicas (a SessionStore) are observed by the process
	// that served the subscribe: an unsubscribe served by another one
	// ends the observation only when the session ends here.
	Observe func(ctx context.Context, info *RequestInfo, granted SubscriptionFilter) (end func(), err error)
}

// StateOptions configures the sealing of the requestState that travels
// with input_required results and their retries (see docs/mrtr.md).
type StateOptions struct {
	// Keys are the secrets that seal the requestState: each at least
	// MinStateKeyLen random bytes. The first seals; all of them open, so a
	// key is rotated by putting a new one first and keeping the old one
	// until TTL has passed. Every replica behind a load balancer needs the
	// same keys. When empty, the keys come from the MCPKIT_STATE_KEYS
	// environment variable (see ParseStateKeys), and failing that from a
	// random per-process key. That is logged as a warning at start-up where
	// it is a real risk (NewHTTPServer on an address that is not
	// loopback-only, or a Bus, Legacy.SessionStore or Tasks.Store shared
	// with other processes), and otherwise once, at Info level, at the
	// first seal.
	Keys [][]byte
	// TTL is how long a requestState stays valid. Default 10 minutes. It
	// cannot be off.
	TTL time.Duration
}

// LegacyOptions configures the legacy era: the revisions 2025-11-25,
// 2025-06-18, 2025-03-26 and 2024-11-05, whose clients open with
// initialize, served by default on the same endpoint and stdio process as
// the modern revision (see docs/legacy.md). All legacy-only settings live
// here.
type LegacyOptions struct {
	// Disable turns the legacy era off: initialize is then answered with
	// -32601, Mcp-Session-Id headers are ignored and GET and DELETE get
	// 405, as revision 2026-07-28 says of a server that speaks only it.
	Disable bool
	// Only serves the legacy era alone, as a server written before
	// revision 2026-07-28 does: supportedVersions and SupportedVersions
	// list the legacy versions only, initialize opens a session even
	// when its params carry modern _meta, and anything else without a
	// session is refused the way such servers refuse it: on stdio, a
	// request before initialize gets -32601; over HTTP, a message without
	// Mcp-Session-Id gets 400 with a plain JSON-RPC error (-32600, no
	// modern data). Use it to stand in for an old server in tests and
	// migrations. The zero value serves both eras; Only with Disable is a
	// programmer error, which NewServer reports by panicking.
	Only bool
	// SessionStore keeps the state of legacy Streamable HTTP sessions.
	// Default: an in-memory store (NewMemorySessionStore).
	SessionStore SessionStore
	// SessionIdleTimeout ends a legacy HTTP session that saw no request and
	// had no open stream for this long. Default 30 minutes. It cannot be
	// off.
	SessionIdleTimeout time.Duration
	// MaxSessions bounds the live legacy HTTP sessions of this process; an
	// initialize past it gets 503. Default 10000. It cannot be off.
	MaxSessions int
	// ClientRequestTimeout bounds how long the server waits for a legacy
	// client to answer a request the server sent it (elicitation/create,
	// sampling/createMessage, roots/list). Default 5 minutes: elicitation
	// waits for a person. It cannot be off.
	ClientRequestTimeout time.Duration
}

// setting resolves a numeric setting that cannot be off: zero takes def,
// and a negative value is a programmer error, which NewServer reports by
// panicking with the setting's name.
func setting[T ~int | ~int64](name string, v, def T) T {
	if v < 0 {
		panic("mcp.NewServer: " + name + " cannot be off (it is " + strconv.FormatInt(int64(v), 10) + "); zero takes the default")
	}
	if v == 0 {
		return def
	}
	return v
}

// offSetting resolves a numeric setting that can be off: zero takes def,
// and Off (any negative value) gives Off.
func offSetting[T ~int | ~int64](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return Off
	}
	return v
}
