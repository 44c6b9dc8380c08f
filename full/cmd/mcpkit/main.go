// Command mcpkit is the full build of the mcpkit command-line tool: the
// same command as github.com/mcpkit/mcpkit/cmd/mcpkit, plus
//
//	mcpkit serve --redis redis://HOST:PORT   replicas share change notifications, tasks and legacy sessions through Redis
//
// and OpenTelemetry for `mcpkit serve`, configured by the standard
// environment variables (see docs/observability.md):
//
//	OTEL_TRACES_EXPORTER=console|otlp|none     spans (console: to stderr); unset means none
//	OTEL_METRICS_EXPORTER=console|otlp|prometheus|none
//	OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf or grpc)
//	OTEL_EXPORTER_PROMETHEUS_HOST, OTEL_EXPORTER_PROMETHEUS_PORT (default localhost:9464, path /metrics)
//	OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
//
// It is built from this nested module so that the core module depends on
// neither go-redis nor OpenTelemetry. Run `mcpkit help` for details.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/internal/cli"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/redis"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, &cli.Options{Redis: dialRedis, Telemetry: setupTelemetry}))
}

// dialRedis connects `mcpkit serve --redis URL` to Redis: a Bus for change
// notifications, a TaskStore for tasks and a SessionStore for legacy
// sessions, on one client, set in opts. An unreachable Redis is not fatal:
// the bus logs it, the server serves on, and the bus connects when Redis
// comes up (task calls and legacy sessions fail with 503 meanwhile).
func dialRedis(url string, log *slog.Logger, opts *mcp.ServerOptions) (func(), error) {
	// go-redis logs every failed dial on its own; the bus says once, in
	// plain words, that Redis is unreachable. Keep go-redis's lines for
	// debug level.
	goredis.SetLogger(debugLogger{log})
	o, err := goredis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	rdb := goredis.NewClient(o)
	b := redis.NewBus(rdb, &redis.BusOptions{Logger: log})
	tasks := redis.NewTaskStore(rdb, &redis.TaskStoreOptions{Logger: log})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if b.Ready(ctx) == nil {
		log.Info("redis bus: listening for changes from other replicas")
	}
	opts.Bus = b
	opts.Tasks.Store = tasks
	opts.Legacy.SessionStore = redis.NewSessionStore(rdb, &redis.SessionStoreOptions{IdleTimeout: opts.Legacy.SessionIdleTimeout})
	return func() {
		tasks.Close()
		b.Close()
		rdb.Close()
	}, nil
}

// debugLogger sends go-redis's log lines to slog at debug level.
type debugLogger struct{ log *slog.Logger }

func (l debugLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}
