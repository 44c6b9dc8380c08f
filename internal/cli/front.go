package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/oauth"
)

// Front is the serving end that `mcpkit serve` shares with the commands
// that serve an *mcp.Server of their own (the coming `bridge` and
// `gateway`): where and how the server listens, its limits, its
// requestState keys, the protocol eras it speaks, its authorization, its
// request log, and, in the full build, Redis and OpenTelemetry.
//
// A command uses it in three steps, typically inside its Command.Flag:
//
//	front := registerFront(fs) // before fs.Parse: registers the front flags
//	// after fs.Parse, in the command's Runner:
//	opts, closeFront, err := front.ServerOptions(ctx, log, inv.stderr) // the options the flags make
//	defer closeFront()
//	return front.run(ctx, inv, log, "serve", opts, newServer) // Serve: listen or stdio, until ctx ends
//
// where newServer builds the command's own *mcp.Server from the finished
// options (Serve adds Auth from --auth-* once it knows the served URL, so
// the server is built inside Serve; its error ends Serve before anything
// is served). The errors are *exitError values carrying exitUsage for bad
// flags and exitFailed for a failure to listen or serve; inv.fail prints
// one and returns its exit code. serveFlags (serve.go) is the example.
//
// A Front is filled by fs.Parse and then read only; it is not safe for
// concurrent use while fs parses.
type Front struct {
	addr        string
	path        string
	stdio       bool
	keyFile     string
	redisURL    string
	logRequests bool
	keepAlive   time.Duration
	drain       time.Duration // --drain: the window /readyz answers 503 after a signal
	era         string
	maxSubs     int
	maxInFlight int
	auth        authFlags

	// backendInterceptors are the build's Telemetry for the calls a
	// bridge or gateway makes to its backends; ServerOptions sets them.
	backendInterceptors []client.Interceptor
}

// The values of --era.
const (
	eraBoth   = "both"
	eraModern = "modern"
	eraLegacy = "legacy"
)

// registerFront registers the front flags on fs and returns the Front
// that fs.Parse fills. The flags: --addr, --path,
// --stdio, --auth-issuer, --auth-jwks, --auth-audience, --auth-scopes,
// --auth-protect-discover, --state-key-file, --max-inflight, --drain,
// --max-subscriptions, --log-requests, --keep-alive, --era (with the
// hidden alias --modern-only) and --redis (used by the full build).
func registerFront(fs *flag.FlagSet) *Front {
	f := &Front{}
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "`HOST:PORT` to listen on (port 0 picks a free port)")
	fs.StringVar(&f.path, "path", "/mcp", "URL `PATH` of the MCP endpoint")
	fs.BoolVar(&f.stdio, "stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP")
	fs.StringVar(&f.era, "era", eraBoth, "the protocol `ERA` to serve: both (2026-07-28 and the legacy 2025-11-25 to 2024-11-05), modern (2026-07-28 only:\nno initialize, no legacy sessions) or legacy (as a server before 2026-07-28: no server/discover, nothing without a session)")
	fs.BoolFunc("modern-only", aliasUsage+"--era modern", func(string) error { f.era = eraModern; return nil })
	fs.StringVar(&f.keyFile, "state-key-file", "", "`FILE` holding the keys that seal requestState, one base64 key per line, the first one sealing\n(default: $"+mcp.StateKeysEnv+", else a random per-process key; replicas need a shared key)")
	fs.StringVar(&f.redisURL, "redis", "", "share change notifications, tasks and legacy sessions between replicas through Redis at `URL` (redis://HOST:PORT/DB); only in the full build (full/cmd/mcpkit)")
	fs.BoolVar(&f.logRequests, "log-requests", false, "log one line per request to stderr: method, name, duration, outcome (never arguments or tokens)")
	fs.DurationVar(&f.drain, "drain", defaultDrain, "after SIGTERM, how long /readyz answers 503 while requests are still served, before the listener closes;\nonly when /readyz was probed (0: no drain)")
	fs.DurationVar(&f.keepAlive, "keep-alive", 15*time.Second, "interval of SSE keep-alive comments on idle streams (0: none)")
	fs.IntVar(&f.maxSubs, "max-subscriptions", 0, "cap on the subscriptions/listen streams open at once; past it a listen request gets 503\n(0: the lower of a limit derived from the process's open-file limit and one derived from its memory, logged at start; -1: no cap)")
	fs.IntVar(&f.maxInFlight, "max-inflight", 0, "cap on the HTTP requests being handled at once; past it a request gets 503 with Retry-After before its body is read\n(0: the library default, 1024; -1: no cap); size it as the calls/s to sustain times the latency to allow")
	f.auth.register(fs)
	return f
}

