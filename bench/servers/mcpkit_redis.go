//go:build !only_gosdk && !only_mcpgo && !only_floor

package servers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	mcpredis "github.com/mcpkit/mcpkit/redis"
)

// redisBus is the process's Redis bus once setupRedis has connected it
// (nil: the server's own in-process bus).
var redisBus *mcpredis.Bus

func init() {
	dialBus = func(url string) error {
		b, err := mcpredis.Dial(url, &mcpredis.BusOptions{Logger: mcpkitLogger()})
		if err != nil {
			return fmt.Errorf("-redis: %w", err)
		}
		// Subscribed before the URL is printed: a change made on another
		// replica once every replica has started reaches this one.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Ready(ctx); err != nil {
			b.Close()
			return fmt.Errorf("-redis: not subscribed to %s within 10s: %w", url, err)
		}
		redisBus = b
		return nil
	}
}

// mcpkitLogger is the Logger option of the mcpkit server: nothing, but
// for a replica its warnings and errors on stderr (a stream dropped, Redis
// unreachable), which the replicas case shows when a run fails.
func mcpkitLogger() *slog.Logger {
	if RedisURL == "" {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// mcpkitBus is the Bus option of the mcpkit server.
func mcpkitBus() mcp.Bus {
	if redisBus == nil {
		return nil
	}
	return redisBus
}
