package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcp"
)

// TaskStoreOptions configures a TaskStore. The zero value gives sensible
// defaults.
type TaskStoreOptions struct {
	// Prefix starts every key and the channel the store uses. Default
	// "mcpkit:tasks:". Servers share tasks when their stores use the same
	// Redis and the same prefix. On Redis Cluster, put a hash tag in it
	// ("{mcpkit}:tasks:"): the store's scripts touch two keys at once.
	Prefix string
	// MaxTasks bounds the unexpired tasks in the store, shared by every
	// server using it. Past it, Create fails with mcp.ErrTaskStoreFull
	// and the tools/call that would create a task gets error -32603 with
	// HTTP status 503. Default 100000; a negative value means no bound.
	MaxTasks int
	// Logger receives the store's own logs (a lost subscription, for
	// example). Default slog.Default().
	Logger *slog.Logger
}

// DefaultMaxTasks is TaskStoreOptions.MaxTasks' default.
const DefaultMaxTasks = 100000

// TaskStore is an mcp.TaskStore on Redis: the tasks of every server that
// uses it (replicas behind one load balancer) live in Redis, so that any
// replica answers tasks/get, tasks/update and tasks/cancel for a task
// another replica runs. Set it as mcp.ServerOptions.Tasks.Store.
//
// Each task is one key holding its record as JSON, which Redis deletes
// when the task expires; a sorted set indexes the unexpired tasks by
// expiry to enforce MaxTasks. Updates are optimistic transactions (WATCH):
// concurrent updates of one task from several replicas never lose one.
// Cancellations reach the replica running a task by Redis pub/sub; a
// replica that missed one (its connection dropped) notices the cancelled
// status at its next heartbeat (mcp.TaskOptions.Heartbeat).
//
// A TaskStore is safe for concurrent use. Close it when done: it keeps a
// subscription open once a server subscribed.
type TaskStore struct {
	rdb     goredis.UniversalClient
	prefix  string
	channel string
	index   string
	max     int
	log     *slog.Logger

	mu     sync.Mutex
	subs   map[*taskSub]struct{}
	ps     *goredis.PubSub
	closed bool
	done   chan struct{} // closed when the receiving goroutine ends
}

type taskSub struct{ fn func(string) }

// NewTaskStore returns a TaskStore that keeps tasks in the Redis that rdb
// connects to. opts may be nil. The store does not own rdb: closing the
// store leaves rdb open.
func NewTaskStore(rdb goredis.UniversalClient, opts *TaskStoreOptions) *TaskStore {
	var o TaskStoreOptions
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = "mcpkit:tasks:"
	}
	switch {
	case o.MaxTasks == 0:
		o.MaxTasks = DefaultMaxTasks
	case o.MaxTasks < 0:
		o.MaxTasks = 0
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &TaskStore{
		rdb: rdb, prefix: o.Prefix, channel: o.Prefix + "signal", index: o.Prefix + "index",
		max: o.MaxTasks, log: o.Logger, subs: make(map[*taskSub]struct{}),
	}
}

func (s *TaskStore) key(id string) string { return s.prefix + "t:" + id }

// expiryMs returns the expiry of t in Unix milliseconds, or 0 for none.
func expiryMs(t *mcp.TaskRecord) int64 {
	e := t.Expiry()
	if e.IsZero() {
		return 0
	}
	return e.UnixMilli()
}

// createScript stores a new task unless its key exists or the store is
// full, after dropping expired entries from the index.
// KEYS: task key, index. ARGV: now ms, max (0: none), expiry ms (0: none),
// record JSON, id. Returns 1 (created), 0 (exists) or -1 (full).
var createScript = goredis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local max = tonumber(ARGV[2])
if max > 0 and redis.call('ZCARD', KEYS[2]) >= max then return -1 end
local exp = tonumber(ARGV[3])
if exp > 0 then
  redis.call('SET', KEYS[1], ARGV[4], 'PXAT', exp)
  redis.call('ZADD', KEYS[2], exp, ARGV[5])
else
  redis.call('SET', KEYS[1], ARGV[4])
  redis.call('ZADD', KEYS[2], '+inf', ARGV[5])