// usageErrorf is an error of the command line: exit 2.
func (f *Front) usageErrorf(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// ServerOptions checks the front flags and returns the server options they
// make, logging to log: limits, keep-alive, requestState keys, eras, the
// request log and the build's telemetry, and Redis in the full build. The
// returned function releases Redis and flushes the telemetry; call it once
// the server has stopped (it is never nil). Auth is added by Serve.
func (f *Front) ServerOptions(ctx context.Context, log *slog.Logger, stderr io.Writer) (*mcp.ServerOptions, func(), error) {
	opts := &mcp.ServerOptions{Logger: log, HTTP: mcp.HTTPOptions{KeepAlive: f.keepAlive}}
	if f.keepAlive <= 0 {
		opts.HTTP.KeepAlive = mcp.Off
	}
	switch f.era {
	case eraBoth:
	case eraModern:
		opts.Legacy.Disable = true
	case eraLegacy:
		opts.Legacy.Only = true
	default:
		return nil, nil, f.usageErrorf("--era %q: want both, modern or legacy", f.era)
	}
	if f.stdio && f.auth.any() {
		return nil, nil, f.usageErrorf("the --auth-* flags apply to HTTP only; a stdio server takes its credentials from its environment")
	}
	if err := f.limits(opts, log); err != nil {
		return nil, nil, err
	}
	keys, err := stateKeys(f.keyFile)
	if err != nil {
		return nil, nil, f.usageErrorf("state keys: %v", err)
	}
	opts.State.Keys = keys
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	if f.redisURL != "" {
		if build.Redis == nil {
			return nil, nil, f.usageErrorf("--redis: this build of mcpkit has no Redis support, which keeps go-redis out of the core module; use the full build, from the nested module: go build github.com/mcpkit/mcpkit/full/cmd/mcpkit")
		}
		closeRedis, err := build.Redis(f.redisURL, log, opts)
		if err != nil {
			return nil, nil, f.usageErrorf("--redis: %v", err)
		}
		closers = append(closers, closeRedis)
	}
	backendICs, stopTelemetry, err := observe(ctx, f.logRequests, stderr, log, opts)
	if err != nil {
		closeAll()
		return nil, nil, f.usageErrorf("telemetry: %v", err)
	}
	f.backendInterceptors = backendICs
	if stopTelemetry != nil {
		closers = append(closers, func() {
			tctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := stopTelemetry(tctx); err != nil {
				log.Warn("telemetry: flushing at exit", "err", err)
			}
		})
	}
	return opts, closeAll, nil
}

// limits sets the caps of --max-subscriptions and --max-inflight in opts,
// logging the ones an HTTP server starts with (a stdio server has one
// client: its log stays quiet).
func (f *Front) limits(opts *mcp.ServerOptions, log *slog.Logger) error {
	switch {
	case f.maxSubs > 0 || f.maxSubs == mcp.Off:
		opts.Listen.MaxSubscriptions = f.maxSubs
		if !f.stdio {
			log.Info("listen streams capped by --max-subscriptions", "max_subscriptions", f.maxSubs)
		}
	case f.maxSubs == 0:
		l := deriveSubscriptionLimit(fileLimit(), memoryLimit())
		opts.Listen.MaxSubscriptions = l.N
		if !f.stdio {
			log.Info("listen streams capped", "max_subscriptions", l.N, "derived", l.describe())
		}
	default:
		return f.usageErrorf("--max-subscriptions %d: want a positive cap, 0 (derived) or -1 (no cap)", f.maxSubs)
	}
	switch {
	case f.maxInFlight > 0 || f.maxInFlight == mcp.Off:
		opts.Quotas.MaxInFlightRequests = f.maxInFlight
		if !f.stdio {
			log.Info("in-flight requests capped by --max-inflight", "max_inflight", f.maxInFlight)
		}
	case f.maxInFlight < 0:
		return f.usageErrorf("--max-inflight %d: want a positive cap, 0 (the default) or -1 (no cap)", f.maxInFlight)
	}
	return nil
}

// Serve serves until ctx is done: on stdin and stdout with --stdio, else
// on an HTTP listener at --addr and --path, with the Auth of --auth-* for
// the URL it serves added to opts. newServer builds the server from opts;
// an error it returns ends Serve before anything is served. After ctx is
// done, listen streams and tasks end first (mcp.Server.Shutdown), then the
// HTTP requests, within shutdownTimeout. Serve logs to opts.Logger.
func (f *Front) Serve(ctx context.Context, opts *mcp.ServerOptions, newServer func(*mcp.ServerOptions) (*mcp.Server, error), stdin io.Reader, stdout io.Writer) error {
	if f.stdio {
		s, err := newServer(opts)
		if err != nil {
			return err
		}
		return f.serveStdio(ctx, s, stdin, stdout, opts)
	}
	ln, url, err := f.listen()
	if err != nil {
		return err
	}
	defer ln.Close()
	if err := f.authorize(ctx, ln.Addr(), url, opts); err != nil {
		return err
	}
	probes := &readyProbes{}
	opts.ReadyChecks = append(opts.ReadyChecks, probes)
	s, err := newServer(opts)
	if err != nil {
		return err
	}
	return f.serveHTTP(ctx, s, ln, url, probes, opts)
}

// listen opens the listener of --addr and returns it with the URL served.
func (f *Front) listen() (net.Listener, string, error) {
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, "", &exitError{code: exitFailed, err: fmt.Errorf("listen: %w", err)}
	}
	return ln, "http://" + ln.Addr().String() + f.path, nil
}

