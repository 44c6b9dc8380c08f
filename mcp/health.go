package mcp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/clip"
)

// ReadyChecker is implemented by a Bus, SessionStore or TaskStore that can
// tell whether it can serve: a distributed one whose backend (Redis, say)
// must be reachable. Ready returns nil when it can, and the reason
// otherwise; it should return promptly, within ctx.
type ReadyChecker interface {
	Ready(ctx context.Context) error
}

// ReadyDescriber is a ReadyChecker of ServerOptions.ReadyChecks that also
// describes, for the operator, the parts it checks: a gateway's backends,
// each up or down and why. ReadinessHandler writes the lines DescribeReady
// returns after its own first line ("ready" or "not ready"), whether the
// server is ready or not, except from Shutdown on. The lines go to
// whoever can reach /readyz, so they must not carry secrets (a header
// value, a token, a password in a URL); ReadinessHandler writes at most
// MaxReadyLines of them, each cut to MaxReadyLineBytes with its control
// characters replaced. DescribeReady is called concurrently and should
// return promptly, within ctx.
type ReadyDescriber interface {
	ReadyChecker
	DescribeReady(ctx context.Context) []string
}

// The bounds of the lines of a ReadyDescriber on /readyz.
const (
	MaxReadyLines     = 256
	MaxReadyLineBytes = 512
)

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
// recovery is logged once too. The lines of the ReadyChecks that are
// ReadyDescribers follow "ready" and "not ready", one per line.
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
			w.Write(s.describeReady(ctx, []byte("ready\n")))
		case errors.Is(err, ErrShuttingDown):
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("not ready: " + ErrShuttingDown.Error() + "\n"))
		default:
			reason := logError(err)
			if prev := last.Swap(&reason); prev == nil || *prev != reason {
				s.log.Warn("mcp: not ready", "err", reason)
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write(s.describeReady(ctx, []byte("not ready\n")))
		}
	})
}

// describeReady appends the lines of the ReadyDescribers among
// ServerOptions.ReadyChecks to b, bounded as ReadyDescriber says.
func (s *Server) describeReady(ctx context.Context, b []byte) []byte {
	n := 0
	for _, rc := range s.opts.ReadyChecks {
		d, ok := rc.(ReadyDescriber)
		if !ok {
			continue
		}
		for _, line := range d.DescribeReady(ctx) {
			if n == MaxReadyLines {
				return append(b, "…\n"...)
			}
			n++
			b = append(b, strings.Map(func(r rune) rune {
				if r < 0x20 || r == 0x7f {
					return ' '
				}
				return r
			}, clip.String(line, MaxReadyLineBytes))...)
			b = append(b, '\n')
		}
	}
	return b
}

// mountHealth adds /healthz and /readyz to mux (NewHTTPServer).
func (s *Server) mountHealth(mux *http.ServeMux) {
	mux.Handle("GET /healthz", s.LivenessHandler())
	mux.Handle("GET /readyz", s.ReadinessHandler())
}
