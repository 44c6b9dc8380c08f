package bridge

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/clip"
	"github.com/mcpkit/mcpkit/mcp"
)

// This file relays resource subscriptions to a legacy backend. A front
// listen stream's resourceSubscriptions become the backend's
// resources/subscribe, one per (key, URI) however many streams name it, on
// a shared backend session of the caller's key that the subscriptions keep
// leased (so it is neither evicted nor closed while any stream needs it,
// and counts against MaxSessions). The last stream naming a URI to end
// unsubscribes it; the last stream of a key releases the session. When the
// session ends (the backend restarted), every URI still named is
// subscribed again on a new session of the key, with backoff until that
// succeeds. The backend's notifications/resources/updated reach the
// front's streams through onNotification and the front's Bus. (A modern
// backend's subscriptions are listen streams: listen.go.)

// unsubscribeTimeout bounds a backend resources/unsubscribe sent as the
// last stream naming the URI ends, and each resources/subscribe of a
// renewal.
const unsubscribeTimeout = 5 * time.Second

// subscriptions are the backend subscriptions of the front's listen
// streams, by key.
type subscriptions struct {
	mu    sync.Mutex
	byKey map[string]*keySubs
}

// keySubs are the subscriptions of one key: the session they live on and
// how many streams name each URI.
type keySubs struct {
	streams int // guarded by subscriptions.mu

	mu   sync.Mutex // serializes the backend calls of this key
	key  string
	caps mcp.ClientCapabilities
	s    *session // shared lease, held while uris is not empty; nil while renewing
	// unwatch stops the watcher of s when the key lets s go.
	unwatch chan struct{}
	uris    map[string]int
}

// observeListen is the front's ListenOptions.Observe: it subscribes the
// backend to the stream's granted resourceSubscriptions and returns what
// unsubscribes them.
func (b *Bridge) observeListen(ctx context.Context, info *mcp.RequestInfo, granted mcp.SubscriptionFilter) (func(), error) {
	if b.modern.Load() {
		return b.observeModern(ctx, info, granted)
	}
	uris := slices.Compact(slices.Sorted(slices.Values(granted.ResourceSubscriptions)))
	if len(uris) == 0 {
		return nil, nil
	}
	key, caps, err := b.route(info)
	if err != nil {
		return nil, err
	}
	t := &b.subs
	t.mu.Lock()
	if t.byKey == nil {
		t.byKey = map[string]*keySubs{}
	}
	ks := t.byKey[key]
	if ks == nil {
		ks = &keySubs{key: key, caps: caps, uris: map[string]int{}}
		t.byKey[key] = ks
	}
	ks.streams++
	t.mu.Unlock()
	done := func() {
		t.mu.Lock()
		if ks.streams--; ks.streams == 0 {
			delete(t.byKey, key)
		}
		t.mu.Unlock()
	}

	ks.mu.Lock()
	defer ks.mu.Unlock()
	if err := b.attach(ctx, ks); err != nil {
		done()
		return nil, err
	}
	var taken []string
	for _, u := range uris {
		if ks.uris[u] == 0 {
			if _, err := ks.s.c.Call(ctx, "resources/subscribe", map[string]any{"uri": u}); err != nil {
				err = b.backendError(ctx, ks.s, err)
				b.unsubscribe(ks, taken)
				done()
				return nil, err
			}
		}
		ks.uris[u]++
		taken = append(taken, u)
	}
	return func() {
		ks.mu.Lock()
		b.unsubscribe(ks, uris)
		ks.mu.Unlock()
		done()
	}, nil
}

// attach makes sure ks has a live session: when its session ended (the
// backend restarted), it leases a new one and subscribes it to every URI
// still named. Callers hold ks.mu.
func (b *Bridge) attach(ctx context.Context, ks *keySubs) error {
	if ks.s != nil && !ks.s.ended() {
		return nil
	}
	if ks.s != nil {
		// Its watcher renews too, and stops on seeing ks.s replaced.
		b.pool.release(ks.s)
		ks.s = nil
	}
	s, err := b.pool.acquire(ctx, ks.key, ks.caps, false)
	if err != nil {
		return err
	}
	for _, u := range slices.Sorted(maps.Keys(ks.uris)) {
		cctx, cancel := context.WithTimeout(ctx, unsubscribeTimeout)
		_, err := s.c.Call(cctx, "resources/subscribe", map[string]any{"uri": u})
		cancel()
		if err != nil {
			err = b.backendError(ctx, s, err)
			b.pool.release(s)
			return err
		}
	}
	ks.s, ks.unwatch = s, make(chan struct{})
	go b.watchSubs(ks, s, ks.unwatch)
	return nil
}

