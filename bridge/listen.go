package bridge

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/clip"
	"github.com/mcpkit/mcpkit/mcp"
)

// This file serves the front's listen streams from a modern (2026-07-28)
// backend, which sends its list changes and resource updates only on its
// own subscriptions/listen streams. The bridge opens those streams
// deduplicated, on the shared backend session of the key (the one every
// modern call uses: emptyKey, or the principal's with IsolatePrincipal):
// one stream for list changes per key (the kinds the backend declares
// listChanged for), and one stream per (key, resource URI), each
// reference-counted by the front streams (and legacy front sessions'
// resources/subscribe) that need it. Per-URI streams keep every backend
// request small (a union filter could pass the backend's own limit on the
// URIs of one listen) and never leave a gap while the set of URIs changes.
// With IsolateNone the bridge itself holds the list stream from start-up,
// so its tool schemas and a gateway's listeners (which share the front's
// Bus) learn of list changes with no listener at the bridge. A stream that
// ends (the backend restarted, the network dropped) is reopened on a new
// session with backoff (MinBackoff doubling to MaxBackoff); what arrives
// becomes the front's Changes, scoped to the key's principal.

// streamKey names one backend listen stream: its pool key, and its
// resource URI ("" for the list-changes stream).
type streamKey struct{ key, uri string }

// backendStreams are the backend listen streams of a bridge.
type backendStreams struct {
	mu     sync.Mutex
	m      map[streamKey]*bstream
	closed bool
	wg     sync.WaitGroup
}

// bstream is one backend listen stream, run by a goroutine of its own.
type bstream struct {
	refs   int // guarded by backendStreams.mu
	cancel context.CancelFunc
	// ready is closed at the stream's first acknowledgement, or when its
	// first attempt failed (err set, the stream gone from the map).
	ready chan struct{}
	err   error
}

// errStreamsClosed refuses a stream once the bridge is closed.
var errStreamsClosed = mcp.Unavailable("Server shutting down")

// hold takes a reference on the stream k, starting it if needed. release
// drops the reference (once); the last one stops the stream.
func (b *Bridge) hold(k streamKey) (st *bstream, release func(), err error) {
	t := &b.streams
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, nil, errStreamsClosed
	}
	if t.m == nil {
		t.m = map[streamKey]*bstream{}
	}
	st = t.m[k]
	if st == nil {
		if len(t.m) >= b.opts.MaxListenStreams {
			return nil, nil, mcp.Unavailable("Server busy: the bridge has " + strconv.Itoa(b.opts.MaxListenStreams) + " backend listen streams open (MaxListenStreams); retry later")
		}
		ctx, cancel := context.WithCancel(context.Background())
		st = &bstream{cancel: cancel, ready: make(chan struct{})}
		t.m[k] = st
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			b.runStream(ctx, k, st)
		}()
	}
	st.refs++
	var once sync.Once
	return st, func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if st.refs--; st.refs == 0 {
				if t.m[k] == st {
					delete(t.m, k)
				}
				st.cancel()
			}
		})
	}, nil
}

// closeStreams stops every backend listen stream and waits for them.
func (b *Bridge) closeStreams() {
	t := &b.streams
	t.mu.Lock()
	t.closed = true
	for k, st := range t.m {
		st.cancel()
		delete(t.m, k)
	}
	t.mu.Unlock()
	t.wg.Wait()
}

// observeModern is ListenOptions.Observe for a modern backend: it holds
// the backend streams the granted filter needs, waits for those that are
// new to be acknowledged, and returns what releases them.
func (b *Bridge) observeModern(ctx context.Context, info *mcp.RequestInfo, granted mcp.SubscriptionFilter) (func(), error) {
	var keys []streamKey
	key, err := b.scoped(info, emptyKey)
	if err != nil {
		return nil, err
	}
	if granted.ToolsListChanged || granted.PromptsListChanged || granted.ResourcesListChanged {
		keys = append(keys, streamKey{key: key})
	}
	for _, u := range slices.Compact(slices.Sorted(slices.Values(granted.ResourceSubscriptions))) {
		keys = append(keys, streamKey{key: key, uri: u})
	}
	if len(keys) == 0 {
		return nil, nil
	}
	var releases []func()
	end := func() {
		for _, r := range releases {
			r()
		}
	}
	var held []*bstream
	for _, k := range keys {
		st, release, err := b.hold(k)
		if err != nil {
			end()
			return nil, err
		}
		held = append(held, st)
		releases = append(releases, release)
	}
	for _, st := range held {
		select {
		case <-st.ready:
			if st.err != nil {
				end()
				return nil, st.err
			}
		case <-ctx.Done():
			end()
			return nil, ctx.Err()
		}
	}
	return end, nil
}

// listFilter is the backend filter of a list-changes stream: the kinds
// the backend declares listChanged for.
func (b *Bridge) listFilter() client.ListenFilter {
	b.mu.Lock()
	probe := b.probe
	b.mu.Unlock()
	var f client.ListenFilter
	if probe == nil {
		return f
	}
	c := probe.Capabilities()
	f.ToolsListChanged = c.Tools != nil && c.Tools.ListChanged
	f.PromptsListChanged = c.Prompts != nil && c.Prompts.ListChanged
	f.ResourcesListChanged = c.Resources != nil && c.Resources.ListChanged
	return f
}

// runStream runs the backend stream k until ctx ends, reopening it with
// backoff. A first attempt that fails before an acknowledgement refuses
// the front streams waiting for it and ends the stream.
func (b *Bridge) runStream(ctx context.Context, k streamKey, st *bstream) {
	backoff := b.opts.MinBackoff
	first := true
	for {
		acked, err := b.listenOnce(ctx, k, st, first)
		if ctx.Err() != nil {
			if first && !acked {
				st.err = errStreamsClosed
				close(st.ready)
			}
			return
		}
		if first && !acked {
			t := &b.streams
			t.mu.Lock()
			if t.m[k] == st {
				delete(t.m, k)
			}
			t.mu.Unlock()
			st.err = err
			close(st.ready)
			return
		}
		if acked {
			first = false
			backoff = b.opts.MinBackoff
		}
		b.log.Warn("bridge: a backend listen stream ended; reopening", "uri", clip.String(k.uri, 256), "err", clip.String(err.Error(), 256), "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, b.opts.MaxBackoff)
	}
}

// errSessionEnded ends a backend listen stream whose session ended.
var errSessionEnded = errors.New("the backend session ended")

// listenOnce runs the backend stream k on a shared session of its key
// until the stream or the session ends, and reports whether it was
// acknowledged; the first acknowledgement of the first attempt closes
// st.ready.
func (b *Bridge) listenOnce(ctx context.Context, k streamKey, st *bstream, first bool) (acked bool, err error) {
	s, err := b.pool.acquire(ctx, k.key, mcp.ClientCapabilities{}, false)
	if err != nil {
		return false, err
	}
	defer b.pool.release(s)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	f := client.ListenFilter{}
	if k.uri == "" {
		f = b.listFilter()
	} else {
		f.ResourceSubscriptions = []string{k.uri}
	}
	scope := keyScope(k.key)
	for ev, err := range s.c.Listen(ctx, f) {
		if err != nil {
			if s.ended() {
				return acked, errSessionEnded
			}
			return acked, b.backendError(ctx, s, err)
		}
		if ev.Acknowledged != nil {
			if !acked && first {
				close(st.ready)
			}
			acked = true
			continue
		}
		b.onNotification(ev.Notification, scope)
	}
	if s.ended() {
		return acked, errSessionEnded
	}
	return acked, errors.New("the backend ended the stream")
}
