// Package redis carries mcpkit change notifications between the replicas
// of an MCP server through Redis pub/sub, so that N replicas behind an
// ordinary load balancer (no sticky sessions) behave as one server: a tool
// registered or removed on one replica reaches the subscriptions/listen
// streams open on every replica. TaskStore keeps the tasks of the tasks
// extension in Redis, so that any replica answers tasks/get, tasks/update
// and tasks/cancel for a task another replica runs.
//
// It lives in a nested module so that go-redis stays out of the core
// module's dependencies.
package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcp"
)

// BusOptions configures a Bus. The zero value gives the defaults.
type BusOptions struct {
	// Channel is the Redis pub/sub channel the replicas share. Default
	// "mcpkit:changes". Servers that are not replicas of one another but
	// share a Redis need channels of their own.
	Channel string
	// Logger receives the bus's logs: Redis unreachable, back again,
	// changes dropped. Default slog.Default().
	Logger *slog.Logger
	// MaxPending bounds the changes kept for publishing while Redis is
	// unreachable; past it the oldest are dropped (with a log line).
	// Default 1024.
	MaxPending int
}

// Bus is an mcp.Bus on Redis pub/sub. Publish delivers a change to the
// subscribers in this process at once and sends it to Redis in the
// background; the Bus delivers what the other replicas publish to the
// subscribers here. Give one Bus to every Server of a process
// (ServerOptions.Bus).
//
// While Redis is unreachable the Bus logs it once, keeps local delivery
// working, keeps up to MaxPending changes and publishes them when Redis is
// back, and reconnects with backoff. Changes the other replicas published
// meanwhile may be lost, so after an outage the Bus tells its subscribers
// that every list may have changed (tools, prompts and resources
// list_changed); resource updates missed during an outage cannot be
// recovered. Subscribers are never dropped by an outage.
//
// A Bus is safe for concurrent use. Close stops it.
type Bus struct {
	rdb     goredis.UniversalClient
	owned   bool // Close closes rdb
	channel string
	origin  string // this Bus's id, to skip its own messages
	log     *slog.Logger
	max     int

	local mcp.LocalBus

	mu      sync.Mutex // guards queue and dropped
	queue   []mcp.Change
	dropped int
	wake    chan struct{}

	ready     chan struct{} // closed once first subscribed
	readyOnce sync.Once

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	psMu sync.Mutex
	ps   *goredis.PubSub // the current subscription; Close closes it to end a blocked read
}

// Backoff between reconnection attempts, and how often an idle
// subscription checks that Redis still answers.
var (
	minBackoff  = 50 * time.Millisecond
	maxBackoff  = 2 * time.Second
	healthEvery = 5 * time.Second
)