// watchSubs renews the subscriptions of ks when its session s ends, with
// backoff, until a new session holds them, ks lets them go, or the bridge
// closes.
func (b *Bridge) watchSubs(ks *keySubs, s *session, unwatch <-chan struct{}) {
	select {
	case <-s.done:
	case <-unwatch:
		return
	case <-b.life.Done():
		return
	}
	backoff := b.opts.MinBackoff
	for {
		ks.mu.Lock()
		if (ks.s != nil && ks.s != s) || (ks.s == nil && len(ks.uris) == 0) {
			ks.mu.Unlock()
			return // renewed by a new stream, or not needed any more
		}
		ctx, cancel := context.WithTimeout(b.life, b.opts.LeaseWait+unsubscribeTimeout)
		err := b.attach(ctx, ks)
		cancel()
		n := len(ks.uris)
		ks.mu.Unlock()
		if err == nil {
			b.log.Info("bridge: backend subscriptions renewed on a new session", "uris", n)
			return
		}
		if b.life.Err() != nil {
			return
		}
		b.log.Warn("bridge: renewing backend subscriptions failed", "err", clip.String(err.Error(), 256), "retry_in", backoff)
		select {
		case <-b.life.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, b.opts.MaxBackoff)
	}
}

// unsubscribe drops a reference on each of uris, unsubscribing the
// backend from those no stream names any more, and releases the session
// when none is left. Callers hold ks.mu.
func (b *Bridge) unsubscribe(ks *keySubs, uris []string) {
	ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
	defer cancel()
	for _, u := range uris {
		if ks.uris[u] == 0 {
			continue
		}
		if ks.uris[u]--; ks.uris[u] > 0 {
			continue
		}
		delete(ks.uris, u)
		if ks.s != nil && !ks.s.ended() {
			if _, err := ks.s.c.Call(ctx, "resources/unsubscribe", map[string]any{"uri": u}); err != nil {
				b.log.Warn("bridge: unsubscribing the backend failed", "uri", clip.String(u, 256), "err", clip.String(err.Error(), 256))
			}
		}
	}
	if len(ks.uris) == 0 && ks.s != nil {
		close(ks.unwatch)
		b.pool.release(ks.s)
		ks.s = nil
	}
}

// Subscribe subscribes the backend to the resource uri for a caller
// described by info, as a front listen stream naming uri alone does: on a
// legacy backend with resources/subscribe on a shared session of the
// caller's key, on a modern one with a listen stream of its own, either
// reference-counted with the front's own streams and legacy sessions, and
// renewed when the backend restarts. The backend's
// notifications/resources/updated for uri become the front's Changes (on
// its Bus; scoped to the caller's principal with IsolatePrincipal). It is
// for a server that routes subscriptions to this bridge from a front of
// its own (the gateway package). It returns an error, and subscribes
// nothing, when the backend does not declare resources.subscribe, when uri
// is empty, or when the backend refuses; end, called once, drops the
// reference (the last one unsubscribes the backend). ctx bounds the
// subscribe only. It is safe for concurrent use.
func (b *Bridge) Subscribe(ctx context.Context, info *mcp.RequestInfo, uri string) (end func(), err error) {
	if uri == "" {
		return nil, mcp.InvalidParams("Invalid params: uri must be a non-empty string")
	}
	if r := b.Describe().Capabilities.Resources; r == nil || !r.Subscribe {
		return nil, mcp.InvalidParams("Invalid params: the server does not support resource subscriptions")
	}
	if info == nil {
		info = &mcp.RequestInfo{}
	}
	release, err := b.observeListen(ctx, info, mcp.SubscriptionFilter{ResourceSubscriptions: []string{uri}})
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if release != nil {
				release()
			}
		})
	}, nil
}
