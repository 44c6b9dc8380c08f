package redis_test

import (
	"context"
	"log"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcp"
	mcpredis "github.com/mcpkit/mcpkit/redis"
)

// Replicas of one MCP server share their tasks through Redis: any replica
// answers tasks/get, tasks/update and tasks/cancel for a task another one
// runs. (This example needs a Redis to talk to, so it has no output to
// check; redis/replicas_test.go runs the same setup against a real
// redis-server.)
func ExampleNewTaskStore() {
	rdb := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	store := mcpredis.NewTaskStore(rdb, &mcpredis.TaskStoreOptions{Prefix: "myserver:tasks:"})
	defer store.Close()

	s := mcp.NewServer(&mcp.ServerOptions{Info: mcp.Implementation{Name: "jobs", Version: "1.0.0"}, Tasks: mcp.TaskOptions{Store: store}})
	mcp.AddTool(s, &mcp.Tool{Name: "reindex", Description: "Rebuilds the search index.", TaskSupport: mcp.TaskRequired},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return "Reindexed.", nil
		})
	hs := s.NewHTTPServer("127.0.0.1:8080", "/mcp")
	defer s.Shutdown(context.Background())
	log.Fatal(hs.ListenAndServe())
}

// Replicas of one MCP server share the sessions of legacy (2025-11-25)
// clients through Redis: any replica serves a request of a session another
// one opened with initialize. (This example needs a Redis to talk to, so it
// has no output to check; redis/replicas_test.go runs the same setup
// against a real redis-server.)
func ExampleNewSessionStore() {
	rdb := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	idle := 10 * time.Minute
	s := mcp.NewServer(&mcp.ServerOptions{
		Info: mcp.Implementation{Name: "notes", Version: "1.0.0"},
		Legacy: mcp.LegacyOptions{
			SessionIdleTimeout: idle,
			SessionStore:       mcpredis.NewSessionStore(rdb, &mcpredis.SessionStoreOptions{IdleTimeout: idle}),
		},
	})
	mcp.AddTool(s, &mcp.Tool{Name: "count", Description: "Counts the notes."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
			return "3 notes", nil
		})
	log.Fatal(s.NewHTTPServer("127.0.0.1:8080", "/mcp").ListenAndServe())
}
