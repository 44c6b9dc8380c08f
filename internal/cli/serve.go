package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/internal/demo"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/oauth"
)

// shutdownTimeout bounds how long in-flight requests may run after a
// signal.
const shutdownTimeout = 10 * time.Second

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveContext(ctx, args, stdin, stdout, stderr)
}

// authFlags are the flags that put the HTTP server behind an
// authorization server.
type authFlags struct {
	issuer, jwks, audience, scopes string
	whoamiScopes                   string
	protectDiscover                bool
}

func (a *authFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.issuer, "auth-issuer", "", "require OAuth access tokens (JWT) issued by the authorization server with issuer `URL`")
	fs.StringVar(&a.jwks, "auth-jwks", "", "`URL` of the issuer's JWK Set (default: discovered from the issuer's metadata)")
	fs.StringVar(&a.audience, "auth-audience", "", "canonical `URI` of this server that tokens must name in aud (default: the served URL)")
	fs.StringVar(&a.scopes, "auth-scopes", "", "`SCOPES` (comma- or space-separated) every request needs; advertised as scopes_supported")
	fs.BoolVar(&a.protectDiscover, "auth-protect-discover", false, "require a token for server/discover too (default: public)")
	fs.StringVar(&a.whoamiScopes, "auth-whoami-scopes", "", "`SCOPES` the whoami tool needs on top of --auth-scopes (a call without them gets 403 insufficient_scope: try step-up authorization)")
}

func (a *authFlags) any() bool {
	return a.issuer != "" || a.jwks != "" || a.audience != "" || a.scopes != "" || a.protectDiscover || a.whoamiScopes != ""
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
	scopes := splitScopes(a.scopes)
	return &mcp.AuthOptions{
		Verifier:             v,
		Resource:             aud,
		AuthorizationServers: []string{a.issuer},
		RequiredScopes:       scopes,
		DiscoverRequiresAuth: a.protectDiscover,
	}, v, nil
}

