package mcp

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"
)

// ReadyChecker is implemented by a Bus, SessionStore or TaskStore that can
// tell whether it can serve: a distributed one whose backend (Redis, say)
// must be reachable. Ready returns nil when it can, and the reason
// otherwise; it should return promptly, within ctx.
type ReadyChecker interface {
	Ready(ctx context.Context) error
}

// ErrShuttingDown is the reason Server.Ready gives once Shutdown has been
// called.
var ErrShuttingDown = errors.New("mcp: the server is shutting down")

// Ready reports whether the server should get traffic: nil when it
// should, and the reason otherwise. It fails from the moment Shutdown is
// called, and while the configured Bus, Legacy.SessionStore or
// Tasks.Store implements ReadyChecker and reports an error, and while one
// of ServerOptions.ReadyChecks reports an error. It is safe for
// concurrent use; ReadinessHandler serves it over HTTP.
func (s *Server) Ready(ctx context.Context) error {
	if s.shuttingDown.Load() {
		return ErrShuttingDown
	}
	for _, c := range []any{s.bus, s.opts.Legacy.SessionStore, s.opts.Tasks.Store} {
		if rc, ok := c.(ReadyChecker); ok {
			if err := rc.Ready(ctx); err != nil {
				return err
			}
		}
	}
	for _, rc := range s.opts.ReadyChecks {
		if err := rc.Ready(ctx); err != nil {
			return err
		}
	}
	return nil
}

// readyTimeout bounds one readiness probe.
const readyTimeout = 2 * time.Second

// LivenessHandler answers a liveness probe (/healthz): 200 "ok" while the
// process serves HTTP at all, shutting down or not.
func (s *Server) LivenessHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write([]byte("ok\n"))
	})
}

// ReadinessHandler answers a readiness probe (/readyz) with Ready: 200
// "ready", or 503 "not ready" while a backend is not ready (each probe
// bounded to 2 seconds), and 503 "not ready: mcp: the server is shutting
// down" from Shutdown on. The backend's reason (which may name its
// address) is not sent to whoever asks: it goes to ServerOptions.Logger,
// at warning level, when it differs from the last one logged, and the
// recovery is logged once too.
func (s *Server) ReadinessHandler() http.Handler {
	var last atomic.Pointer[string] // the reason last logged; nil when ready
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		err := s.Ready(ctx)
		switch {
		case err == nil:
			if last.Swap(nil) != nil {
				s.log.Info("mcp: ready again")
			}
			w.Write([]byte("ready\n"))
		case errors.Is(err, ErrShuttingDown):
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("not ready: " + ErrShuttingDown.Error() + "\n"))
		default:
			reason := logError(err)
			if prev := last.Swap(&reason); prev == nil || *prev != reason {
				s.log.Warn("mcp: not ready", "err", reason)
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("not ready\n"))
		}
	})
}

// mountHealth adds /healthz and /readyz to mux (NewHTTPServer).
func (s *Server) mountHealth(mux *http.ServeMux) {
	mux.Handle("GET /healthz", s.LivenessHandler())
	mux.Handle("GET /readyz", s.ReadinessHandler())
}
