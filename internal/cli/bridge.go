package cli

import (
	"bytes"
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

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// bridgeCmd runs `mcpkit bridge`: a backend server (a command after --,
// or a URL) served as a 2026-07-28 endpoint.
func bridgeCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return bridgeContext(ctx, args, stdin, stdout, stderr)
}

func bridgeContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpkit bridge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "`HOST:PORT` to listen on (port 0 picks a free port)")
	path := fs.String("path", "/mcp", "URL `PATH` of the MCP endpoint")
	stdio := fs.Bool("stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP")
	keyFile := fs.String("state-key-file", "", "`FILE` holding the keys that seal requestState, one base64 key per line (default: $"+mcp.StateKeysEnv+", else a random per-process key)")
	keepAlive := fs.Duration("keep-alive", 15*time.Second, "interval of SSE keep-alive comments on idle streams (0: none)")
	maxInFlight := fs.Int("max-inflight", 0, "cap on the HTTP requests being handled at once (0: the library default; -1: no cap)")
	maxSessions := fs.Int("max-sessions", 0, "cap on the backend sessions (processes, for a command) over all capability keys (0: 16)")
	holdTimeout := fs.Duration("hold-timeout", 0, "how long a backend call waits for the retry that answers its input requests (0: 60s)")
	backendEra := fs.String("backend-era", "auto", "the backend's era: auto (find out), modern or legacy (initialize even if it answers server/discover)")
	advertise := fs.String("advertise-url", "", "this replica's MCP `URL` as the other replicas reach it: a retry that lands on another replica is forwarded here")
	extensions := fs.String("extensions", "", "comma-separated client `EXTENSIONS` that reach the backend and key its sessions")
	var headers headerFlags
	fs.Var(&headers, "header", "`NAME:VALUE` header sent to a URL backend (repeatable)")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: mcpkit bridge [flags] -- CMD ARGS...\n       mcpkit bridge [flags] URL\n\nServes an MCP server of either era (a stdio command, spawned and supervised, or a URL)\nas a revision 2026-07-28 endpoint. See docs/bridge.md.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	rest := fs.Args()
	dashed := len(args) >= len(rest)+1 && len(rest) > 0 && args[len(args)-len(rest)-1] == "--"
	if len(rest) == 0 || (!dashed && len(rest) != 1) {
		fs.Usage()
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	var backend func() client.Transport
	if dashed {
		argv := rest
		backend = func() client.Transport {
			return &client.CommandTransport{Command: argv[0], Args: argv[1:], Stderr: &stderrLog{log: log, cmd: argv[0]}}
		}
	} else {
		u := rest[0]
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			fmt.Fprintf(stderr, "mcpkit bridge: %q is not an http(s) URL; a command goes after --\n", u)
			return 2
		}
		backend = func() client.Transport { return &client.HTTPTransport{URL: u, Header: headers.h} }
	}
	era := client.AnyEra
	switch *backendEra {
	case "auto":
	case "modern":
		era = client.ModernOnly
	case "legacy":
		era = client.LegacyOnly
	default:
		fmt.Fprintf(stderr, "mcpkit bridge: --backend-era %q: want auto, modern or legacy\n", *backendEra)
		return 2
	}
	keys, err := stateKeys(*keyFile)
	if err != nil {
		fmt.Fprintf(stderr, "mcpkit bridge: state keys: %v\n", err)
		return 2
	}
	so := mcp.ServerOptions{Logger: log, State: mcp.StateOptions{Keys: keys}, HTTP: mcp.HTTPOptions{KeepAlive: *keepAlive}}
	if *keepAlive <= 0 {
		so.HTTP.KeepAlive = mcp.Off
	}
	if *maxInFlight != 0 {
		so.Quotas.MaxInFlightRequests = *maxInFlight
	}
	var exts []string
	for _, e := range strings.Split(*extensions, ",") {
		if e = strings.TrimSpace(e); e != "" {
			exts = append(exts, e)
		}
	}
	if *maxSessions < 0 || *holdTimeout < 0 {
		fmt.Fprintln(stderr, "mcpkit bridge: --max-sessions and --hold-timeout cannot be negative")
		return 2
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	b, err := bridge.New(sctx, &bridge.Options{Backend: backend, Eras: era, Server: so, Logger: log, Extensions: exts,
		MaxSessions: *maxSessions, HoldTimeout: *holdTimeout, AdvertiseURL: *advertise})
	cancel()
	if err != nil {
		// The backend's stderr is in the log already; the error may
		// repeat its end, which is the operator's own.
		fmt.Fprintf(stderr, "mcpkit bridge: %v\n", err)
		return 1
	}
	defer b.Close()
	s := b.Server()
	if *stdio {
		rctx, rcancel := context.WithCancel(ctx)
		defer rcancel()
		log.Info("bridging MCP on stdio", "versions", s.SupportedVersions())
		if err := s.ServeStdio(rctx, stdin, stdout); err != nil && ctx.Err() == nil {
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
	hs := s.NewHTTPServer(*addr, *path)
	hs.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	log.Info("listening", "url", url, "versions", s.SupportedVersions())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		log.Error("serve", "err", err)
		return 1
	case <-ctx.Done():
	}
	tctx, tcancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer tcancel()
	s.Shutdown(tctx)
	if err := hs.Shutdown(tctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("shutdown", "err", err)
		return 1
	}
	return 0
}

// stderrLog logs a backend's stderr, line by line, tagged with its
// command. It never reaches a caller.
type stderrLog struct {
	log     *slog.Logger
	cmd     string
	partial []byte
}

func (w *stderrLog) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.log.Info("backend stderr", "cmd", w.cmd, "line", string(bytes.TrimRight(w.partial[:i], "\r")))
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) > 64<<10 { // a very long line: logged in pieces
		w.log.Info("backend stderr", "cmd", w.cmd, "line", string(w.partial))
		w.partial = nil
	}
	return len(p), nil
}