// NewBus returns a Bus on the Redis client rdb and starts it. The Bus does
// not close rdb. Redis need not be reachable yet: the Bus connects (and
// logs that it cannot) in the background.
func NewBus(rdb goredis.UniversalClient, opts *BusOptions) *Bus {
	var o BusOptions
	if opts != nil {
		o = *opts
	}
	if o.Channel == "" {
		o.Channel = "mcpkit:changes"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 1024
	}
	var id [8]byte
	rand.Read(id[:])
	b := &Bus{
		rdb:     rdb,
		channel: o.Channel,
		origin:  hex.EncodeToString(id[:]),
		log:     o.Logger.With("component", "redis bus", "channel", o.Channel),
		max:     o.MaxPending,
		wake:    make(chan struct{}, 1),
		ready:   make(chan struct{}),
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.wg.Add(2)
	go b.receive()
	go b.send()
	return b
}

// Dial connects a Bus to the Redis server at url (redis://[user:password@]host:port[/db],
// or rediss:// for TLS; see go-redis ParseURL). Close closes the
// connection too.
func Dial(url string, opts *BusOptions) (*Bus, error) {
	o, err := goredis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	b := NewBus(goredis.NewClient(o), opts)
	b.owned = true
	return b, nil
}

// Publish delivers c to the subscribers in this process and queues it for
// the other replicas. It does not wait for Redis.
func (b *Bus) Publish(c mcp.Change) {
	b.local.Publish(c)
	b.mu.Lock()
	for _, q := range b.queue {
		if q == c {
			b.mu.Unlock()
			return // already waiting to go out
		}
	}
	if len(b.queue) >= b.max {
		b.queue = b.queue[1:]
		b.dropped++
	}
	b.queue = append(b.queue, c)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Subscribe calls fn with every change published by this process or by
// another replica on the channel, until the returned function is called.
func (b *Bus) Subscribe(fn func(mcp.Change)) (unsubscribe func()) {
	return b.local.Subscribe(fn)
}

// Ready waits until the Bus has subscribed to its channel on Redis for the
// first time, or ctx is done.
func (b *Bus) Ready(ctx context.Context) error {
	select {
	case <-b.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the Bus: changes not yet sent to Redis are dropped, and the
// Redis client is closed if Dial made it.
func (b *Bus) Close() error {
	b.cancel()
	b.psMu.Lock()
	if b.ps != nil {
		b.ps.Close()
	}
	b.psMu.Unlock()
	b.wg.Wait()
	if b.owned {
		return b.rdb.Close()
	}
	return nil
}

// receive keeps a subscription to the channel open, reconnecting with
// backoff, and delivers the other replicas' changes locally.
func (b *Bus) receive() {
	defer b.wg.Done()
	down := false // an outage was logged
	backoff := minBackoff
	for {
		b.psMu.Lock()
		if b.ctx.Err() != nil {
			b.psMu.Unlock()
			return
		}
		ps := b.rdb.Subscribe(b.ctx, b.channel)
		b.ps = ps
		b.psMu.Unlock()
		err := b.session(ps, &down, &backoff)
		ps.Close()
		if b.ctx.Err() != nil {
			return
		}
		if !down {
			down = true
			b.log.Error("Redis unreachable: change notifications from other replicas are not received until it is back; reconnecting", "err", err)
		}
		if !sleep(b.ctx, backoff) {
			return
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// session reads one subscription until it fails.
func (b *Bus) session(ps *goredis.PubSub, down *bool, backoff *time.Duration) error {
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(b.ctx, healthEvery)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && !pinged && b.ctx.Err() == nil {
				// Idle: check that Redis still answers; the pong (or
				// nothing) comes with the next receive.
				if err := ps.Ping(b.ctx); err != nil {
					return err
				}
				pinged = true
				continue
			}
			return err
		}
		pinged = false
		switch m := msg.(type) {
		case *goredis.Subscription:
			if m.Kind != "subscribe" {
				continue
			}
			*backoff = minBackoff
			if *down {
				*down = false
				b.log.Info("Redis reachable again: listening for changes; telling listeners to re-list, as changes may have been missed")
				for _, k := range []mcp.ChangeKind{mcp.ToolsListChanged, mcp.PromptsListChanged, mcp.ResourcesListChanged} {
					b.local.Publish(mcp.Change{Kind: k})
				}
			}
			b.readyOnce.Do(func() { close(b.ready) })
		case *goredis.Message:
			origin, text, ok := strings.Cut(m.Payload, " ")
			if !ok || origin == b.origin {
				continue
			}
			var c mcp.Change
			if err := c.UnmarshalText([]byte(text)); err != nil {
				b.log.Warn("ignoring a malformed message on the channel", "err", err)
				continue
			}
			b.local.Publish(c)
		}
	}
}

// send publishes queued changes, in order, retrying while Redis is
// unreachable.
func (b *Bus) send() {
	defer b.wg.Done()
	down := false
	backoff := minBackoff
	for {
		b.mu.Lock()
		var c mcp.Change
		n := len(b.queue)
		if n > 0 {
			c = b.queue[0]
		}
		dropped := b.dropped
		b.dropped = 0
		b.mu.Unlock()
		if dropped > 0 {
			b.log.Warn("dropped changes that could not be sent to Redis in time", "dropped", dropped)
		}
		if n == 0 {
			select {
			case <-b.wake:
				continue
			case <-b.ctx.Done():
				return
			}
		}
		text, _ := c.MarshalText()
		err := b.rdb.Publish(b.ctx, b.channel, b.origin+" "+string(text)).Err()
		if err != nil {
			if b.ctx.Err() != nil {
				return
			}
			if !down {
				down = true
				b.log.Error("Redis unreachable: cannot publish changes to the other replicas; keeping them until it is back", "err", err, "waiting", n)
			}
			if !sleep(b.ctx, backoff) {
				return
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		if down {
			down = false
			b.log.Info("Redis reachable again: publishing the changes kept meanwhile", "waiting", n)
		}
		backoff = minBackoff
		b.mu.Lock()
		if len(b.queue) > 0 && b.queue[0] == c {
			b.queue = b.queue[1:]
		}
		b.mu.Unlock()
	}
}

// sleep waits for d, or reports false when ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

var _ mcp.Bus = (*Bus)(nil)
