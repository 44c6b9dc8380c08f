package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcp"
)

// SessionStoreOptions configures a SessionStore. The zero value gives
// sensible defaults.
type SessionStoreOptions struct {
	// Prefix starts every key of the store. Default "mcpkit:sessions:".
	// Servers share legacy sessions when their stores use the same Redis
	// and the same prefix.
	Prefix string
	// IdleTimeout ends a session that was neither loaded nor stored for
	// this long: Redis expires its key. Set it to the servers'
	// mcp.ServerOptions.Legacy.SessionIdleTimeout. Default 30 minutes;
	// mcp.Off (any negative value) keeps sessions until they are deleted.
	IdleTimeout time.Duration
}

// SessionStore is an mcp.SessionStore on Redis: the state of the legacy
// (2025-11-25 and older) Streamable HTTP sessions of every server that
// uses it lives in Redis, so that any replica answers a request of a
// session another replica opened with initialize. Set it as
// mcp.ServerOptions.Legacy.SessionStore.
//
// Each session is one key holding its mcp.SessionState as JSON, which
// Redis expires after IdleTimeout without a Load or Store (GETEX renews
// it). A session's live parts stay in the process that holds them: the
// GET stream and its resumption, requests in flight, and the server's
// requests awaiting the client's answers. Route a session to one replica
// (hash on the Mcp-Session-Id header) when its clients use those; see
// docs/scaling.md.
//
// A SessionStore is safe for concurrent use and owns nothing: it uses rdb
// and leaves it open.
type SessionStore struct {
	rdb    goredis.UniversalClient
	prefix string
	idle   time.Duration // <= 0: no expiry
}

// NewSessionStore returns a SessionStore that keeps sessions in the Redis
// that rdb connects to. opts may be nil.
func NewSessionStore(rdb goredis.UniversalClient, opts *SessionStoreOptions) *SessionStore {
	var o SessionStoreOptions
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = "mcpkit:sessions:"
	}
	switch {
	case o.IdleTimeout == 0:
		o.IdleTimeout = 30 * time.Minute
	case o.IdleTimeout < 0:
		o.IdleTimeout = 0
	}
	return &SessionStore{rdb: rdb, prefix: o.Prefix, idle: o.IdleTimeout}
}

func (s *SessionStore) key(id string) string { return s.prefix + id }

// Load returns the state of session id and renews its idle timer, or
// mcp.ErrSessionNotFound when Redis does not hold it (unknown or expired).
func (s *SessionStore) Load(ctx context.Context, id string) (*mcp.SessionState, error) {
	var cmd *goredis.StringCmd
	if s.idle > 0 {
		cmd = s.rdb.GetEx(ctx, s.key(id), s.idle)
	} else {
		cmd = s.rdb.Get(ctx, s.key(id))
	}
	b, err := cmd.Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, mcp.ErrSessionNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("redis session store: loading session: %w", err)
	}
	st := new(mcp.SessionState)
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("redis session store: session %q holds no session state: %w", id, err)
	}
	return st, nil
}

// Store saves the state of session id and renews its idle timer.
func (s *SessionStore) Store(ctx context.Context, id string, st *mcp.SessionState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("redis session store: %w", err)
	}
	if err := s.rdb.Set(ctx, s.key(id), b, s.idle).Err(); err != nil {
		return fmt.Errorf("redis session store: saving session: %w", err)
	}
	return nil
}

// Delete ends session id. Deleting an unknown id is not an error.
func (s *SessionStore) Delete(ctx context.Context, id string) error {
	if err := s.rdb.Del(ctx, s.key(id)).Err(); err != nil {
		return fmt.Errorf("redis session store: deleting session: %w", err)
	}
	return nil
}

var _ mcp.SessionStore = (*SessionStore)(nil)