// serveContext runs `mcpkit serve` until ctx is cancelled.
func serveContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpkit serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "`HOST:PORT` to listen on (port 0 picks a free port)")
	path := fs.String("path", "/mcp", "URL `PATH` of the MCP endpoint")
	stdio := fs.Bool("stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP")
	keyFile := fs.String("state-key-file", "", "`FILE` holding the keys that seal requestState, one base64 key per line, the first one sealing\n(default: $"+mcp.StateKeysEnv+", else a random per-process key; replicas need a shared key)")
	redisURL := fs.String("redis", "", "share change notifications, tasks and legacy sessions between replicas through Redis at `URL` (redis://HOST:PORT/DB); only in the full build (full/cmd/mcpkit)")
	logRequests := fs.Bool("log-requests", false, "log one line per request to stderr: method, name, duration, outcome (never arguments or tokens)")
	keepAlive := fs.Duration("keep-alive", 15*time.Second, "interval of SSE keep-alive comments on idle streams (0: none)")
	fixtures := fs.Bool("fixtures", false, "also serve the fixtures of the MCP conformance suite (the test_* tools, prompts and resources); scripts/test.sh turns it on")
	modernOnly := fs.Bool("modern-only", false, "serve revision 2026-07-28 only: no initialize, no legacy sessions")
	maxSubs := fs.Int("max-subscriptions", 0, "cap on the subscriptions/listen streams open at once; past it a listen request gets 503\n(0: the lower of a limit derived from the process's open-file limit and one derived from its memory, logged at start; -1: no cap)")
	maxInFlight := fs.Int("max-inflight", 0, "cap on the HTTP requests being handled at once; past it a request gets 503 with Retry-After before its body is read\n(0: the library default, 1024; -1: no cap); size it as the calls/s to sustain times the latency to allow")
	var auth authFlags
	auth.register(fs)
	var skillsOpts skillsFlags
	skillsOpts.register(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: mcpkit serve [flags]\n\nRuns the mcpkit demo MCP server.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	opts := &mcp.ServerOptions{Logger: log, HTTP: mcp.HTTPOptions{KeepAlive: *keepAlive}}
	opts.Legacy.Disable = *modernOnly
	switch {
	case *maxSubs > 0 || *maxSubs == mcp.Off:
		opts.Listen.MaxSubscriptions = *maxSubs
		if !*stdio {
			log.Info("listen streams capped by --max-subscriptions", "max_subscriptions", *maxSubs)
		}
	case *maxSubs == 0:
		l := deriveSubscriptionLimit(fileLimit(), memoryLimit())
		opts.Listen.MaxSubscriptions = l.N
		if !*stdio { // a stdio server has one client: its log stays quiet
			log.Info("listen streams capped", "max_subscriptions", l.N, "derived", l.describe())
		}
	default:
		fmt.Fprintf(stderr, "mcpkit serve: --max-subscriptions %d: want a positive cap, 0 (derived) or -1 (no cap)\n", *maxSubs)
		return 2
	}
	switch {
	case *maxInFlight > 0 || *maxInFlight == mcp.Off:
		opts.Quotas.MaxInFlightRequests = *maxInFlight
		if !*stdio {
			log.Info("in-flight requests capped by --max-inflight", "max_inflight", *maxInFlight)
		}
	case *maxInFlight < 0:
		fmt.Fprintf(stderr, "mcpkit serve: --max-inflight %d: want a positive cap, 0 (the default) or -1 (no cap)\n", *maxInFlight)
		return 2
	}
	newDemo := demo.NewPlain
	if *fixtures {
		newDemo = demo.New
	}
	if *keepAlive <= 0 {
		opts.HTTP.KeepAlive = mcp.Off
	}
	keys, err := stateKeys(*keyFile)
	if err != nil {
		fmt.Fprintf(stderr, "mcpkit serve: state keys: %v\n", err)
		return 2
	}
	opts.State.Keys = keys
	if *redisURL != "" {
		if build.Redis == nil {
			fmt.Fprintln(stderr, "mcpkit serve: --redis: this build of mcpkit has no Redis support, which keeps go-redis out of the core module; use the full build, from the nested module: go build github.com/mcpkit/mcpkit/full/cmd/mcpkit")
			return 2
		}
		closeRedis, err := build.Redis(*redisURL, log, opts)
		if err != nil {
			fmt.Fprintf(stderr, "mcpkit serve: --redis: %v\n", err)
			return 2
		}
		defer closeRedis()
	}

	stopTelemetry, err := observe(ctx, *logRequests, stderr, log, opts)
	if err != nil {
		fmt.Fprintf(stderr, "mcpkit serve: telemetry: %v\n", err)
		return 2
	}
	if stopTelemetry != nil {
		defer func() {
			tctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := stopTelemetry(tctx); err != nil {
				log.Warn("telemetry: flushing at exit", "err", err)
			}
		}()
	}

	if *stdio {
		if auth.any() {
			fmt.Fprintln(stderr, "mcpkit serve: the --auth-* flags apply to HTTP only; a stdio server takes its credentials from its environment")
			return 2
		}
		s := newDemo(opts)
		if err := skillsOpts.apply(s, log); err != nil {
			fmt.Fprintf(stderr, "mcpkit serve: %v\n", err)
			return 2
		}
		// Requests are served on their own context, so that on a signal
		// listen streams first end with their graceful result
		// (Server.Shutdown), and only then is everything else cancelled.
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
		log.Info("serving MCP on stdio", "server", demo.Name, "versions", s.SupportedVersions())
		if err := s.ServeStdio(sctx, stdin, stdout); err != nil {
			log.Error("stdio", "err", err)
			return 1
		}
		return 0
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Error("listen", "err", err)
		return 1
	}
	defer ln.Close()
	url := "http://" + ln.Addr().String() + *path
	if auth.any() {
		if ta, ok := ln.Addr().(*net.TCPAddr); ok && ta.IP.IsUnspecified() && auth.audience == "" {
			fmt.Fprintf(stderr, "mcpkit serve: listening on %s, so the server's own URL is unknown; give it with --auth-audience\n", ln.Addr())
			return 2
		}
		ao, v, err := auth.options(url)
		if err != nil {
			fmt.Fprintf(stderr, "mcpkit serve: %v\n", err)
			return 2
		}
		opts.Auth = ao
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := v.Refresh(rctx); err != nil {
			log.Warn("the issuer's signing keys are not available yet; tokens are checked once they are", "err", err)
		}
		cancel()
	}
	s := newDemo(opts)
	if sc := splitScopes(auth.whoamiScopes); len(sc) > 0 {
		demo.AddWhoami(s, sc...)
	}
	if err := skillsOpts.apply(s, log); err != nil {
		fmt.Fprintf(stderr, "mcpkit serve: %v\n", err)
		return 2
	}
	hs := s.NewHTTPServer(*addr, *path)
	hs.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	if opts.Auth != nil {
		log.Info("authorization required", "issuer", opts.Auth.AuthorizationServers[0], "audience", opts.Auth.Resource,
			"scopes", opts.Auth.RequiredScopes, "metadata", s.ProtectedResourceMetadataPath())
	}
	log.Info("listening", "url", url, "versions", s.SupportedVersions())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		log.Error("serve", "err", err)
		return 1
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	// Listen streams and tasks first: http.Server.Shutdown waits for
	// active handlers, a listen handler runs until its stream ends, and
	// task handlers run detached from any request.
	if err := s.Shutdown(sctx); err != nil {
		log.Warn("shutdown: listen streams or tasks still running", "err", err)
	}
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("shutdown", "err", err)
		return 1
	}
	return 0
}

// stateKeys reads the requestState keys from file, or from the
// environment when file is empty (nil when neither has any).
func stateKeys(file string) ([][]byte, error) {
	if file == "" {
		v := os.Getenv(mcp.StateKeysEnv)
		if strings.TrimSpace(v) == "" {
			return nil, nil
		}
		keys, err := mcp.ParseStateKeys(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mcp.StateKeysEnv, err)
		}
		return keys, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	keys, err := mcp.ParseStateKeys(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return keys, nil
}
