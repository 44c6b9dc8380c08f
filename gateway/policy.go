package gateway

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit/mcp"
)

// This file is the per-backend policy that depends on the caller: the
// OAuth scopes a backend's items need (Backend.Scopes, ToolScopes) and the
// rate limit of its calls (Backend.RateLimit).

// MaxRateKeys bounds the callers whose token buckets one backend keeps
// per replica. Past it, the buckets that are full (their callers idle) are
// dropped, at most once a second; the callers that still find no room
// share one bucket, so that many principals cannot grow the gateway's
// memory.
const MaxRateKeys = 10000

// limiter is the token buckets of one backend: one per principal.
type limiter struct {
	limit RateLimit
	every rate.Limit

	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	overflow  *rate.Limiter // the shared bucket past MaxRateKeys
	lastSweep time.Time
}

func newLimiter(rl RateLimit) *limiter {
	if rl.Burst <= 0 {
		rl.Burst = rl.Count
	}
	return &limiter{limit: rl, every: rate.Every(rl.Per / time.Duration(rl.Count)), buckets: map[string]*rate.Limiter{}}
}

// allow takes a token of key's bucket, or returns how long until one is
// there.
func (l *limiter) allow(key string) (bool, time.Duration) {
	now := time.Now()
	l.mu.Lock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= MaxRateKeys && now.Sub(l.lastSweep) >= time.Second {
			l.lastSweep = now
			for k, v := range l.buckets {
				if v.TokensAt(now) >= float64(l.limit.Burst) {
					delete(l.buckets, k)
				}
			}
		}
		if len(l.buckets) < MaxRateKeys {
			b = rate.NewLimiter(l.every, l.limit.Burst)
			l.buckets[key] = b
		} else {
			if l.overflow == nil {
				l.overflow = rate.NewLimiter(l.every, l.limit.Burst)
			}
			b = l.overflow
		}
	}
	l.mu.Unlock()
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// rateLimited is the error of a call past backend b's rate limit.
func (b *backend) rateLimited(wait time.Duration) error {
	rl := b.limits.limit
	data, _ := json.Marshal(map[string]any{"quota": "rateLimit", "backend": b.name, "limit": rl.String(), "burst": rl.Burst})
	return mcp.RateLimited("Rate limit exceeded: this caller may make "+rl.String()+" calls to backend "+b.name+
		" (bursts of "+strconv.Itoa(rl.Burst)+"); retry after "+wait.Round(time.Millisecond).String(), json.RawMessage(data), wait)
}

// hasScopes reports whether p holds every one of scopes (a nil p holds
// none).
func hasScopes(p *mcp.Principal, scopes []string) bool {
	for _, sc := range scopes {
		if !p.HasScope(sc) {
			return false
		}
	}
	return true
}

// toolScopes returns the scopes a backend's tool needs: the backend's
// and the tool's own.
func (b *backend) toolScopes(name string) []string {
	extra := b.toolScope[name]
	if len(extra) == 0 {
		return b.scopes
	}
	return append(slices.Clip(b.scopes), extra...)
}

// scoped reports whether the backend has a scope policy.
func (b *backend) scoped() bool { return len(b.scopes) > 0 || len(b.toolScope) > 0 }

// admit applies the caller-dependent policy of backend b to a call of
// method (tools/call, prompts/get, resources/read, completion/complete),
// tool naming the backend's tool of a tools/call: the scopes (403
// insufficient_scope) and then the rate limit (429).
func (g *router) admit(req *mcp.MethodRequest, b *backend, tool string) error {
	if err := g.checkScopes(req, b, tool); err != nil {
		return err
	}
	if b.limits != nil {
		key := ""
		if p := principal(req); p != nil {
			key = p.ID()
		}
		if ok, wait := b.limits.allow(key); !ok {
			return b.rateLimited(wait)
		}
	}
	return nil
}

// principal is the caller of req, or nil.
func principal(req *mcp.MethodRequest) *mcp.Principal {
	if req.Info == nil {
		return nil
	}
	return req.Info.Principal
}

// checkScopes is the scope half of admit: 403 insufficient_scope when the
// caller lacks a scope the call needs.
func (g *router) checkScopes(req *mcp.MethodRequest, b *backend, tool string) error {
	p := principal(req)
	need := b.scopes
	if req.Method == "tools/call" {
		need = b.toolScopes(tool)
	}
	if len(need) > 0 && !hasScopes(p, need) {
		all := slices.Clone(g.required)
		for _, sc := range need {
			if !slices.Contains(all, sc) {
				all = append(all, sc)
			}
		}
		return mcp.InsufficientScope(all...)
	}
	return nil
}