// authorize adds the Auth of the --auth-* flags for the served url to
// opts, when any is given, and fetches the issuer's keys (a failure is
// logged: tokens are checked once the keys come).
func (f *Front) authorize(ctx context.Context, addr net.Addr, url string, opts *mcp.ServerOptions) error {
	if !f.auth.any() {
		return nil
	}
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsUnspecified() && f.auth.audience == "" {
		return f.usageErrorf("listening on %s, so the server's own URL is unknown; give it with --auth-audience", addr)
	}
	ao, v, err := f.auth.options(url)
	if err != nil {
		return f.usageErrorf("%v", err)
	}
	opts.Auth = ao
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := v.Refresh(rctx); err != nil {
		opts.Logger.Warn("the issuer's signing keys are not available yet; tokens are checked once they are", "err", err)
	}
	return nil
}

// serveHTTP serves s on ln until ctx is done, then shuts down.
// probes is one of opts.ReadyChecks; it wraps the server's handler.
func (f *Front) serveHTTP(ctx context.Context, s *mcp.Server, ln net.Listener, url string, probes *readyProbes, opts *mcp.ServerOptions) error {
	log := opts.Logger
	hs := s.NewHTTPServer(f.addr, f.path)
	probes.next = hs.Handler
	hs.Handler = probes
	hs.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	if ao := opts.Auth; ao != nil {
		log.Info("authorization required", "issuer", ao.AuthorizationServers[0], "audience", ao.Resource,
			"scopes", ao.RequiredScopes, "metadata", s.ProtectedResourceMetadataPath())
	}
	log.Info("listening", "url", url, "versions", s.SupportedVersions())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return &exitError{code: exitFailed, err: fmt.Errorf("serve: %w", err)}
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", shutdownTimeout, "drain", f.drain)
	if !drainAndShutdown(s, hs, probes, f.drain, log) {
		return &exitError{code: exitFailed, err: errors.New("shutdown: requests still running after the timeout")}
	}
	return nil
}

