package cli

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// defaultDrain is the default of `serve --drain`: long enough for a load
// balancer probing every second or two to see /readyz fail a few times.
const defaultDrain = 5 * time.Second

// readyProbes wraps the HTTP handler of `serve` and records whether
// anything has asked GET /readyz: only a server whose readiness someone
// watches has a reason to drain. It is also one of the server's
// ReadyChecks: from the moment the signal is handled (draining), Ready
// fails with mcp.ErrShuttingDown, before the drain is logged and without
// waiting for Server.Shutdown, which starts on another goroutine.
type readyProbes struct {
	next     http.Handler
	probed   atomic.Bool
	draining atomic.Bool
}

// Ready implements mcp.ReadyChecker.
func (p *readyProbes) Ready(context.Context) error {
	if p.draining.Load() {
		return mcp.ErrShuttingDown
	}
	return nil
}

func (p *readyProbes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/readyz" {
		p.probed.Store(true)
	}
	p.next.ServeHTTP(w, r)
}

// drainAndShutdown stops the HTTP server of `serve` after a signal. It
// starts s.Shutdown, from which /readyz answers 503 and listen streams get
// their graceful end; then, when /readyz was ever probed, it keeps the
// listener open and serving for the drain window, so that a load balancer
// sees the 503 and stops sending before connections are refused; then it
// closes the listener and waits for the requests in flight
// (http.Server.Shutdown). All of it within drain plus shutdownTimeout. It
// reports whether everything ended in time.
func drainAndShutdown(s *mcp.Server, hs *http.Server, probes *readyProbes, drain time.Duration, log *slog.Logger) bool {
	probes.draining.Store(true)
	sctx, cancel := context.WithTimeout(context.Background(), drain+shutdownTimeout)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(sctx) }()
	if drain > 0 && probes.probed.Load() {
		log.Info("draining: /readyz answers 503 while requests are still served", "drain", drain)
		<-time.After(drain)
	}
	ok := true
	if err := <-shut; err != nil {
		log.Warn("shutdown: listen streams or tasks still running", "err", err)
	}
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("shutdown", "err", err)
		ok = false
	}
	return ok
}