end
return 1
`)

// Create implements mcp.TaskStore.
func (s *TaskStore) Create(ctx context.Context, t *mcp.TaskRecord) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("redis task store: encoding task %s: %w", t.ID, err)
	}
	n, err := createScript.Run(ctx, s.rdb, []string{s.key(t.ID), s.index},
		time.Now().UnixMilli(), s.max, expiryMs(t), b, t.ID).Int()
	if err != nil {
		return fmt.Errorf("redis task store: creating task %s: %w", t.ID, err)
	}
	switch n {
	case 0:
		return mcp.ErrTaskExists
	case -1:
		return mcp.ErrTaskStoreFull
	}
	return nil
}

// Get implements mcp.TaskStore.
func (s *TaskStore) Get(ctx context.Context, id string) (*mcp.TaskRecord, error) {
	b, err := s.rdb.Get(ctx, s.key(id)).Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, mcp.ErrTaskNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("redis task store: reading task %s: %w", id, err)
	}
	return decodeRecord(id, b)
}

func decodeRecord(id string, b []byte) (*mcp.TaskRecord, error) {
	t := new(mcp.TaskRecord)
	if err := json.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("redis task store: decoding task %s: %w", id, err)
	}
	return t, nil
}

// maxUpdateAttempts bounds the retries of an update that keeps losing the
// race to other updates of the same task.
const maxUpdateAttempts = 100

// Update implements mcp.TaskStore with an optimistic transaction: the task
// key is watched while fn runs, and the write is retried with the newer
// record if another update came first.
func (s *TaskStore) Update(ctx context.Context, id string, fn func(*mcp.TaskRecord) (bool, error)) (*mcp.TaskRecord, error) {
	key := s.key(id)
	for range maxUpdateAttempts {
		var out *mcp.TaskRecord
		var fnErr error
		err := s.rdb.Watch(ctx, func(tx *goredis.Tx) error {
			b, err := tx.Get(ctx, key).Bytes()
			if errors.Is(err, goredis.Nil) {
				return mcp.ErrTaskNotFound
			}
			if err != nil {
				return err
			}
			t, err := decodeRecord(id, b)
			if err != nil {
				return err
			}
			changed, err := fn(t)
			if err != nil {
				fnErr = err
				return err
			}
			if !changed {
				out, _ = decodeRecord(id, b)
				return nil
			}
			t.ID = id
			nb, err := json.Marshal(t)
			if err != nil {
				return fmt.Errorf("redis task store: encoding task %s: %w", id, err)
			}
			exp := expiryMs(t)
			_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
				if exp > 0 {
					p.SetArgs(ctx, key, nb, goredis.SetArgs{ExpireAt: time.UnixMilli(exp)})
					p.ZAdd(ctx, s.index, goredis.Z{Score: float64(exp), Member: id})
				} else {
					p.Set(ctx, key, nb, 0)
					p.ZAdd(ctx, s.index, goredis.Z{Score: math.Inf(1), Member: id})
				}
				return nil
			})
			out = t
			return err
		}, key)
		if errors.Is(err, goredis.TxFailedErr) {
			continue // another update came first: again, with its record
		}
		switch {
		case fnErr != nil:
			return nil, fnErr
		case errors.Is(err, mcp.ErrTaskNotFound):
			return nil, err
		case err != nil:
			return nil, fmt.Errorf("redis task store: updating task %s: %w", id, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("redis task store: updating task %s: gave up after %d conflicting updates", id, maxUpdateAttempts)
}

// Publish implements mcp.TaskStore with Redis PUBLISH.
func (s *TaskStore) Publish(ctx context.Context, id string) error {
	if err := s.rdb.Publish(ctx, s.channel, id).Err(); err != nil {
		return fmt.Errorf("redis task store: publishing task %s: %w", id, err)
	}
	return nil
}

// Subscribe implements mcp.TaskStore. The first subscriber opens the
// store's subscription to its channel; Subscribe returns once Redis
// confirmed it (or after 2 seconds, logging why not: the subscription is
// then retried in the background).
func (s *TaskStore) Subscribe(fn func(string)) func() {
	sub := &taskSub{fn: fn}
	s.mu.Lock()
	s.subs[sub] = struct{}{}
	start := s.ps == nil && !s.closed
	if start {
		s.ps = s.rdb.Subscribe(context.Background())
		s.done = make(chan struct{})
	}
	ps := s.ps
	s.mu.Unlock()
	if start {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if err := ps.Subscribe(ctx, s.channel); err != nil {
			s.log.Warn("redis task store: subscribing; retrying in the background", "channel", s.channel, "err", err)
		} else if _, err := ps.Receive(ctx); err != nil {
			s.log.Warn("redis task store: confirming the subscription", "channel", s.channel, "err", err)
		}
		cancel()
		go s.receive(ps)
	}
	return func() {
		s.mu.Lock()
		delete(s.subs, sub)
		s.mu.Unlock()
	}
}

// receive delivers the ids published on the channel to the subscribers.
// go-redis reconnects and resubscribes by itself after connection loss.
func (s *TaskStore) receive(ps *goredis.PubSub) {
	defer close(s.done)
	for msg := range ps.Channel() {
		s.mu.Lock()
		fns := make([]func(string), 0, len(s.subs))
		for sub := range s.subs {
			fns = append(fns, sub.fn)
		}
		s.mu.Unlock()
		for _, fn := range fns {
			fn(msg.Payload)
		}
	}
}

// Close ends the store's subscription and waits for its goroutine. The
// store must not be used afterwards; rdb stays open.
func (s *TaskStore) Close() error {
	s.mu.Lock()
	ps, done := s.ps, s.done
	s.closed = true
	s.ps = nil
	s.mu.Unlock()
	if ps == nil {
		return nil
	}
	err := ps.Close()
	<-done
	return err
}