// serveStdio serves s on stdin and stdout until the input ends or ctx is
// done. Requests are served on their own context, so that on a signal
// listen streams first end with their graceful result (Server.Shutdown),
// and only then is everything else cancelled.
func (f *Front) serveStdio(ctx context.Context, s *mcp.Server, stdin io.Reader, stdout io.Writer, opts *mcp.ServerOptions) error {
	log := opts.Logger
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-ctx.Done():
		case <-sctx.Done():
			return
		}
		tctx, tcancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer tcancel()
		s.Shutdown(tctx)
		cancel()
	}()
	log.Info("serving MCP on stdio", "server", opts.Info.Name, "versions", s.SupportedVersions())
	if err := s.ServeStdio(sctx, stdin, stdout); err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("stdio: %w", err)}
	}
	return nil
}

// authFlags are the flags that put the HTTP server behind an
// authorization server.
type authFlags struct {
	issuer, jwks, audience, scopes string
	protectDiscover                bool
}

func (a *authFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.issuer, "auth-issuer", "", "require OAuth access tokens (JWT) issued by the authorization server with issuer `URL`")
	fs.StringVar(&a.jwks, "auth-jwks", "", "`URL` of the issuer's JWK Set (default: discovered from the issuer's metadata)")
	fs.StringVar(&a.audience, "auth-audience", "", "canonical `URI` of this server that tokens must name in aud (default: the served URL)")
	fs.StringVar(&a.scopes, "auth-scopes", "", "`SCOPES` (comma- or space-separated) every request needs; advertised as scopes_supported")
	fs.BoolVar(&a.protectDiscover, "auth-protect-discover", false, "require a token for server/discover too (default: public)")
}

func (a *authFlags) any() bool {
	return a.issuer != "" || a.jwks != "" || a.audience != "" || a.scopes != "" || a.protectDiscover
}

func splitScopes(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

// options returns the AuthOptions for a server served at url.
func (a *authFlags) options(url string) (*mcp.AuthOptions, *oauth.JWTVerifier, error) {
	if a.issuer == "" {
		return nil, nil, errors.New("the --auth-* flags need --auth-issuer")
	}
	aud := a.audience
	if aud == "" {
		aud = url
	}
	v, err := oauth.NewJWTVerifier(&oauth.JWTOptions{Issuer: a.issuer, JWKSURL: a.jwks, Audience: aud})
	if err != nil {
		return nil, nil, err
	}
	return &mcp.AuthOptions{
		Verifier:             v,
		Resource:             aud,
		AuthorizationServers: []string{a.issuer},
		RequiredScopes:       splitScopes(a.scopes),
		DiscoverRequiresAuth: a.protectDiscover,
	}, v, nil
}

// run serves as Serve does and turns its outcome into the command's exit
// code: a usage error is printed with the usage lines (exit 2), any other
// failure is logged under the command's name with its exit code from the
// table. serve, bridge and gateway end with it.
func (f *Front) run(ctx context.Context, inv *invocation, log *slog.Logger, name string, opts *mcp.ServerOptions, newServer func(*mcp.ServerOptions) (*mcp.Server, error)) int {
	err := f.Serve(ctx, opts, newServer, inv.stdin, inv.stdout)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.code == exitUsage {
		return inv.fail(err)
	}
	log.Error(name, "err", err)
	return exitCodeOf(err)
}
