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
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/internal/demo"
	"github.com/mcpkit/mcpkit/mcp"
)

// shutdownTimeout bounds how long in-flight requests may run after a
// signal.
const shutdownTimeout = 10 * time.Second

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer, opts *Options) int {
	fs := flag.NewFlagSet("mcpkit serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "`HOST:PORT` to listen on (port 0 picks a free port)")
	path := fs.String("path", "/mcp", "URL `PATH` of the MCP endpoint")
	stdio := fs.Bool("stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP")
	redisURL := fs.String("redis", "", "carry change notifications between replicas through Redis at `URL` (redis://HOST:PORT/DB); builds with Redis support only")
	keepAlive := fs.Duration("keep-alive", 15*time.Second, "interval of SSE keep-alive comments on idle streams (0 or less: none)")
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
	so := &mcp.ServerOptions{Logger: log, KeepAlive: *keepAlive}
	if *keepAlive <= 0 {
		so.KeepAlive = -1
	}
	if *redisURL != "" {
		if opts.Redis == nil {
			fmt.Fprintln(stderr, "mcpkit serve: --redis: this build of mcpkit has no Redis support (it keeps go-redis out of the core module); use the build of the nested module: go build github.com/mcpkit/mcpkit/redis/cmd/mcpkit")
			return 2
		}
		bus, closeBus, err := opts.Redis(*redisURL, log)
		if err != nil {
			fmt.Fprintf(stderr, "mcpkit serve: --redis: %v\n", err)
			return 2
		}
		defer closeBus()
		so.Bus = bus
	}
	s := demo.New(so)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *stdio {
		// Requests are served on their own context, so that on a signal
		// listen streams first end gracefully (Server.Shutdown) and only
		// then is everything else cancelled.
		sctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-ctx.Done()
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
	hs := s.NewHTTPServer(*addr, *path)
	hs.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	url := "http://" + ln.Addr().String() + *path
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
	// Listen streams first: http.Server.Shutdown waits for active
	// handlers, and a listen handler runs until its stream ends.
	if err := s.Shutdown(sctx); err != nil {
		log.Warn("shutdown: listen streams still open", "err", err)
	}
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("shutdown", "err", err)
		return 1
	}
	return 0
}
