package bridge

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// This file relays resource subscriptions. A front listen stream's
// resourceSubscriptions become the backend's resources/subscribe, one per
// (key, URI) however many streams name it, on a shared backend session of
// the caller's key that the subscriptions keep leased (so it is neither
// evicted nor closed while any stream needs it, and counts against
// MaxSessions). The last stream naming a URI to end unsubscribes it; the
// last stream of a key releases the session. The backend's
// notifications/resources/updated reach the front's streams through
// onNotification and the front's Bus.

// unsubscribeTimeout bounds a backend resources/unsubscribe sent as the
// last stream naming the URI ends.
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
	s    *session   // shared lease, held while uris is not empty
	uris map[string]int
}

// observeListen is the front's ListenOptions.Observe: it subscribes the
// backend to the stream's granted resourceSubscriptions and returns what
// unsubscribes them.
func (b *Bridge) observeListen(ctx context.Context, info *mcp.RequestInfo, granted mcp.SubscriptionFilter) (func(), error) {
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
		ks = &keySubs{uris: map[string]int{}}
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
	if ks.s != nil && ks.s.ended() {
		// Its backend exited: what it held is gone with it.
		b.pool.release(ks.s)
		ks.s, ks.uris = nil, map[string]int{}
	}
	if ks.s == nil {
		s, err := b.pool.acquire(ctx, key, caps, false)
		if err != nil {
			done()
			return nil, err
		}
		ks.s = s
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

// unsubscribe drops a reference on each of uris, unsubscribing the
// backend from those no stream names any more, and releases the session
// when none is left. Callers hold ks.mu.
func (b *Bridge) unsubscribe(ks *keySubs, uris []string) {
	if ks.s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
	defer cancel()
	for _, u := range uris {
		if ks.uris[u] == 0 {
			continue // the session was replaced since
		}
		if ks.uris[u]--; ks.uris[u] > 0 {
			continue
		}
		delete(ks.uris, u)
		if !ks.s.ended() {
			if _, err := ks.s.c.Call(ctx, "resources/unsubscribe", map[string]any{"uri": u}); err != nil {
				b.log.Warn("bridge: unsubscribing the backend failed", "uri", u, "err", err)
			}
		}
	}
	if len(ks.uris) == 0 {
		b.pool.release(ks.s)
		ks.s = nil
	}
}
