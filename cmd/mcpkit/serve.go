package main

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
)

// shutdownTimeout bounds how long in-flight requests may run after a
// signal.
const shutdownTimeout = 10 * time.Second

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpkit serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "`HOST:PORT` to listen on (port 0 picks a free port)")
	path := fs.String("path", "/mcp", "URL `PATH` of the MCP endpoint")
	stdio := fs.Bool("stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP")
	keyFile := fs.String("state-key-file", "", "`FILE` holding the keys that seal requestState, one base64 key per line, the first one sealing\n(default: $"+mcp.StateKeysEnv+", else a random per-process key; replicas need a shared key)")
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
	opts := &mcp.ServerOptions{Logger: log}
	keys, err := stateKeys(*keyFile)
	if err != nil {
		log.Error("state keys", "err", err)
		return 2
	}
	opts.StateKeys = keys
	s := demo.New(opts)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *stdio {
		log.Info("serving MCP on stdio", "server", demo.Name, "versions", s.SupportedVersions())
		if err := s.ServeStdio(ctx, stdin, stdout); err != nil {
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
