package redis

import (
	"context"
	"fmt"
)

// Ready reports whether Redis answers a PING now, for readiness probes:
// mcp.Server.Ready (and so /readyz) calls it, since SessionStore
// implements mcp.ReadyChecker.
func (s *SessionStore) Ready(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis session store: %w", err)
	}
	return nil
}

// Ready reports whether Redis answers a PING now, for readiness probes
// (mcp.ReadyChecker).
func (s *TaskStore) Ready(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis task store: %w", err)
	}
	return nil
}
