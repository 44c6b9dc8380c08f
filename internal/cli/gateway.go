package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/bridge"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

// gatewayCommand is `mcpkit gateway`: the servers of a configuration file
// behind one 2026-07-28 endpoint.
var gatewayCommand = &Command{
	UsageLine: "gateway --config FILE [flags]",
	Short:     "serve many MCP servers (stdio commands or URLs, either era) behind one 2026-07-28 endpoint",
	Long: `Serves the MCP servers a YAML configuration file names behind one revision
2026-07-28 endpoint (and to legacy clients too, as --era says). Each server is
bridged as by mcpkit bridge; its tools and prompts are named SERVER_NAME, its
resources keep their URIs, and the lists are merged. A command backend gets
PATH, HOME, LANG, TMPDIR and its own env (inherit_env: true for all); ${NAME}
in env and headers values comes from the gateway's environment. A bad
configuration is refused naming its line. SIGHUP reloads the file: servers
added start, removed ones stop, changed ones restart, the others keep
running; a bad file on reload is logged and the running configuration stays.
--watch DURATION also reloads when the file's content changed.
See docs/gateway.md.
`,
	Flag:   gatewayFlags,
	Exits:  exitsServe,
	Failed: "the gateway failed: the configuration is bad, a backend did not start, or it cannot listen, or serving failed",
}

func gatewayFlags(fs *flag.FlagSet) Runner {
	front := registerFront(fs)
	config := fs.String("config", "", "the gateway's YAML configuration `FILE` (required)")
	maxSessions := fs.Int("max-sessions", 0, "cap on each backend's sessions (processes, for a command) over all capability keys (0: 16)")
	holdTimeout := fs.Duration("hold-timeout", 0, "how long a backend call waits for the retry that answers its input requests (0: 60s)")
	watch := fs.Duration("watch", 0, "poll the configuration file this often and reload it when it changed (0: only on SIGHUP)")
	advertise := fs.String("advertise-url", "", "this replica's MCP `URL` as the other replicas reach it: a retry that lands on another replica is forwarded here")
	return func(inv *invocation) int {
		if *config == "" {
			return inv.usageError("--config FILE is required")
		}
		if len(inv.args) > 0 || len(inv.command) > 0 {
			return inv.usageError("the servers come from --config, not from arguments")
		}
		if *maxSessions < 0 || *holdTimeout < 0 {
			return inv.usageError("--max-sessions and --hold-timeout cannot be negative")
		}
		ctx, stop := signal.NotifyContext(inv.ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		log := slog.New(slog.NewTextHandler(inv.stderr, nil))
		cfg, err := gateway.Load(*config)
		if err == nil {
			err = front.scopePolicy(*config, cfg)
		}
		if err != nil {
			return inv.fail(&exitError{code: exitUsage, err: err})
		}
		opts, closeFront, err := front.ServerOptions(ctx, log, inv.stderr)
		if err != nil {
			return inv.fail(err)
		}
		defer closeFront()
		var g *gateway.Gateway
		var running atomic.Pointer[gateway.Gateway] // g, for the reloads
		defer func() {
			if g != nil {
				g.Close() // ends the backends
			}
		}()
		stderrOf := func(name string) io.Writer {
			return &stderrLog{log: log.With("backend", name), cmd: name}
		}
		backends := cfg.Backends(stderrOf)
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		var tick <-chan time.Time
		if *watch > 0 {
			t := time.NewTicker(*watch)
			defer t.Stop()
			tick = t.C
		}
		go func() {
			last, _ := os.ReadFile(*config)
			for {
				select {
				case <-ctx.Done():
					return
				case <-hup:
				case <-tick:
					data, err := os.ReadFile(*config)
					if err == nil && bytes.Equal(data, last) {
						continue
					}
				}
				g := running.Load()
				if g == nil {
					continue
				}
				last, _ = os.ReadFile(*config)
				cfg, err := gateway.Load(*config)
				if err == nil {
					err = front.scopePolicy(*config, cfg)
				}
				if err == nil {
					rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
					err = g.Reload(rctx, cfg.Backends(stderrOf), cfg.Prefer)
					cancel()
				}
				if err != nil {
					log.Error("gateway: reload refused; the running configuration stays", "config", *config, "err", err)
					continue
				}
				log.Info("gateway: reloaded", "config", *config, "servers", len(cfg.Servers))
			}
		}()
		newServer := func(o *mcp.ServerOptions) (*mcp.Server, error) {
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			var err error
			g, err = gateway.New(sctx, backends, &gateway.Options{Server: *o, Logger: log, Prefer: cfg.Prefer,
				MaxListTTL: *watch, Bridge: bridge.Options{MaxSessions: *maxSessions, HoldTimeout: *holdTimeout, AdvertiseURL: *advertise, Interceptors: front.backendInterceptors}})
			if err != nil {
				return nil, err
			}
			running.Store(g)
			return g.Server(), nil
		}
		return front.run(ctx, inv, log, "gateway", opts, newServer)
	}
}

// scopePolicy refuses a configuration with scopes when the front gives
// requests no principal (--stdio, or HTTP without --auth-issuer): no
// caller could hold a scope, so the scoped servers would be unusable.
func (f *Front) scopePolicy(file string, cfg *gateway.Config) error {
	if !f.stdio && f.auth.any() {
		return nil
	}
	for _, s := range cfg.Servers {
		if s.ScopesLine == 0 {
			continue
		}
		if f.stdio {
			return fmt.Errorf("%s:%d: server %q: scopes need callers with OAuth access tokens, and a --stdio front has none; serve over HTTP with --auth-issuer, or drop the scopes", file, s.ScopesLine, s.Name)
		}
		return fmt.Errorf("%s:%d: server %q: scopes need callers with OAuth access tokens; add --auth-issuer (and --auth-jwks), or drop the scopes", file, s.ScopesLine, s.Name)
	}
	return nil
}
